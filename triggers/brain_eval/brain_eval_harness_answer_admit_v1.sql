-- brain_eval_harness_answer_admit_v1: one brain answer of an open harness run, for one of its
-- questions, with the analysis row the brain produced for it. The automatic scores are the
-- database's, computed here from the stored answer (the runner supplies none): citation_rate
-- (numerical claims citing only sources given for the question, and at least one, over numerical
-- claims; 1 when there are none), the confidence distribution (percent of claims per label), and
-- for a brain the rubric maps levers for, the proposed action types outside its lever enum. An
-- answer that broke the contract scores nothing: 0, all zero, and (where levers apply) 1 violation.
CREATE FUNCTION evalledger.brain_eval_harness_answer_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    harness evalledger.brain_eval_harness_run;
    analysis evalledger.brain_analysis_log;
    given jsonb;
    levers text[];
    applies boolean;
    numerical integer;
    cited integer;
    total integer;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_eval_harness_answer', jsonb_build_object(
        'citation_rate', NEW.citation_rate, 'confidence_distribution', NEW.confidence_distribution,
        'lever_mapping_violations', NEW.lever_mapping_violations));
    harness := evalledger.brain_eval_open_harness_v1(NEW.eval_run_id, 'answers');
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF NEW.recorded IS DISTINCT FROM (harness.answers = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: run % takes % answers only', NEW.eval_run_id, harness.answers
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;
    IF NOT NEW.question_id = ANY (harness.question_ids) THEN
        RAISE EXCEPTION 'evalledger: question % is not one of run %''s', NEW.question_id, NEW.eval_run_id
            USING ERRCODE = 'check_violation', COLUMN = 'question_id';
    END IF;
    SELECT a.* INTO analysis FROM evalledger.brain_analysis_log a WHERE a.analysis_id = NEW.analysis_id;
    IF analysis.analysis_id IS NULL OR analysis.origin <> 'eval' OR analysis.brain <> run.brain_under_test
       OR analysis.model_id <> run.model_id OR analysis.system_prompt_hash <> run.system_prompt_hash
       OR analysis.question_id IS DISTINCT FROM NEW.question_id THEN
        RAISE EXCEPTION 'evalledger: analysis % is not this run''s brain answering %', NEW.analysis_id, NEW.question_id
            USING ERRCODE = 'check_violation', COLUMN = 'analysis_id';
    END IF;

    SELECT c.sources INTO given FROM evalledger.brain_eval_catalog_question c
     WHERE c.catalog_version = harness.catalog_version AND c.question_id = NEW.question_id;
    SELECT v.levers INTO levers FROM evalledger.brain_version v WHERE v.brain_version_id = harness.brain_version_id;
    applies := coalesce((SELECT r.definition #> '{question_pass,lever_mapping_applies_to}' ? run.brain_under_test
                           FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id), false);

    IF NEW.contract_error IS NOT NULL THEN
        NEW.citation_rate := 0;
        NEW.confidence_distribution := '{"high_confidence_pct": 0, "multi_source_pct": 0, "inference_pct": 0, "speculation_pct": 0}';
        NEW.lever_mapping_violations := CASE WHEN applies THEN 1 END;
    ELSE
        SELECT count(*) FILTER (WHERE (c ->> 'numerical')::boolean),
               count(*) FILTER (WHERE (c ->> 'numerical')::boolean
                                  AND jsonb_array_length(c -> 'source_ids') > 0
                                  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(c -> 'source_ids') AS s(id)
                                                   WHERE NOT jsonb_path_exists(given, '$[*] ? (@.id == $id)',
                                                                               jsonb_build_object('id', s.id)))),
               count(*)
          INTO numerical, cited, total
          FROM jsonb_array_elements(analysis.claims) AS c;
        NEW.citation_rate := CASE WHEN numerical = 0 THEN 1 ELSE round(cited::numeric / numerical, 4) END;
        NEW.confidence_distribution := (
            SELECT jsonb_object_agg(label || '_pct',
                                    CASE WHEN total = 0 THEN 0
                                         ELSE round(100.0 * (SELECT count(*) FROM jsonb_array_elements(analysis.claims) c
                                                              WHERE c ->> 'confidence' = l.confidence) / total, 2) END)
              FROM (VALUES ('high', 'high_confidence'), ('multi_source', 'multi_source'),
                           ('inference', 'inference'), ('speculation', 'speculation')) AS l(confidence, label));
        NEW.lever_mapping_violations := CASE WHEN applies THEN (
            SELECT count(*) FROM jsonb_array_elements(coalesce(analysis.proposed_actions, '[]')) AS p
             WHERE NOT (p ->> 'action_type') = ANY (levers) OR p ->> 'action_type' IS NULL) END;
    END IF;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
