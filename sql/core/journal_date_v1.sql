-- journal_date_v1: a date's canon-v1 form, a JSON string "YYYY-MM-DD" whatever the session's
-- DateStyle (a month key of the readers' panel tables is one); "infinity" and "-infinity" as they
-- are; anything outside years 1-9999 is refused. Not STRICT, for the reason journal_timestamp_v1
-- gives; formatted as a timestamp without time zone, so the session's TimeZone never enters.
CREATE FUNCTION evalledger.journal_date_v1(d date) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE
             WHEN d IS NULL THEN NULL
             WHEN d = 'infinity'::date THEN '"infinity"'
             WHEN d = '-infinity'::date THEN '"-infinity"'
             WHEN d >= '0001-01-01'::date AND d < '10000-01-01'::date
               THEN '"' || to_char(d::timestamp, 'YYYY-MM-DD') || '"'
             ELSE evalledger.journal_refuse_v1('date', d::text)
           END
$$;
