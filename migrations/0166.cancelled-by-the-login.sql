-- A cancellation names the login that cancelled, not the role every command acts as (found by a
-- newcomer reading `brain-eval show` after the README's tour).
--
-- brain_eval_close_v1 and eval_run_close_v1 recorded a cancellation's closed_by as caller_v1(): the
-- role a statement runs as, its SET ROLE where there is one. Every command of the CLI acts through
-- SET ROLE, so every cancellation made there read "Abandoned: cancelled by evalledger_runner: ...",
-- and who cancelled was lost, where the help, docs/brain-eval.md and the functions' own comments
-- promise the login (review entries and sign-offs record session_user). They now record
-- session_user. Closures recorded before keep what they recorded: a stored input, which the
-- decision and the ledger's recompute read as it is.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

CREATE OR REPLACE FUNCTION evalledger.brain_eval_close_v1(run_id uuid, cancel_reason text) RETURNS boolean
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

CREATE OR REPLACE FUNCTION evalledger.eval_run_close_v1(run_suite text, run_key bigint, cancel_reason text) RETURNS boolean
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
