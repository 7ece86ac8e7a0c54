-- hot_tier_v1: how far back RevOps reads (seed 002's hot tier); every RevOps policy asks this
-- one function. IMMUTABLE and plain SQL, so the planner folds it into a constant: a policy
-- costs what it cost with the literal.
CREATE FUNCTION evalledger.hot_tier_v1() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT interval '24 months' $$;

-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION hot_tier_v1() TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
