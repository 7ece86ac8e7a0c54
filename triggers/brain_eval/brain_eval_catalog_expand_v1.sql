-- brain_eval_catalog_expand_v1: a loaded catalog's questions become question rows, one per entry
-- of its document, in the document's order, within the statement that loaded it.
CREATE FUNCTION evalledger.brain_eval_catalog_expand_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_catalog_question (catalog_version, position)
    SELECT NEW.catalog_version, n::integer
      FROM generate_series(1, NEW.question_count) AS n;
    RETURN NULL;
END;
$$;

CREATE TRIGGER brain_eval_catalog_20_expand AFTER INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_expand_v1();
