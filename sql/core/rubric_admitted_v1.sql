-- rubric_admitted_v1: the rubric a new run of the suite is judged by: the one it names, which
-- must be of that suite and activated at some time, else the active one; raises otherwise.
CREATE FUNCTION evalledger.rubric_admitted_v1(suite text, named bigint) RETURNS bigint
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    chosen bigint := coalesce(named, evalledger.active_rubric_v1(suite));
BEGIN
    IF chosen IS NULL OR NOT EXISTS (
        SELECT 1 FROM evalledger.rubric_activation a WHERE a.rubric_id = chosen AND a.suite = rubric_admitted_v1.suite) THEN
        RAISE EXCEPTION 'evalledger: rubric % is not an activated % rubric', coalesce(chosen::text, 'NULL'), suite
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id',
                  HINT = 'a rubric is activated by a migration (evalledger.rubric_activation), never by being newest';
    END IF;
    RETURN chosen;
END;
$$;
