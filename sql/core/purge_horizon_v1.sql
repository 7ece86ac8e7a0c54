-- purge_horizon_v1: how long the ledger keeps a row before it may be purged (seed 002: 7 years);
-- the ledger's purge rule and the capture purge both ask this one function.
CREATE FUNCTION evalledger.purge_horizon_v1() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT interval '7 years' $$;

-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION purge_horizon_v1() TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
