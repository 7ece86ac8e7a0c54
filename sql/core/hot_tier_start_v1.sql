-- hot_tier_start_v1: where the hot tier begins (hot_tier_v1() before now, in UTC: utc_ago_v1); every
-- read policy on an aging table compares a row's tier clock with this one function.
CREATE FUNCTION evalledger.hot_tier_start_v1() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT evalledger.utc_ago_v1(evalledger.hot_tier_v1())
$$;

-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION hot_tier_start_v1() TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
