-- journal_timestamp_v1: a timestamp's canon-v1 form, a JSON string in UTC to the microsecond,
-- always six digits ("2026-03-01T09:30:00.000000Z"), whatever the session's TimeZone or DateStyle;
-- "infinity" and "-infinity" as they are; anything outside years 1-9999 is refused. Not STRICT, and
-- NULL handled in the CASE instead: a STRICT SQL function whose body is not strict is never inlined,
-- and this one runs for every timestamp of every row journalled.
CREATE FUNCTION evalledger.journal_timestamp_v1(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE
             WHEN t IS NULL THEN NULL
             WHEN t = 'infinity'::timestamptz THEN '"infinity"'
             WHEN t = '-infinity'::timestamptz THEN '"-infinity"'
             WHEN t >= '0001-01-01 00:00:00+00'::timestamptz AND t < '10000-01-01 00:00:00+00'::timestamptz
               THEN '"' || to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
             ELSE evalledger.journal_refuse_v1('timestamp', t::text)
           END
$$;
