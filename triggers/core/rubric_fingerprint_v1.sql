-- rubric_fingerprint_v1: a rubric's fingerprint is the SHA-256 of its canonical definition, so
-- two rows with the same policy share it and any change of policy changes it.
CREATE FUNCTION evalledger.rubric_fingerprint_v1() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.fingerprint := encode(sha256(convert_to(NEW.definition::text, 'UTF8')), 'hex');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- Trigger names carry their firing order (PostgreSQL fires them alphabetically).
-- rubric_05_admit (the admission check) is bound after the first rubrics (rubric_admit_v2.sql).
CREATE TRIGGER rubric_10_fingerprint BEFORE INSERT ON rubric
    FOR EACH ROW EXECUTE FUNCTION rubric_fingerprint_v1();
