-- work_quality_is_regression_v2: the seed's Delta.IsRegression(tol) under the policy given
-- (work_quality_policy_v2 of a rubric). The reasons, in the seed's words, why overall or
-- value_for_money dropped by more than the tolerance; an empty array is no regression, and a NULL
-- delta (no baseline) is never one. A tolerance that is NULL, zero or negative means the policy's
-- default (its regress_tolerance), as tol <= 0 does in the seed. A drop of exactly the tolerance is
-- not a regression (the seed's test is delta < -tol). work_quality_is_regression_v1 is this under
-- the active rubric's policy; a gate decision decides under its own (gate_decide_v2).
CREATE FUNCTION evalledger.work_quality_is_regression_v2(delta jsonb, tolerance numeric, policy jsonb)
RETURNS text[] LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH tol AS (
        SELECT CASE WHEN tolerance IS NULL OR tolerance <= 0
                    THEN (policy ->> 'regress_tolerance')::numeric
                    ELSE tolerance END AS t)
    SELECT CASE WHEN delta IS NULL THEN ARRAY[]::text[] ELSE ARRAY(
        SELECT format('%s dropped %s (vs %s)', x.label, round(x.d, 3), delta ->> 'prev_run_id')
          FROM tol, (VALUES (1, 'overall', (delta ->> 'overall_delta')::numeric),
                            (2, 'value_for_money', (delta ->> 'value_delta')::numeric)) x(n, label, d)
         WHERE x.d < -tol.t
         ORDER BY x.n) END
      FROM tol
$$;

GRANT EXECUTE ON FUNCTION work_quality_is_regression_v2(jsonb, numeric, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
