-- brain_eval_question_score_write_v1: question rows join only runs in progress; afterwards only
-- the run's own reviewer may change the reviewer-scored fields, and only until completion.
-- question_passed is always the database's. SECURITY INVOKER: current_user is the reviewer.
CREATE FUNCTION evalledger.brain_eval_question_score_write_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    changed text;
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
        NEW.created_at := now();
    ELSE
        changed := evalledger.changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY[
            'hallucinations_detected', 'total_claims', 'diagnosis_accuracy_score',
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

    NEW.question_passed := evalledger.question_passes_v1(
        NEW, (SELECT r.definition FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id), run.brain_under_test);
    RETURN NEW;
END;
$$;
