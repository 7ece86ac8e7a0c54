-- brain_eval_question_score_write_v4: brain_eval_question_score_write_v3 without the part that reads
-- what a row is judged by (issue 17, class 8): on UPDATE it checks only who may change what, and the
-- row is then judged by brain_eval_question_score_judge_v1, the next BEFORE UPDATE trigger, which
-- reads the question's pass thresholds with the code role's rights so that the reviewer never can.
-- As v3: question rows join only runs in progress, as the run's loaded catalog describes the
-- question, with an analysis that is this run's brain, model and prompt answering this question
-- since the run started. The automatic fields are the database's: citation rate, confidence
-- distribution and lever violations are computed here from the analysis (its claims, the sources the
-- catalog gives the question, its proposed actions, and the lever enum of the prompt's lever-mapped
-- brain: brain_eval_answer_scores_v1, as for a harness answer), and a supplied value that disagrees
-- is refused. The reviewer's fields are NULL at insert; afterwards only the run's own reviewer enters
-- them, until completion. A row carries its run's clock and reviewer, stamped at insert from the run.
-- A harness run's rows are the database's, made from the brain's answers
-- (brain_eval_harness_question_v1). SECURITY INVOKER: current_user is the reviewer, or the code role
-- when the harness trigger inserts.
CREATE FUNCTION evalledger.brain_eval_question_score_write_v4() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    analysis evalledger.brain_analysis_log;
    asked evalledger.brain_eval_catalog_question;
    computed jsonb;
    policy jsonb;
    changed text;
    supplied text;
    disagrees text;
