-- brain_eval_scores_v1: the seven aggregated_scores of a run, computed from its question rows.
CREATE FUNCTION evalledger.brain_eval_scores_v1(run_id uuid, band jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'citation_rate', round(avg(q.citation_rate), 6),
        'hallucination_rate', round(coalesce(sum(q.hallucinations_detected)::numeric
                                             / nullif(sum(q.total_claims), 0), 0), 6),
        'staleness_recognition_rate',
            round(count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized)::numeric
                  / nullif(count(*) FILTER (WHERE q.uses_stale_fixture), 0), 6),
        'diagnosis_accuracy_mean', round(avg(q.diagnosis_accuracy_score), 6),
        'lever_mapping_correctness',
            round(count(*) FILTER (WHERE q.lever_mapping_violations = 0)::numeric
                  / nullif(count(q.lever_mapping_violations), 0), 6),
        'confidence_calibration_in_band',
            round(avg(CASE WHEN evalledger.confidence_in_band_v1(q.confidence_distribution, band)
                           THEN 1 ELSE 0 END), 6),
        'narrative_coherence_mean', round(avg(q.narrative_coherence_rating), 6))
      FROM evalledger.brain_eval_question_score q
     WHERE q.eval_run_id = run_id;
$$;
