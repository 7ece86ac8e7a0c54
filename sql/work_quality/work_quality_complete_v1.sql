-- work_quality_complete_v1: the runner completes an open snapshot it may read (the hot tier); the
-- Snapshot document the database built, or NULL when there is no such open snapshot. The decision
-- is the triggers' (eval_work_quality_snapshots_20_decide). A function and not an UPDATE grant, as
-- brain_eval_complete_v1 says: no role may lock a snapshot's row but the code role.
CREATE FUNCTION evalledger.work_quality_complete_v1(snapshot bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    document jsonb;
BEGIN
    UPDATE evalledger.eval_work_quality_snapshots s SET completed_at = now()
     WHERE s.snapshot_id = snapshot AND s.completed_at IS NULL
       AND evalledger.caller_reads_v1(s.created_at, NULL)
    RETURNING s.snapshot_json INTO document;
    RETURN document;
END;
$$;

-- Completion is the runner's, through functions (no role holds UPDATE on a run table, which would
-- let it lock the runs' rows: issue 17, class 7); to the runner alone: the owner role, which runs
-- what the writing roles run, completes nothing.
GRANT EXECUTE ON FUNCTION work_quality_complete_v1(bigint) TO evalledger_runner;
