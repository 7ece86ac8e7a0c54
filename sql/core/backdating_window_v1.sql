-- backdating_window_v1: how long before its recording a run (or an analysis) may have started
-- without an audited import: one day, counted in UTC (utc_ago_v1), so no session TimeZone
-- stretches it.
CREATE FUNCTION evalledger.backdating_window_v1() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT interval '1 day' $$;

-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION backdating_window_v1() TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
