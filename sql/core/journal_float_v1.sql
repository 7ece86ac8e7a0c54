-- journal_float_v1: a double's canon-v1 form, the shortest decimal that reads back as the same
-- double, written out in full (1e+20 is 100000000000000000000, 100.0 is 100, -0 is 0); NaN and
-- the infinities are refused. extra_float_digits = 1 pins the shortest exact output whatever the
-- session set (0 or less would round to 15 digits).
CREATE FUNCTION evalledger.journal_float_v1(f double precision) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET extra_float_digits = 1 AS $$
    SELECT CASE WHEN f = 'NaN'::double precision OR f = 'Infinity'::double precision
                     OR f = '-Infinity'::double precision
                THEN evalledger.journal_refuse_v1('number', f::text)
                ELSE (f::text)::numeric::text END
$$;
