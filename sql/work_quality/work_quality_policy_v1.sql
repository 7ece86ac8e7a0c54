-- work_quality_policy_v1: the comparison policy as data, from the active work-quality rubric (the one
-- its latest activation names): work_quality_policy_v2 of active_rubric_v1('work-quality'),
-- {"same_band": 0.05, "regress_tolerance": 0.08, "dimensions": [...]}. Compare and IsRegression
-- read their thresholds here, so a new policy is a new rubric row, never an edited function.
-- SECURITY DEFINER so every reader of the history view gets the same policy whatever it may read.
CREATE FUNCTION evalledger.work_quality_policy_v1() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_policy_v2(evalledger.active_rubric_v1('work-quality'))
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_policy_v1() TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
