-- brain_eval_catalog_question_admit_v1: a question row is its catalog document's entry at its
-- position and nothing else: every column is read from the document, so no question can be added
-- to, or changed in, a loaded catalog (a position taken twice is a duplicate key).
CREATE FUNCTION evalledger.brain_eval_catalog_question_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    q jsonb;
BEGIN
    SELECT c.document -> 'questions' -> (NEW.position - 1) INTO q
      FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = NEW.catalog_version;
    IF q IS NULL OR jsonb_typeof(q) <> 'object' THEN
        RAISE EXCEPTION 'evalledger: catalog % has no question at position %', NEW.catalog_version, NEW.position
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'position';
    END IF;
    IF (SELECT count(DISTINCT s ->> 'id') <> count(s ->> 'id') FROM jsonb_array_elements(
            CASE jsonb_typeof(q -> 'sources') WHEN 'array' THEN q -> 'sources' ELSE '[]' END) AS s) THEN
        RAISE EXCEPTION 'evalledger: question % of catalog % names a source id twice', q ->> 'id', NEW.catalog_version
            USING ERRCODE = 'check_violation', COLUMN = 'sources';
    END IF;
    NEW.question_id := q ->> 'id';
    NEW.question_type := q ->> 'type';
    NEW.question_text := q ->> 'text';
    NEW.sources := q -> 'sources';
    NEW.uses_stale_fixture := (q -> 'uses_stale_fixture')::boolean;
    NEW.pass_criteria := q -> 'pass_criteria';
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_catalog_question_10_admit BEFORE INSERT ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_question_admit_v1();
