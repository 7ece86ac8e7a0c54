-- purge_horizon_at_v1: the instant before which a row is past the purge horizon (purge_horizon_v1()
-- before now, in UTC: utc_ago_v1); the purge, its guard and the plan all ask this one function.
CREATE FUNCTION evalledger.purge_horizon_at_v1() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT evalledger.utc_ago_v1(evalledger.purge_horizon_v1())
$$;

-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION purge_horizon_at_v1() TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
