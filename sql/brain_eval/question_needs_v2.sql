-- question_needs_v2: the fields a question row still lacks for its criteria, in the order a
-- reviewer enters them: the reviewer's counts and coherence always, staleness on a stale-fixture
-- question, diagnosis accuracy where the rubric says the question type has it, lever violations
-- where the rubric maps levers for one of the run's brains (run_brains_v1: the label and every
-- brain of the prompt, not the label alone). Empty when the row is whole. The rule is
-- question_fields_needed_v1's, which takes the fields one by one: a reviewer, who may not read a
-- row's question_passed before its run completes, cannot pass the whole row.
CREATE FUNCTION evalledger.question_needs_v2(
    q evalledger.brain_eval_question_score, policy jsonb, brains text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT evalledger.question_fields_needed_v1(
        q.question_type, q.uses_stale_fixture, q.hallucinations_detected, q.total_claims,
        q.staleness_correctly_recognized, q.diagnosis_accuracy_score, q.narrative_coherence_rating,
        q.lever_mapping_violations, policy, brains);
$$;
GRANT EXECUTE ON FUNCTION question_needs_v2(brain_eval_question_score, jsonb, text[]) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION question_needs_v2(brain_eval_question_score,jsonb,text[]) TO evalledger_owner;
