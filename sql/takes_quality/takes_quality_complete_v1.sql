-- takes_quality_complete_v1: the runner completes an open run it may read (the hot tier); the
-- receipt the database built, or NULL when there is no such open run (completed meanwhile, cold,
-- or none). The verdict is the triggers' (eval_takes_quality_runs_20_decide). A function and not an
-- UPDATE grant, as brain_eval_complete_v1 says: no role may lock a run's row but the code role.
CREATE FUNCTION evalledger.takes_quality_complete_v1(run_id bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    receipt jsonb;
BEGIN
    UPDATE evalledger.eval_takes_quality_runs r SET completed_at = now()
     WHERE r.id = run_id AND r.completed_at IS NULL
       AND evalledger.caller_reads_v1(r.created_at, NULL)
    RETURNING r.receipt_json INTO receipt;
    RETURN receipt;
END;
$$;

-- Completion is the runner's, through functions (no role holds UPDATE on a run table, which would
-- let it lock the runs' rows: issue 17, class 7); to the runner alone: the owner role, which runs
-- what the writing roles run, completes nothing.
GRANT EXECUTE ON FUNCTION takes_quality_complete_v1(bigint) TO evalledger_runner;
