-- brain_eval_question_score_write_v1: question rows join only runs in progress, with the
-- automatic fields (type and stale-fixture flag as the run's catalog says, where it is loaded) and
-- an analysis that is this run's brain, model and prompt answering this question; the reviewer's fields are NULL at insert and afterwards only the run's own reviewer
-- enters them, until completion. A harness run's rows are the database's, made from the brain's
-- answers (brain_eval_harness_question_v1). question_passed is always computed. SECURITY INVOKER:
-- current_user is the reviewer, or the code role when the harness trigger inserts.
CREATE FUNCTION evalledger.brain_eval_question_score_write_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    judged_by jsonb;
    analysis evalledger.brain_analysis_log;
    changed text;
    supplied text;
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
        -- Where the run's catalog is loaded, a question is one of it, as the catalog describes it.
        IF EXISTS (SELECT 1 FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = run.question_catalog_version)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_catalog_question c
                            WHERE c.catalog_version = run.question_catalog_version AND c.question_id = NEW.question_id
                              AND c.question_type = NEW.question_type
                              AND c.uses_stale_fixture = NEW.uses_stale_fixture) THEN
            RAISE EXCEPTION 'evalledger: catalog % has no question % of type % with uses_stale_fixture %',
                    run.question_catalog_version, NEW.question_id, NEW.question_type, NEW.uses_stale_fixture
                USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_question_score_as_its_catalog_says',
                      HINT = 'the question type and stale-fixture flag are the catalog''s (evalledger catalog show)';
        END IF;
        NEW.created_at := now();
        NEW.run_created_at := run.created_at;
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

    -- At INSERT the reviewer's fields are all missing, so nothing is decided yet.
    IF TG_OP = 'UPDATE' THEN
        judged_by := evalledger.brain_eval_question_policy_v1(NEW.eval_run_id, NEW.question_id);
        NEW.question_passed := evalledger.question_passes_v1(NEW, judged_by -> 'policy', run.brain_under_test,
                                                             judged_by -> 'criteria');
    END IF;
    RETURN NEW;
END;
$$;
