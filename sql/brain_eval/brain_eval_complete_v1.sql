-- brain_eval_complete_v1: the runner completes an open run it may read (the hot tier, as its
-- policy reads); whether it did. The run completes at the database's clock (complete_once_v1):
-- `completed`, kept for the signature, must be NULL, and a time given there is refused rather than
-- ignored, so a caller learns its time was not taken (issue 37, item 8). What completion checks
-- and decides is the triggers' (brain_eval_log_10_guard_update, brain_eval_log_20_decide). A
-- function and not an UPDATE grant: a role that may UPDATE a table may also take FOR UPDATE and FOR SHARE locks on
-- the rows it reads there, and a runner holding them on every open run stalled every reviewer's
-- score and sign-off, and every question row written to them (issue 17, class 7). SECURITY
-- DEFINER, so it asks caller_reads_v1 what the caller's policy would show: a cold run is no run.
CREATE FUNCTION evalledger.brain_eval_complete_v1(run_id uuid, completed timestamptz) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF completed IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is the database''s clock at completion, not the caller''s: pass NULL, not %',
                completed
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'completed_at';
    END IF;
    UPDATE evalledger.brain_eval_log l SET completed_at = clock_timestamp()
     WHERE l.eval_run_id = run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, NULL);
    RETURN FOUND;
END;
$$;

-- Completion is the runner's, through functions (no role holds UPDATE on a run table, which would
-- let it lock the runs' rows: issue 17, class 7); to the runner alone: the owner role, which runs
-- what the writing roles run, completes nothing.
GRANT EXECUTE ON FUNCTION brain_eval_complete_v1(uuid, timestamptz) TO evalledger_runner;
