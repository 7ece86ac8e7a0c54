-- work_quality_compare_v2: the seed's Compare(prev, cur) over two mean_scores objects under the
-- policy given (work_quality_policy_v2 of a rubric: its dimensions and same band). NULL when there is
-- no previous snapshot; otherwise the seed's Delta: per-dimension cur - prev (a missing score counts
-- as 0, as in a Go map), overall_delta, value_delta, and the headline verdict on overall: better
-- above +same_band, worse below -same_band, same within it (inclusive). Arithmetic is numeric, not
-- float64: a change of exactly 0.05 is exactly 0.05 and so "same" (float64 would make
-- 0.75 - 0.70 = 0.050000000000000044 and call it "better"). work_quality_compare_v1 is this under the
-- active rubric's policy; a gate decision compares under its own (gate_decide_v2).
CREATE FUNCTION evalledger.work_quality_compare_v2(prev_mean jsonb, cur_mean jsonb, prev_run_id text, policy jsonb)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH deltas AS (
        SELECT d.dim,
               trim_scale(coalesce((cur_mean ->> d.dim)::numeric, 0) - coalesce((prev_mean ->> d.dim)::numeric, 0)) AS delta
          FROM jsonb_array_elements_text(policy -> 'dimensions') d(dim))
    SELECT CASE WHEN prev_mean IS NULL OR cur_mean IS NULL THEN NULL ELSE jsonb_build_object(
               'prev_run_id', coalesce(prev_run_id, ''),
               'overall_delta', (SELECT delta FROM deltas WHERE dim = 'overall'),
               'value_delta', (SELECT delta FROM deltas WHERE dim = 'value_for_money'),
               'per_dimension', (SELECT jsonb_object_agg(dim, delta) FROM deltas),
               'verdict', CASE WHEN (SELECT delta FROM deltas WHERE dim = 'overall') > (policy ->> 'same_band')::numeric
                               THEN 'better'
                               WHEN (SELECT delta FROM deltas WHERE dim = 'overall') < -(policy ->> 'same_band')::numeric
                               THEN 'worse'
                               ELSE 'same' END) END
$$;

GRANT EXECUTE ON FUNCTION work_quality_compare_v2(jsonb, jsonb, text, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
