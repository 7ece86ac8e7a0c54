-- journal_number_v1: a numeric's canon-v1 form, its exact decimal text as PostgreSQL writes it
-- (every stored digit, scale kept: 0.9500 stays 0.9500, never an exponent); NaN and the
-- infinities are refused. (Not STRICT, so that it is inlined: see journal_timestamp_v1.)
CREATE FUNCTION evalledger.journal_number_v1(n numeric) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN n IS NULL THEN NULL
                WHEN n = 'NaN'::numeric OR n = 'Infinity'::numeric OR n = '-Infinity'::numeric
                THEN evalledger.journal_refuse_v1('number', n::text)
                ELSE n::text END
$$;
