-- eval_run_close_v1: close an open takes-quality run or work-quality snapshot without completing it
-- whole, as brain_eval_close_v1 closes a brain-eval run: a cancellation records its closure (with
-- the reason and the login that closed it, session_user) first; then the run completes at the database's clock,
-- and its decision trigger (takes_quality_run_decide_v2, work_quality_snapshot_decide_v3) decides it
-- as closed, recording an abandonment itself for a run past its deadline. Whether it closed the run:
-- false when it was complete or closed already. The row is locked first, so a completion or a
-- closure racing with this one waits and then finds it closed. The closing is the database's (the
-- one-open triggers, eval_run_cancel_v1): no role runs it itself.
CREATE FUNCTION evalledger.eval_run_close_v1(run_suite text, run_key bigint, cancel_reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    recorded timestamptz;
BEGIN
    IF run_suite = 'takes-quality' THEN
        SELECT r.created_at INTO recorded FROM evalledger.eval_takes_quality_runs r
         WHERE r.id = run_key AND r.completed_at IS NULL FOR UPDATE;
    ELSIF run_suite = 'work-quality' THEN
        SELECT s.created_at INTO recorded FROM evalledger.eval_work_quality_snapshots s
         WHERE s.snapshot_id = run_key AND s.completed_at IS NULL FOR UPDATE;
    ELSE
        RAISE EXCEPTION 'evalledger: no suite % closes runs here', run_suite USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recorded IS NULL THEN
        RETURN false;
    END IF;
    IF cancel_reason IS NOT NULL THEN
        INSERT INTO evalledger.eval_run_closure
               (suite, takes_quality_run_id, snapshot_id, closure, reason, closed_by, run_created_at)
        VALUES (run_suite, CASE WHEN run_suite = 'takes-quality' THEN run_key END,
                CASE WHEN run_suite = 'work-quality' THEN run_key END,
                'cancelled', cancel_reason, session_user, recorded);
    END IF;
    IF run_suite = 'takes-quality' THEN
        UPDATE evalledger.eval_takes_quality_runs r SET completed_at = now() WHERE r.id = run_key;
    ELSE
        UPDATE evalledger.eval_work_quality_snapshots s SET completed_at = now() WHERE s.snapshot_id = run_key;
    END IF;
    RETURN true;
END;
$$;
