-- brain_eval_catalog_admit_v1: a question catalog is loaded as its whole document; the database
-- reads its version and question count from it and fingerprints it, and the caller supplies neither.
CREATE FUNCTION evalledger.brain_eval_catalog_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.document IS NULL OR jsonb_typeof(NEW.document) <> 'object'
       OR jsonb_typeof(NEW.document -> 'version') IS DISTINCT FROM 'string'
       OR jsonb_typeof(NEW.document -> 'questions') IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'evalledger: a catalog is a document with a version and a questions array'
            USING ERRCODE = 'check_violation', COLUMN = 'document';
    END IF;
    PERFORM evalledger.refuse_supplied_v1('brain_eval_catalog', jsonb_build_object(
        'document_sha256', NEW.document_sha256, 'question_count', NEW.question_count));
    IF NEW.catalog_version IS DISTINCT FROM NEW.document ->> 'version' AND NEW.catalog_version IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: catalog_version % is not the document''s version %',
                NEW.catalog_version, NEW.document ->> 'version'
            USING ERRCODE = 'check_violation', COLUMN = 'catalog_version';
    END IF;
    NEW.catalog_version := NEW.document ->> 'version';
    NEW.question_count := jsonb_array_length(NEW.document -> 'questions');
    -- jsonb's text form is canonical (key order, spacing), so equal documents fingerprint equally.
    NEW.document_sha256 := encode(sha256(convert_to(NEW.document::text, 'UTF8')), 'hex');
    NEW.loaded_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_catalog_10_admit BEFORE INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_admit_v1();
