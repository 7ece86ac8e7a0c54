-- brain_eval_close_v1: close an open run without completing it whole: a cancellation records its
-- closure (with the reason and the login that closed it: session_user, not the role it acts as,
-- which every command of the CLI SETs) first; then the run completes at the
-- database's clock, and its decision trigger (brain_eval_log_decide_v2) decides it fail as closed,
-- recording an abandonment itself for a run past its deadline. Whether it closed the run: false
-- when it was complete or closed already. The row is locked first, so a completion or a closure
-- racing with this one waits and then finds it closed.
CREATE FUNCTION evalledger.brain_eval_close_v1(run_id uuid, cancel_reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
BEGIN
    SELECT l.* INTO run FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = run_id AND l.completed_at IS NULL FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF cancel_reason IS NOT NULL THEN
        INSERT INTO evalledger.brain_eval_run_closure
               (eval_run_id, closure, reason, closed_by, reviewer_user_id, run_created_at)
        VALUES (run.eval_run_id, 'cancelled', cancel_reason, session_user, run.reviewer_user_id, run.created_at);
    END IF;
    UPDATE evalledger.brain_eval_log l SET completed_at = now() WHERE l.eval_run_id = run.eval_run_id;
    RETURN true;
END;
$$;
