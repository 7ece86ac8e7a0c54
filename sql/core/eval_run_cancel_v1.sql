-- eval_run_cancel_v1: the runner cancels an open takes-quality run (run_suite 'takes-quality', its
-- id) or work-quality snapshot ('work-quality', its snapshot_id) that it may read, with a reason: a
-- recorded act (eval_run_closure), and the run is decided as an abandoned one is, "Abandoned:
-- cancelled by <login>: <reason>" (brain_eval_cancel_v1's rule, for the other suites). Whether it
-- cancelled it; a run complete or closed already, or one the caller may not read (caller_reads_v1:
-- a cold run is no run), is not cancelled.
CREATE FUNCTION evalledger.eval_run_cancel_v1(run_suite text, run_key bigint, reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF reason IS NULL OR reason !~ '\S' THEN
        RAISE EXCEPTION 'evalledger: a cancellation needs a reason'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_run_closure_reason_given';
    END IF;
    IF run_suite = 'takes-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE r.id = run_key AND evalledger.caller_reads_v1(r.created_at, NULL))
       OR run_suite = 'work-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_work_quality_snapshots s
             WHERE s.snapshot_id = run_key AND evalledger.caller_reads_v1(s.created_at, NULL))
       OR run_suite IS DISTINCT FROM 'takes-quality' AND run_suite IS DISTINCT FROM 'work-quality' THEN
        RETURN false;
    END IF;
    RETURN evalledger.eval_run_close_v1(run_suite, run_key, reason);
END;
$$;

-- The runner's, as completion is.
GRANT EXECUTE ON FUNCTION eval_run_cancel_v1(text, bigint, text) TO evalledger_runner;
