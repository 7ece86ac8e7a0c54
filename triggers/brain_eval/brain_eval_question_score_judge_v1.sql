-- brain_eval_question_score_judge_v1: judges a question row the run's reviewer has just changed
-- (BEFORE UPDATE, after brain_eval_question_score_write_v4 has checked who may change what):
-- diagnosis accuracy only on the question types the rubric scores it on, never more supported claims
-- (total minus hallucinations) than the stored answer holds, and question_passed computed
-- (brain_eval_question_verdict_v1). SECURITY DEFINER, so it reads the question's pass thresholds
-- with the code role's rights: the reviewer holds EXECUTE on neither the policy helper nor the
-- verdict, and may not attach this function to a table of its own either (CREATE TRIGGER needs
-- EXECUTE, which no role holds). What the refusals say is the reviewer's own input and the answer
-- it reads; they name no threshold.
CREATE FUNCTION evalledger.brain_eval_question_score_judge_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    judged_by jsonb := evalledger.brain_eval_question_policy_v2(NEW.eval_run_id, NEW.question_id);
BEGIN
    IF NEW.diagnosis_accuracy_score IS NOT NULL
       AND NOT coalesce(judged_by #> '{policy,diagnosis_question_types}' ? NEW.question_type, false) THEN
        RAISE EXCEPTION 'evalledger: diagnosis accuracy does not apply to a % question (%): leave it out',
                NEW.question_type, NEW.question_id
            USING ERRCODE = 'check_violation', COLUMN = 'diagnosis_accuracy_score',
                  CONSTRAINT = 'brain_eval_question_score_diagnosis_only_where_it_applies',
                  HINT = 'seed 002: it is NULL for question types where this dimension does not apply';
    END IF;
    IF NEW.total_claims - NEW.hallucinations_detected > (judged_by ->> 'answer_claims')::integer THEN
        RAISE EXCEPTION 'evalledger: % supported claims (% total, % unsupported) on %, whose answer holds % claims',
                NEW.total_claims - NEW.hallucinations_detected, NEW.total_claims, NEW.hallucinations_detected,
                NEW.question_id, judged_by ->> 'answer_claims'
            USING ERRCODE = 'check_violation', COLUMN = 'total_claims',
                  CONSTRAINT = 'brain_eval_question_score_claims_within_answer',
                  HINT = 'a claim the answer does not list is unsupported: count it as a hallucination too';
    END IF;
    NEW.question_passed := evalledger.brain_eval_question_verdict_v1(NEW, judged_by);
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_question_score_15_judge BEFORE UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_judge_v1();
