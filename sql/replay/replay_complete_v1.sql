-- replay_complete_v1: the runner completes an open replay run it may read (the hot tier); the
-- run's decision, rationale and summary as the database decided them (replay_run_decide_v1), or
-- NULL when there is no such open run (completed meanwhile, cold, or none). A function and not an
-- UPDATE grant, as takes_quality_complete_v1 says: no role may lock a run's row but the code role.
CREATE FUNCTION evalledger.replay_complete_v1(run_id bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    decided jsonb;
BEGIN
    UPDATE evalledger.replay_run r SET completed_at = now()
     WHERE r.replay_run_id = run_id AND r.completed_at IS NULL
       AND evalledger.caller_reads_v1(r.created_at, NULL)
    RETURNING r.summary INTO decided;
    RETURN decided;
END;
$$;

-- Completion is the runner's, as every suite's.
GRANT EXECUTE ON FUNCTION replay_complete_v1(bigint) TO evalledger_runner;
