-- work_quality_compare_v1: the seed's Compare(prev, cur) over two mean_scores objects. NULL when
-- there is no previous snapshot; otherwise the seed's Delta: per-dimension cur - prev (a missing
-- score counts as 0, as in a Go map), overall_delta, value_delta, and the headline verdict on
-- overall: better above +same_band, worse below -same_band, same within it (inclusive).
-- Arithmetic is numeric, not float64: a change of exactly 0.05 is exactly 0.05 and so "same"
-- (float64 would make 0.75 - 0.70 = 0.050000000000000044 and call it "better").
CREATE FUNCTION evalledger.work_quality_compare_v1(prev_mean jsonb, cur_mean jsonb, prev_run_id text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH policy AS (SELECT evalledger.work_quality_policy_v1() AS p),
    deltas AS (
        SELECT d.dim,
               trim_scale(coalesce((cur_mean ->> d.dim)::numeric, 0) - coalesce((prev_mean ->> d.dim)::numeric, 0)) AS delta
          FROM policy, jsonb_array_elements_text(policy.p -> 'dimensions') d(dim))
    SELECT CASE WHEN prev_mean IS NULL OR cur_mean IS NULL THEN NULL ELSE jsonb_build_object(
               'prev_run_id', coalesce(prev_run_id, ''),
               'overall_delta', (SELECT delta FROM deltas WHERE dim = 'overall'),
               'value_delta', (SELECT delta FROM deltas WHERE dim = 'value_for_money'),
               'per_dimension', (SELECT jsonb_object_agg(dim, delta) FROM deltas),
               'verdict', CASE WHEN (SELECT delta FROM deltas WHERE dim = 'overall') > (p ->> 'same_band')::numeric
                               THEN 'better'
                               WHEN (SELECT delta FROM deltas WHERE dim = 'overall') < -(p ->> 'same_band')::numeric
                               THEN 'worse'
                               ELSE 'same' END) END
      FROM policy
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_compare_v1(jsonb, jsonb, text) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
