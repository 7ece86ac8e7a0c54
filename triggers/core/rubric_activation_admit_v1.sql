-- rubric_activation_admit_v1: an activation names a rubric of its own suite; when and by whom
-- (the session's login, not a role it acts as) are the database's.
CREATE FUNCTION evalledger.rubric_activation_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id AND r.suite = NEW.suite) THEN
        RAISE EXCEPTION 'evalledger: rubric % is not a % rubric', NEW.rubric_id, NEW.suite
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id';
    END IF;
    NEW.activated_at := now();
    NEW.activated_by := session_user;
    RETURN NEW;
END;
$$;

CREATE TRIGGER rubric_activation_10_admit BEFORE INSERT ON rubric_activation
    FOR EACH ROW EXECUTE FUNCTION rubric_activation_admit_v1();
