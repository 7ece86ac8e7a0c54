-- brain_eval_trend_of_v1: a completed run's trend row (brain_eval_trend) as the database
-- derives it from the run's row (its trigger, times, prompt, catalog, decision, and seed 002's
-- aggregates as brain_trend_rows_v1 reads them from aggregated_scores) and its uncertainty (each
-- aggregate's 95% interval, as brain_eval_intervals_v1 reads it); created_at is the calling
-- transaction's now(). The one derivation, of two sources: the completion trigger stores it from the
-- completed row and the uncertainty just stored (brain_eval_trend_complete_v1), and the ledger's
-- recompute compares every stored row with it of what the recompute derives for the run and its
-- uncertainty (ledger_recompute_v3), so a rewritten run or interval is named where it was rewritten,
-- and a rewritten trend row where it was.
CREATE FUNCTION evalledger.brain_eval_trend_of_v1(l evalledger.brain_eval_log, uncertainty jsonb)
RETURNS evalledger.brain_eval_trend
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.started_at, l.completed_at, l.model_id,
           l.system_prompt_hash, l.question_catalog_version, l.decision,
           (l.aggregated_scores ->> 'citation_rate')::numeric,
           (l.aggregated_scores ->> 'hallucination_rate')::numeric,
           (l.aggregated_scores ->> 'staleness_recognition_rate')::numeric,
           (l.aggregated_scores ->> 'diagnosis_accuracy_mean')::numeric,
           (l.aggregated_scores ->> 'lever_mapping_correctness')::numeric,
           (l.aggregated_scores ->> 'confidence_calibration_in_band')::numeric,
           (l.aggregated_scores ->> 'narrative_coherence_mean')::numeric,
           (uncertainty #>> '{citation_rate,ci95,0}')::float8, (uncertainty #>> '{citation_rate,ci95,1}')::float8,
           (uncertainty #>> '{hallucination_rate,ci95,0}')::float8, (uncertainty #>> '{hallucination_rate,ci95,1}')::float8,
           (uncertainty #>> '{staleness_recognition_rate,ci95,0}')::float8, (uncertainty #>> '{staleness_recognition_rate,ci95,1}')::float8,
           (uncertainty #>> '{diagnosis_accuracy_mean,ci95,0}')::float8, (uncertainty #>> '{diagnosis_accuracy_mean,ci95,1}')::float8,
           (uncertainty #>> '{lever_mapping_correctness,ci95,0}')::float8, (uncertainty #>> '{lever_mapping_correctness,ci95,1}')::float8,
           (uncertainty #>> '{confidence_calibration_in_band,ci95,0}')::float8, (uncertainty #>> '{confidence_calibration_in_band,ci95,1}')::float8,
           (uncertainty #>> '{narrative_coherence_mean,ci95,0}')::float8, (uncertainty #>> '{narrative_coherence_mean,ci95,1}')::float8,
           l.reviewer_user_id, now(), l.created_at
$$;
