-- The completion trigger adds each run to its months as it completes; the purge recounts the months
-- it took runs from.
-- utc_month_v1: the first day of the UTC month an instant falls in: the month a by-month panel
-- table files a run under (its start and its recording time), whatever the session's TimeZone.
CREATE FUNCTION evalledger.utc_month_v1(at timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.date_trunc('month', pg_catalog.timezone('UTC', at))::date
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION utc_month_v1(timestamptz) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
