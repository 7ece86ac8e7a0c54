-- brain_eval_scores_v1: the seven aggregated_scores of a run, computed from its question rows,
-- exact (the decision compares these; rounding is for display). A score with nothing to measure
-- is null: no claims, no stale-fixture question, no lever mapping, no diagnosis-type question.
CREATE FUNCTION evalledger.brain_eval_scores_v1(run_id uuid, band jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'citation_rate', avg(q.citation_rate),
        'hallucination_rate', sum(q.hallucinations_detected)::numeric / nullif(sum(q.total_claims), 0),
        'staleness_recognition_rate',
            count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized)::numeric
                / nullif(count(*) FILTER (WHERE q.uses_stale_fixture), 0),
        'diagnosis_accuracy_mean', avg(q.diagnosis_accuracy_score),
        'lever_mapping_correctness',
            count(*) FILTER (WHERE q.lever_mapping_violations = 0)::numeric
                / nullif(count(q.lever_mapping_violations), 0),
        'confidence_calibration_in_band',
            avg(CASE WHEN evalledger.confidence_in_band_v1(q.confidence_distribution, band) THEN 1 ELSE 0 END),
        'narrative_coherence_mean', avg(q.narrative_coherence_rating))
      FROM evalledger.brain_eval_question_score q
     WHERE q.eval_run_id = run_id;
$$;
