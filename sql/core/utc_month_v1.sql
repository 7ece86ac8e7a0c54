-- utc_month_v1: the first day of the UTC month an instant falls in: the month a by-month panel
-- table files a run under (its start and its recording time), whatever the session's TimeZone.
CREATE FUNCTION evalledger.utc_month_v1(at timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.date_trunc('month', pg_catalog.timezone('UTC', at))::date
$$;
