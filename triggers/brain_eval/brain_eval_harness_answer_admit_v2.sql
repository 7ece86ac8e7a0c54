-- brain_eval_harness_answer_admit_v2: one brain answer of an open harness run you may read
-- (brain_eval_open_harness_v2), for one of its questions, with the analysis row the brain produced
-- for it since the run started. The automatic scores are the database's, computed from the stored
-- answer by brain_eval_answer_scores_v1 (the runner supplies none), with the lever enum of the
-- prompt's lever-mapped brain (brain_eval_levers_v1: by the prompt, not the label), the same as for a
-- recorded run. An answer the runner says kept the contract must have claims the database can score.
CREATE FUNCTION evalledger.brain_eval_harness_answer_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    harness evalledger.brain_eval_harness_run;
    analysis evalledger.brain_analysis_log;
    given jsonb;
    policy jsonb;
    problem text;
    computed jsonb;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_eval_harness_answer', jsonb_build_object(
        'citation_rate', NEW.citation_rate, 'confidence_distribution', NEW.confidence_distribution,
        'lever_mapping_violations', NEW.lever_mapping_violations));
    harness := evalledger.brain_eval_open_harness_v2(NEW.eval_run_id, 'answers');
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
    IF analysis.produced_at < run.started_at THEN
        RAISE EXCEPTION 'evalledger: analysis % was produced at %, before run % started at %', NEW.analysis_id,
                to_char(analysis.produced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), run.eval_run_id,
                to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            USING ERRCODE = 'check_violation', COLUMN = 'analysis_id',
                  CONSTRAINT = 'brain_eval_harness_answer_analysis_during_the_run';
    END IF;
    IF NEW.contract_error IS NULL THEN
        problem := evalledger.brain_eval_claims_problem_v1(analysis.claims);
        IF problem IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: analysis % cannot be scored: %', NEW.analysis_id, problem
                USING ERRCODE = 'check_violation', COLUMN = 'analysis_id',
                      CONSTRAINT = 'brain_eval_harness_answer_answer_scorable',
                      HINT = 'an answer that broke the contract is recorded with its contract_error';
        END IF;
    END IF;

    SELECT c.sources INTO given FROM evalledger.brain_eval_catalog_question c
     WHERE c.catalog_version = harness.catalog_version AND c.question_id = NEW.question_id;
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    computed := evalledger.brain_eval_answer_scores_v1(
        analysis.claims, given, analysis.proposed_actions,
        evalledger.brain_eval_levers_v1(run.brain_under_test, run.system_prompt_hash, policy),
        NEW.contract_error IS NOT NULL);
    NEW.citation_rate := (computed ->> 'citation_rate')::numeric;
    NEW.confidence_distribution := computed -> 'confidence_distribution';
    NEW.lever_mapping_violations := (computed ->> 'lever_mapping_violations')::integer;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_harness_answer_10_admit BEFORE INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_answer_admit_v2();