BEGIN
    PERFORM evalledger.lock_run_v1(NEW.eval_run_id);
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF NOT FOUND THEN
        -- Not left to the foreign key: session_replication_role = replica skips that check.
        RAISE EXCEPTION 'evalledger: no run %: a question row belongs to a run', NEW.eval_run_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'eval_run_id',
                  CONSTRAINT = 'brain_eval_question_score_run_fkey';
    END IF;
    IF run.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: run % is complete: its question rows are final', run.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    IF TG_OP = 'INSERT' THEN
        PERFORM evalledger.refuse_supplied_v1('brain_eval_question_score',
                                   jsonb_build_object('question_passed', NEW.question_passed));
        supplied := concat_ws(', ',
            CASE WHEN NEW.hallucinations_detected IS NOT NULL THEN 'hallucinations_detected' END,
            CASE WHEN NEW.total_claims IS NOT NULL THEN 'total_claims' END,
            CASE WHEN NEW.staleness_correctly_recognized IS NOT NULL THEN 'staleness_correctly_recognized' END,
            CASE WHEN NEW.diagnosis_accuracy_score IS NOT NULL THEN 'diagnosis_accuracy_score' END,
            CASE WHEN NEW.narrative_coherence_rating IS NOT NULL THEN 'narrative_coherence_rating' END,
            CASE WHEN NEW.reviewer_comments IS NOT NULL THEN 'reviewer_comments' END);
        IF supplied <> '' THEN
            RAISE EXCEPTION 'evalledger: brain_eval_question_score.% is the reviewer''s to enter, not the runner''s', supplied
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'insert the question row without it; the run''s reviewer enters it (evalledger review score)';
        END IF;
        IF current_user <> 'evalledger_code'
           AND EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_run h WHERE h.eval_run_id = run.eval_run_id) THEN
            RAISE EXCEPTION 'evalledger: run % is a harness run: its question rows come from the brain''s answers', run.eval_run_id
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'insert the answer (brain_eval_harness_answer); the database makes its question row';
        END IF;
        SELECT a.* INTO analysis FROM evalledger.brain_analysis_log a WHERE a.analysis_id = NEW.brain_analysis_id;
        IF analysis.analysis_id IS NULL OR analysis.origin <> 'eval' OR analysis.brain <> run.brain_under_test
           OR analysis.model_id <> run.model_id OR analysis.system_prompt_hash <> run.system_prompt_hash
           OR analysis.question_id IS DISTINCT FROM NEW.question_id THEN
            RAISE EXCEPTION 'evalledger: analysis % is not an eval answer of run %''s brain, model and prompt to %',
                    NEW.brain_analysis_id, run.eval_run_id, NEW.question_id
                USING ERRCODE = 'check_violation', COLUMN = 'brain_analysis_id',
                      CONSTRAINT = 'brain_eval_question_score_analysis_of_the_run';
        END IF;
        IF analysis.produced_at < run.started_at THEN
            RAISE EXCEPTION 'evalledger: analysis % was produced at %, before run % started at %', NEW.brain_analysis_id,
                    to_char(analysis.produced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), run.eval_run_id,
                    to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                USING ERRCODE = 'check_violation', COLUMN = 'brain_analysis_id',
                      CONSTRAINT = 'brain_eval_question_score_analysis_during_the_run';
        END IF;
        -- The run's catalog is loaded (its admission requires it): a question is one of it, as the
        -- catalog describes it.
        SELECT c.* INTO asked FROM evalledger.brain_eval_catalog_question c
         WHERE c.catalog_version = run.question_catalog_version AND c.question_id = NEW.question_id
           AND c.question_type = NEW.question_type AND c.uses_stale_fixture = NEW.uses_stale_fixture;
        IF asked.question_id IS NULL THEN
            RAISE EXCEPTION 'evalledger: catalog % has no question % of type % with uses_stale_fixture %',
                    run.question_catalog_version, NEW.question_id, NEW.question_type, NEW.uses_stale_fixture
                USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_question_score_as_its_catalog_says',
                      HINT = 'the question type and stale-fixture flag are the catalog''s (evalledger catalog show)';
        END IF;
        IF current_user <> 'evalledger_code' THEN
            disagrees := evalledger.brain_eval_claims_problem_v1(analysis.claims);
            IF disagrees IS NOT NULL THEN
                RAISE EXCEPTION 'evalledger: analysis % cannot be scored: %', NEW.brain_analysis_id, disagrees
                    USING ERRCODE = 'check_violation', COLUMN = 'brain_analysis_id',
                          CONSTRAINT = 'brain_eval_question_score_answer_scorable',
                          HINT = 'the database computes citation rate and confidence from the answer''s claims';
            END IF;
            SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
            computed := evalledger.brain_eval_answer_scores_v1(
                analysis.claims, asked.sources, analysis.proposed_actions,
                evalledger.brain_eval_levers_v1(run.brain_under_test, run.system_prompt_hash, policy), false);
            SELECT string_agg(format('%s %s (the answer gives %s)', f.field, f.supplied, f.computed), ', ' ORDER BY f.n)
              INTO disagrees
              FROM (VALUES
                      (1, 'citation_rate', to_jsonb(NEW.citation_rate), computed -> 'citation_rate'),
                      (2, 'confidence_distribution', to_jsonb(NEW.confidence_distribution), computed -> 'confidence_distribution'),
                      (3, 'lever_mapping_violations', to_jsonb(NEW.lever_mapping_violations),
                       computed -> 'lever_mapping_violations')) AS f(n, field, supplied, computed)
             WHERE f.supplied IS NOT NULL AND f.supplied <> 'null'::jsonb AND f.supplied <> f.computed;
            IF disagrees IS NOT NULL THEN
                RAISE EXCEPTION 'evalledger: brain_eval_question_score.%: computed by the database from the answer',
                        disagrees
                    USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_question_score_automatic_scores_computed',
                          HINT = 'leave the automatic scores out, or give what the answer''s claims and actions give';
            END IF;
            NEW.citation_rate := (computed ->> 'citation_rate')::numeric;
            NEW.confidence_distribution := computed -> 'confidence_distribution';
            NEW.lever_mapping_violations := (computed ->> 'lever_mapping_violations')::integer;
        END IF;
        NEW.created_at := now();
        NEW.run_created_at := run.created_at;
        NEW.run_reviewer_user_id := run.reviewer_user_id;
    ELSE
        changed := evalledger.changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY[
            'hallucinations_detected', 'total_claims', 'staleness_correctly_recognized', 'diagnosis_accuracy_score',
            'narrative_coherence_rating', 'reviewer_comments']);
        IF changed IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: only reviewer-scored fields of a question row change, not %', changed
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF evalledger.reviewer_id_of_v1(current_user) IS DISTINCT FROM run.reviewer_user_id THEN
            RAISE EXCEPTION 'evalledger: only the run''s reviewer scores its questions'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_question_score_10_write BEFORE INSERT OR UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v4();
