-- brain_trend_rows_v2: brain_trend_rows_v1's rows (per brain, its last p_last completed runs of one
-- trigger, quarterly when p_trigger is NULL, newest first, with the same filters and columns), each
-- with its error bars: ci95_lo and ci95_hi, each aggregate's 95% interval in seed 002's order
-- (citation, hallucination, staleness, diagnosis, levers, confidence, coherence), NULL where nothing
-- was measured. A completed run is read from its trend row (brain_eval_trend: its columns and its
-- bars in one row, through one index, newest first); an open run past its deadline, in v1 as
-- abandoned (decided fail, no scores, no bars) before the next write closes it, from its own row
-- (open runs are few: one per brain, prompt and catalog). Plain SQL without SET, every operator
-- schema-qualified (as v1), read under the reader's own row-level security. The dashboards' trend
-- panel (panel_trend).
CREATE FUNCTION evalledger.brain_trend_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_last integer)
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
    run_trigger                    text,
    quarter                        text,
    started_at                     timestamptz,
    completed_at                   timestamptz,
    model_id                       varchar(64),
    system_prompt_hash             varchar(64),
    question_catalog_version       varchar(32),
    decision                       text,
    citation_rate                  numeric,
    hallucination_rate             numeric,
    staleness_recognition_rate     numeric,
    diagnosis_accuracy_mean        numeric,
    lever_mapping_correctness      numeric,
    confidence_calibration_in_band numeric,
    narrative_coherence_mean       numeric,
    ci95_lo                        double precision[],
    ci95_hi                        double precision[])
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id, r.run_trigger::text,
           pg_catalog.to_char(pg_catalog.timezone('UTC', r.started_at), 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           r.decision, r.citation_rate, r.hallucination_rate, r.staleness_recognition_rate, r.diagnosis_accuracy_mean,
           r.lever_mapping_correctness, r.confidence_calibration_in_band, r.narrative_coherence_mean, r.ci95_lo, r.ci95_hi
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT x.*, pg_catalog.row_number() OVER (ORDER BY x.started_at DESC, x.eval_run_id DESC) AS recency_rank
              FROM ((SELECT d.eval_run_id, d.run_trigger, d.started_at, d.completed_at, d.model_id, d.system_prompt_hash,
                            d.question_catalog_version, d.decision::text AS decision, d.citation_rate, d.hallucination_rate,
                            d.staleness_recognition_rate, d.diagnosis_accuracy_mean, d.lever_mapping_correctness,
                            d.confidence_calibration_in_band, d.narrative_coherence_mean,
                            ARRAY[d.citation_rate_ci95_lo, d.hallucination_rate_ci95_lo, d.staleness_recognition_rate_ci95_lo, d.diagnosis_accuracy_mean_ci95_lo, d.lever_mapping_correctness_ci95_lo, d.confidence_calibration_in_band_ci95_lo, d.narrative_coherence_mean_ci95_lo] AS ci95_lo,
                            ARRAY[d.citation_rate_ci95_hi, d.hallucination_rate_ci95_hi, d.staleness_recognition_rate_ci95_hi, d.diagnosis_accuracy_mean_ci95_hi, d.lever_mapping_correctness_ci95_hi, d.confidence_calibration_in_band_ci95_hi, d.narrative_coherence_mean_ci95_hi] AS ci95_hi
                       FROM evalledger.brain_eval_trend d
                      WHERE d.brain_under_test OPERATOR(pg_catalog.=) t.target_id
                        AND d.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger::text
                        AND (p_from_month IS NULL
                             OR d.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
                        AND (p_to_month IS NULL
                             OR d.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                                     OPERATOR(pg_catalog.+) interval '1 month'))
                      ORDER BY d.started_at DESC, d.eval_run_id DESC
                      LIMIT p_last)
                    UNION ALL
                    (SELECT l.eval_run_id, l.run_trigger::text, l.started_at, NULL::timestamptz, l.model_id, l.system_prompt_hash,
                            l.question_catalog_version, 'fail', NULL::numeric, NULL::numeric, NULL::numeric, NULL::numeric,
                            NULL::numeric, NULL::numeric, NULL::numeric, NULL::double precision[], NULL::double precision[]
                       FROM evalledger.brain_eval_log l
                      WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id AND l.completed_at IS NULL
                        AND l.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger
                        AND pg_catalog.now() OPERATOR(pg_catalog.>=) evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id)
                        AND (p_from_month IS NULL
                             OR l.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
                        AND (p_to_month IS NULL
                             OR l.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                                     OPERATOR(pg_catalog.+) interval '1 month'))
                      ORDER BY l.started_at DESC, l.eval_run_id DESC
                      LIMIT p_last)) x
             ORDER BY x.started_at DESC, x.eval_run_id DESC
             LIMIT p_last) r
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION brain_trend_rows_v2(text, date, date, text, integer) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
