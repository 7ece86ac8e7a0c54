-- work_quality_current_v1: each judge's current row on a snapshot (per repeat, repeat_no): its latest by retry_no (the
-- earlier ones are calls that were retried, or that started and were answered or lost). With the
-- reader's rights.
CREATE FUNCTION evalledger.work_quality_current_v1(p_snapshot_id bigint)
RETURNS SETOF evalledger.eval_work_quality_judge_verdicts
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (v.model, v.repeat_no) v.*
      FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = p_snapshot_id
     ORDER BY v.model, v.repeat_no, v.retry_no DESC
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION work_quality_current_v1(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION work_quality_current_v1(bigint) TO evalledger_owner;
