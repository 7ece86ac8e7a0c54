-- takes_quality_current_v1: each judge's current row in each cycle (and each repeat, repeat_no) of a
-- run: its latest by retry_no. An earlier row is a call that failed outside the judge's content (a provider error,
-- a call the budget did not allow) and was retried, or a call that started and was answered or
-- lost; the current row is the verdict the run stands on. With the reader's rights.
CREATE FUNCTION evalledger.takes_quality_current_v1(p_run_id bigint)
RETURNS SETOF evalledger.eval_takes_quality_judge_verdicts
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (v.cycle, v.model, v.repeat_no) v.*
      FROM evalledger.eval_takes_quality_judge_verdicts v
     WHERE v.run_id = p_run_id
     ORDER BY v.cycle, v.model, v.repeat_no, v.retry_no DESC
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_current_v1(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION takes_quality_current_v1(bigint) TO evalledger_owner;
