-- rubric_admitted_v2: the rubric a new run of the suite is judged by: the one it names, which
-- must be of that suite and activated at some time, else the active one; and it must pass today's
-- rubric check (rubric_check_v2: a judged suite's scale, takes-quality's panel policy), so an older
-- rubric that predates a rule judges no new run; raises otherwise.
CREATE FUNCTION evalledger.rubric_admitted_v2(suite text, named bigint) RETURNS bigint
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    chosen bigint := coalesce(named, evalledger.active_rubric_v1(suite));
    problem text;
BEGIN
    IF chosen IS NULL OR NOT EXISTS (
        SELECT 1 FROM evalledger.rubric_activation a WHERE a.rubric_id = chosen AND a.suite = rubric_admitted_v2.suite) THEN
        RAISE EXCEPTION 'evalledger: rubric % is not an activated % rubric', coalesce(chosen::text, 'NULL'), suite
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id',
                  HINT = 'a rubric is activated by a migration (evalledger.rubric_activation), never by being newest';
    END IF;
    SELECT evalledger.rubric_check_v2(r.suite, r.definition) INTO problem FROM evalledger.rubric r WHERE r.rubric_id = chosen;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: rubric % judges no new % run: %', chosen, suite, problem
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id', CONSTRAINT = 'rubric_definition_valid',
                  HINT = 'name the suite''s active rubric (or none)';
    END IF;
    RETURN chosen;
END;
$$;
