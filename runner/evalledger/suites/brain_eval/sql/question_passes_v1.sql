-- question_passes_v1: a question row against the rubric's per-question pass criteria.
CREATE FUNCTION evalledger.question_passes_v1(
    q evalledger.brain_eval_question_score, policy jsonb, brain text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    WITH p AS (SELECT policy -> 'question_pass' AS c)
    SELECT q.hallucinations_detected <= (c ->> 'max_hallucinations')::int
       AND q.citation_rate >= (c ->> 'min_citation_rate')::numeric
       AND (NOT q.uses_stale_fixture OR coalesce(q.staleness_correctly_recognized, false))
       AND (q.diagnosis_accuracy_score IS NULL
            OR q.diagnosis_accuracy_score >= (c ->> 'min_diagnosis_accuracy')::numeric)
       AND (q.narrative_coherence_rating IS NULL
            OR q.narrative_coherence_rating >= (c ->> 'min_narrative_coherence')::int)
       AND (q.lever_mapping_violations IS NULL
            OR NOT (c -> 'lever_mapping_applies_to') ? brain
            OR q.lever_mapping_violations <= (c ->> 'max_lever_violations')::int)
      FROM p;
$$;
