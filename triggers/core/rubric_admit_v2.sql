-- rubric_admit_v2: a rubric row is validated policy (rubric_check_v2) before it is stored.
CREATE FUNCTION evalledger.rubric_admit_v2() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    problem text := evalledger.rubric_check_v2(NEW.suite, NEW.definition);
BEGIN
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: rubric % %: %', NEW.suite, NEW.version, problem
            USING ERRCODE = 'check_violation', COLUMN = 'definition', CONSTRAINT = 'rubric_definition_valid';
    END IF;
    RETURN NEW;
END;
$$;
