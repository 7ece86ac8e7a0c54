-- question_fields_needed_v1: question_needs_v2's rule over the fields it reads, for callers that
-- read a question row column by column (the reviewer's queue and question list).
CREATE FUNCTION evalledger.question_fields_needed_v1(
    question_type text, uses_stale_fixture boolean, hallucinations_detected integer, total_claims integer,
    staleness_correctly_recognized boolean, diagnosis_accuracy_score numeric, narrative_coherence_rating integer,
    lever_mapping_violations integer, policy jsonb, brains text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_remove(ARRAY[
        CASE WHEN hallucinations_detected IS NULL THEN 'hallucinations_detected' END,
        CASE WHEN total_claims IS NULL THEN 'total_claims' END,
        CASE WHEN uses_stale_fixture AND staleness_correctly_recognized IS NULL
             THEN 'staleness_correctly_recognized' END,
        CASE WHEN diagnosis_accuracy_score IS NULL
              AND coalesce(policy -> 'diagnosis_question_types' ? question_type, false)
             THEN 'diagnosis_accuracy_score' END,
        CASE WHEN narrative_coherence_rating IS NULL THEN 'narrative_coherence_rating' END,
        CASE WHEN lever_mapping_violations IS NULL
              AND coalesce(policy #> '{question_pass,lever_mapping_applies_to}' ?| brains, false)
             THEN 'lever_mapping_violations' END], NULL);
$$;
GRANT EXECUTE ON FUNCTION question_fields_needed_v1(text, boolean, integer, integer, boolean, numeric, integer, integer, jsonb, text[]) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION question_fields_needed_v1(text,boolean,integer,integer,boolean,numeric,integer,integer,jsonb,text[]) TO evalledger_owner;
