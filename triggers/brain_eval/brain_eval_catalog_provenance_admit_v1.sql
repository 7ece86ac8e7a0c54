-- brain_eval_catalog_provenance_admit_v1: a provenance row is its question's document entry's
-- capture at its position and nothing else: the capture id and time are read from the document
-- (provenance.captures[position - 1]: {"id": ..., "created_at": ...}), so no capture can be added
-- to, or changed in, a loaded question's provenance (a position taken twice is a duplicate key).
CREATE FUNCTION evalledger.brain_eval_catalog_provenance_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    capture jsonb;
BEGIN
    SELECT c.document -> 'questions' -> (q.position - 1) -> 'provenance' -> 'captures' -> (NEW.position - 1)
      INTO capture
      FROM evalledger.brain_eval_catalog_question q
      JOIN evalledger.brain_eval_catalog c ON c.catalog_version = q.catalog_version
     WHERE q.catalog_version = NEW.catalog_version AND q.question_id = NEW.question_id;
    IF capture IS NULL OR jsonb_typeof(capture) <> 'object' OR jsonb_typeof(capture -> 'id') <> 'number'
       OR jsonb_typeof(capture -> 'created_at') <> 'string' THEN
        RAISE EXCEPTION 'evalledger: question % of catalog % lists no capture {"id", "created_at"} at position %',
                NEW.question_id, NEW.catalog_version, NEW.position
            USING ERRCODE = 'check_violation', COLUMN = 'position';
    END IF;
    NEW.capture_id := (capture ->> 'id')::bigint;
    NEW.capture_created_at := (capture ->> 'created_at')::timestamptz;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_catalog_provenance_10_admit BEFORE INSERT ON brain_eval_catalog_provenance
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_provenance_admit_v1();
