-- brain_eval_harness_question_v1: each answer of a harness run becomes its question row, with the
-- catalog's type and stale-fixture flag and the answer's automatic scores; the reviewer's fields
-- wait for the reviewer. SECURITY DEFINER: a harness run's question rows are the database's alone.
CREATE FUNCTION evalledger.brain_eval_harness_question_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_question_score
           (eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture, citation_rate,
            lever_mapping_violations, confidence_distribution)
    SELECT NEW.eval_run_id, NEW.question_id, NEW.analysis_id, c.question_type, c.uses_stale_fixture,
           NEW.citation_rate, NEW.lever_mapping_violations, NEW.confidence_distribution
      FROM evalledger.brain_eval_harness_run h
      JOIN evalledger.brain_eval_catalog_question c
        ON c.catalog_version = h.catalog_version AND c.question_id = NEW.question_id
     WHERE h.eval_run_id = NEW.eval_run_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER brain_eval_harness_answer_20_question AFTER INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_question_v1();
