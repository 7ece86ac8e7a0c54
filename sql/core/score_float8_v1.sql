-- score_float8_v1: a JSON number read as a score, as float8 (double precision), or refused in one
-- line naming where it stands (what: the document, judge and dimension, as the caller words it) when
-- it is past float8's range: too large (it would round to infinity: 2^1024 - 2^970 and beyond) or too
-- small (it would round to zero: a nonzero magnitude of 2^-1075 or less, past the smallest subnormal),
-- which the cast refuses with a bare "out of range" naming nothing (JSON's numbers are PostgreSQL's
-- numeric, which holds both). The bounds are the cast's own (float8in: a value rounded to nearest,
-- refused when it rounds to an infinity or a nonzero one rounds to zero), tested exactly
-- (tests/db/test_gate_scores_out_of_range_are_refused_naming_them.py); a score in range is the cast's
-- very value. Read by the functions that read judges' scores out of documents
-- (work_quality_judge_scores_v1, takes_quality_paired_v1) and by a gate's admission
-- (gate_scores_in_range_v1).
CREATE FUNCTION evalledger.score_float8_v1(score jsonb, what text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n numeric := (score::text)::numeric;
    e integer;
    m numeric;
BEGIN
    IF n <> 0 AND (abs(n) >= power(2::numeric, 1024) - power(2::numeric, 970)
                   OR abs(n) * power(2::numeric, 1075) <= 1) THEN
        -- Shown short, as its significant digits and a power of ten (1e400, not its 401 digits).
        e := floor(log(abs(n)))::integer;
        -- Scaled by a positive power of ten only: PostgreSQL 15's numeric power of ten to a large
        -- negative exponent is 0.
        m := trim_scale(round(CASE WHEN e >= 0 THEN n / power(10::numeric, e) ELSE n * power(10::numeric, -e) END, 16));
        IF abs(m) >= 10 THEN
            e := e + 1;
            m := trim_scale(round(CASE WHEN e >= 0 THEN n / power(10::numeric, e) ELSE n * power(10::numeric, -e) END, 16));
        END IF;
        RAISE EXCEPTION 'evalledger: %: the score %e% is past the range of a double precision number (float8)',
                        what, m, e
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    RETURN (score::text)::float8;
END;
$$;
GRANT EXECUTE ON FUNCTION score_float8_v1(jsonb, text) TO evalledger_runner, evalledger_revops, evalledger_auditor;
