-- journal_float_v1: a double's canon-v1 form: its value to 17 significant digits, correctly rounded
-- (C's %.16e, which always reads back as the same double), written out in full as a plain decimal
-- (0.1 is 0.10000000000000001, 220 is 220.00000000000000, -0 is 0.0000000000000000); NaN and the
-- infinities are refused. Not the shortest form: shortest-digit algorithms may pick either of two
-- candidates at a tie (PostgreSQL's and Python's do differ), and canon-v1 must be one text. STABLE,
-- as to_char is, and not STRICT, so that it is inlined (see journal_timestamp_v1).
CREATE FUNCTION evalledger.journal_float_v1(f double precision) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN f IS NULL THEN NULL
                WHEN f = 'NaN'::double precision OR f = 'Infinity'::double precision
                     OR f = '-Infinity'::double precision
                THEN evalledger.journal_refuse_v1('number', f::text)
                ELSE btrim(to_char(f, '9.9999999999999999EEEE'))::numeric::text END
$$;
