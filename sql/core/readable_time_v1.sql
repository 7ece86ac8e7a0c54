-- readable_time_v1: whether a time a role gives can be read back by the project's own readers:
-- psycopg reads a timestamptz as Python's datetime, years 1 to 9999, so 'infinity', '-infinity'
-- and the years beyond (which PostgreSQL stores) broke every read of the row (issue 37, item 8).
-- A day's margin at each end, for the reader's time zone.
CREATE FUNCTION evalledger.readable_time_v1(t timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT t >= '0001-01-02 00:00:00+00'::timestamptz AND t <= '9999-12-30 00:00:00+00'::timestamptz
$$;
