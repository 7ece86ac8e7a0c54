-- work_quality_is_regression_v1: the seed's Delta.IsRegression(tol) under the active rubric's policy
-- (work_quality_policy_v1, read only when the tolerance is NULL, zero or negative, which means its
-- regress_tolerance): work_quality_is_regression_v2, which says what it decides.
CREATE FUNCTION evalledger.work_quality_is_regression_v1(delta jsonb, tolerance numeric DEFAULT NULL)
RETURNS text[] LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_is_regression_v2(
               delta, tolerance,
               CASE WHEN tolerance IS NULL OR tolerance <= 0 THEN evalledger.work_quality_policy_v1() END)
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_is_regression_v1(jsonb, numeric) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
