-- question_needs_v2: the fields a question row still lacks for its criteria, in the order a
-- reviewer enters them: the reviewer's counts and coherence always, staleness on a stale-fixture
-- question, diagnosis accuracy where the rubric says the question type has it, lever violations
-- where the rubric maps levers for one of the run's brains (run_brains_v1: the label and every
-- brain of the prompt, not the label alone). Empty when the row is whole.
CREATE FUNCTION evalledger.question_needs_v2(
    q evalledger.brain_eval_question_score, policy jsonb, brains text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_remove(ARRAY[
        CASE WHEN q.hallucinations_detected IS NULL THEN 'hallucinations_detected' END,
        CASE WHEN q.total_claims IS NULL THEN 'total_claims' END,
        CASE WHEN q.uses_stale_fixture AND q.staleness_correctly_recognized IS NULL
             THEN 'staleness_correctly_recognized' END,
        CASE WHEN q.diagnosis_accuracy_score IS NULL
              AND coalesce(policy -> 'diagnosis_question_types' ? q.question_type, false)
             THEN 'diagnosis_accuracy_score' END,
        CASE WHEN q.narrative_coherence_rating IS NULL THEN 'narrative_coherence_rating' END,
        CASE WHEN q.lever_mapping_violations IS NULL
              AND coalesce(policy #> '{question_pass,lever_mapping_applies_to}' ?| brains, false)
             THEN 'lever_mapping_violations' END], NULL);
$$;
