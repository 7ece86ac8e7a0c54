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
    policy jsonb;
    criteria jsonb;
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
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;

    IF TG_OP = 'INSERT' THEN
        PERFORM evalledger.refuse_supplied_v1('brain_eval_question_score',
                                   jsonb_build_object('question_passed', NEW.question_passed));
        SELECT string_agg(f, ', ' ORDER BY o) INTO supplied
          FROM unnest(ARRAY['hallucinations_detected', 'total_claims', 'staleness_correctly_recognized',
                            'diagnosis_accuracy_score', 'narrative_coherence_rating', 'reviewer_comments'])
               WITH ORDINALITY AS x(f, o)
         WHERE to_jsonb(NEW) -> f <> 'null'::jsonb;
        IF supplied IS NOT NULL THEN
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

    SELECT c.pass_criteria || jsonb_build_object('answer_broke_contract', a.contract_error IS NOT NULL)
      INTO criteria
      FROM evalledger.brain_eval_harness_run h
      JOIN evalledger.brain_eval_catalog_question c
        ON c.catalog_version = h.catalog_version AND c.question_id = NEW.question_id
      LEFT JOIN evalledger.brain_eval_harness_answer a
        ON a.eval_run_id = h.eval_run_id AND a.question_id = NEW.question_id
     WHERE h.eval_run_id = NEW.eval_run_id;
    NEW.question_passed := evalledger.question_passes_v1(NEW, policy, run.brain_under_test, criteria);
    RETURN NEW;
END;
$$;
