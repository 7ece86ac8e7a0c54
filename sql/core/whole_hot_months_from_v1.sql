-- whole_hot_months_from_v1: the first UTC month (its first day) that lies wholly in the hot tier:
-- the month the hot tier begins in when it begins at that month's first instant, else the month
-- after. A by-month panel table shows a hot-tier reader (RevOps, a reviewer) its months from here
-- on, so no aggregate ever counts a cold run: the month the tier boundary cuts through is left out
-- of that reader's aggregates whole rather than counted in part (its runs still show in the
-- per-run panels, which read the rows themselves under their own policies). The hot tier's start
-- is counted in UTC from the statement's start, as utc_ago_v1 counts it; plain SQL with every
-- operator schema-qualified, so a policy inlines it.
CREATE FUNCTION evalledger.whole_hot_months_from_v1() RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN pg_catalog.date_trunc('month', b.start) OPERATOR(pg_catalog.=) b.start
                THEN b.start::date
                ELSE (pg_catalog.date_trunc('month', b.start) OPERATOR(pg_catalog.+) interval '1 month')::date END
      FROM (SELECT pg_catalog.timezone('UTC', pg_catalog.statement_timestamp())
                   OPERATOR(pg_catalog.-) evalledger.hot_tier_v1() AS start) b
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION whole_hot_months_from_v1() TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
