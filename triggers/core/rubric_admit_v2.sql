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

-- Every rubric is checked at admission as policy (rubric_check_v2), but for the first ones:
-- sql/schema.sql inserts them before this binding, admitted under the rules of their day, which
-- v1.0's panel predates. v1.1, the first rubric admitted under today's, carries seed 000's panel
-- (three models, two or more families) and is active in v1.0's stead (issue 17).
CREATE TRIGGER rubric_05_admit BEFORE INSERT ON rubric
    FOR EACH ROW EXECUTE FUNCTION rubric_admit_v2();
