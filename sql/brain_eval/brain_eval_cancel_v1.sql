-- brain_eval_cancel_v1: the runner cancels an open run it may read, with a reason: a recorded act
-- (brain_eval_run_closure), and the run is decided fail, "Abandoned: cancelled by <login>: <reason>",
-- as an abandoned one is. Whether it cancelled it; a run complete or closed already, or one the
-- caller may not read (caller_reads_v1: a cold run is no run), is not cancelled.
CREATE FUNCTION evalledger.brain_eval_cancel_v1(run_id uuid, reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF reason IS NULL OR reason !~ '\S' THEN
        RAISE EXCEPTION 'evalledger: a cancellation needs a reason'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_run_closure_reason_given';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                    WHERE l.eval_run_id = run_id AND evalledger.caller_reads_v1(l.created_at, NULL)) THEN
        RETURN false;
    END IF;
    RETURN evalledger.brain_eval_close_v1(run_id, reason);
END;
$$;

-- The runner's, as completion is.
GRANT EXECUTE ON FUNCTION brain_eval_cancel_v1(uuid, text) TO evalledger_runner;
