-- brain_eval_run_review_admit_v1: a run's reviewer signs off an open run of theirs with the hours
-- spent and calibration notes keyed by the rubric's dimensions; who, when and the tier clock are
-- the database's. SECURITY DEFINER (reads the run and its rubric past the reviewer's policies);
-- the caller is caller_v1(), the role the statement runs as.
CREATE FUNCTION evalledger.brain_eval_run_review_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    unknown text;
BEGIN
    IF NEW.eval_run_id IS NULL THEN
        RETURN NEW;  -- the column's NOT NULL refuses it
    END IF;
    PERFORM evalledger.lock_run_v1(NEW.eval_run_id);
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id THEN
        RAISE EXCEPTION 'evalledger: only the run''s reviewer signs off run %', NEW.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF run.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: run % is complete: its review is final', run.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown
      FROM jsonb_object_keys(coalesce(NEW.calibration_notes, '{}')) AS k
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') d
                        WHERE r.rubric_id = run.rubric_id AND d ->> 'key' = k);
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: calibration notes name no dimension of the run''s rubric: %', unknown
            USING ERRCODE = 'check_violation', COLUMN = 'calibration_notes',
                  HINT = 'key notes by dimension: citation_rate, hallucination_rate, ...';
    END IF;
    NEW.reviewer_user_id := run.reviewer_user_id;
    NEW.entered_by := session_user;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_run_review_10_admit BEFORE INSERT ON brain_eval_run_review
    FOR EACH ROW EXECUTE FUNCTION brain_eval_run_review_admit_v1();
