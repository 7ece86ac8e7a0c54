-- work_quality_compare_v1: the seed's Compare(prev, cur) over two mean_scores objects under the
-- active rubric's policy (work_quality_policy_v1): work_quality_compare_v2, which says what it
-- computes. A snapshot's comparison with the previous one is this.
CREATE FUNCTION evalledger.work_quality_compare_v1(prev_mean jsonb, cur_mean jsonb, prev_run_id text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_compare_v2(prev_mean, cur_mean, prev_run_id, evalledger.work_quality_policy_v1())
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_compare_v1(jsonb, jsonb, text) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
