-- question_passes_v2: a question row against its pass criteria (the catalog question's own, over
-- the rubric's question_pass defaults), compared on exact values. NULL while the row lacks a field
-- its criteria need (question_needs_v2); never true for an answer that broke the contract, nor for
-- one with no claims to check: evidence that cannot be measured does not pass. The lever criterion
-- applies where the rubric maps levers for one of the run's brains (its prompt's, not its label's).
CREATE FUNCTION evalledger.question_passes_v2(
    q evalledger.brain_eval_question_score, policy jsonb, brains text[], criteria jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    WITH p AS (SELECT (policy -> 'question_pass') || coalesce(nullif(criteria, 'null'::jsonb), '{}') AS c)
    SELECT CASE
             WHEN cardinality(evalledger.question_needs_v2(q, policy, brains)) > 0 THEN NULL
             ELSE NOT coalesce((c ->> 'answer_broke_contract')::boolean, false)
              AND q.total_claims > 0
              AND q.hallucinations_detected <= (c ->> 'max_hallucinations')::numeric
              AND q.citation_rate >= (c ->> 'min_citation_rate')::numeric
              AND (NOT q.uses_stale_fixture OR q.staleness_correctly_recognized)
              AND (NOT coalesce(policy -> 'diagnosis_question_types' ? q.question_type, false)
                   OR q.diagnosis_accuracy_score >= (c ->> 'min_diagnosis_accuracy')::numeric)
              AND q.narrative_coherence_rating >= (c ->> 'min_narrative_coherence')::numeric
              AND (NOT coalesce((policy #> '{question_pass,lever_mapping_applies_to}') ?| brains, false)
                   OR q.lever_mapping_violations <= (c ->> 'max_lever_violations')::numeric)
           END
      FROM p;
$$;
