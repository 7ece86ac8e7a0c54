-- brain_eval_open_harness_v1: the harness record of a run that still takes what `takes` names
-- (answers, suggestions), with the run locked as lock_run_v1 locks it, so nothing lands after
-- its completion; refused when the run is no harness run or is complete.
CREATE FUNCTION evalledger.brain_eval_open_harness_v1(run_id uuid, takes text)
RETURNS evalledger.brain_eval_harness_run
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    harness evalledger.brain_eval_harness_run;
BEGIN
    PERFORM evalledger.lock_run_v1(run_id);
    SELECT h.* INTO harness FROM evalledger.brain_eval_harness_run h WHERE h.eval_run_id = run_id;
    IF harness.eval_run_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: run % is not a harness run', run_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'eval_run_id';
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                WHERE l.eval_run_id = run_id AND l.completed_at IS NOT NULL) THEN
        RAISE EXCEPTION 'evalledger: run % is complete: it takes no more %', run_id, takes
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN harness;
END
$$;
