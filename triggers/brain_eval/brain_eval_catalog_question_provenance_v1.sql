-- brain_eval_catalog_question_provenance_v1: a loaded question's provenance becomes provenance rows,
-- one per capture its document entry lists (provenance.captures), in that order, within the
-- statement that loaded the catalog. A question without provenance (written by hand) has none.
CREATE FUNCTION evalledger.brain_eval_catalog_question_provenance_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    captures jsonb;
BEGIN
    SELECT c.document -> 'questions' -> (NEW.position - 1) -> 'provenance' -> 'captures' INTO captures
      FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = NEW.catalog_version;
    IF captures IS NULL OR jsonb_typeof(captures) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(captures) <> 'array' OR jsonb_array_length(captures) = 0 THEN
        RAISE EXCEPTION 'evalledger: question % of catalog %: provenance.captures is a non-empty array',
                NEW.question_id, NEW.catalog_version
            USING ERRCODE = 'check_violation', COLUMN = 'provenance';
    END IF;
    INSERT INTO evalledger.brain_eval_catalog_provenance (catalog_version, question_id, position)
    SELECT NEW.catalog_version, NEW.question_id, n::integer
      FROM generate_series(1, jsonb_array_length(captures)) AS n;
    RETURN NULL;
END;
$$;

CREATE TRIGGER brain_eval_catalog_question_20_provenance AFTER INSERT ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_question_provenance_v1();
