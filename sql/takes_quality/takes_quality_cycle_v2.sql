-- takes_quality_cycle_v2: takes_quality_cycle_v1 for a run the caller may read (caller_reads_v1: the runner and RevOps the
-- hot tier, auditors and the owner role every run); any other reads as a run that does not exist.
-- The completion trigger asks _v1 itself, as the code role.
CREATE FUNCTION evalledger.takes_quality_cycle_v2(p_run_id bigint, p_cycle integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r
                    WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN evalledger.takes_quality_cycle_v1(p_run_id, p_cycle);
END;
$$;
GRANT EXECUTE ON FUNCTION takes_quality_cycle_v2(bigint, integer) TO evalledger_runner;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION takes_quality_cycle_v2(bigint,integer) TO evalledger_owner;
