-- Every window in UTC on the statement's clock (issue 17): no session TimeZone moves it, nor
-- does a transaction held open.
-- utc_ago_v1: the instant `span` before the statement's start on the database's clock, counted in
-- UTC: months and days are calendar steps of UTC, never of the session's TimeZone (which any login
-- may set, to a crafted POSIX zone as much as to a real one), and the statement's start, never the
-- transaction's (a session that holds a transaction open does not keep an old window). Plain SQL
-- with every operator schema-qualified, so the planner inlines it into a policy as a stable
-- expression: an index still serves the comparison, and no operator on a reader's path is picked.
CREATE FUNCTION evalledger.utc_ago_v1(span interval) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.timezone('UTC',
               pg_catalog.timezone('UTC', pg_catalog.statement_timestamp()) OPERATOR(pg_catalog.-) span)
$$;

-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION utc_ago_v1(interval) TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
