-- As in the _v1 panels, each view reads a SECURITY INVOKER function, so every reader reads
-- through its own row-level security on PostgreSQL 14 too. The functions over the by-month tables
-- set their search_path (they are aggregates of bounded size: nothing to push down); the per-run
-- ones are plain SQL with every operator schema-qualified, so a BI tool's filters push down.
-- Every _v1 view stays as it is: BI tools read them.
-- brain_trend_rows_v1: per brain, its last p_last completed runs of one trigger (quarterly when
-- p_trigger is NULL: seed 002's per-brain quarterly trend), newest first, each aggregated
-- dimension a numeric column as the decision compared it. The dashboards' trend panel with their
-- filters: a brain, the first and last month started (UTC; whole months), the trigger and how many
-- runs. Read through (brain_under_test, started_at DESC) (index 1), so it costs what p_last runs
-- per brain cost. Plain SQL without SET, every operator schema-qualified (as brain_quarterly_trend_rows_v1).
-- An open run past its deadline is in it as abandoned, decided fail, with no scores, before the next
-- write closes it (brain_eval_run_state_v1; issue 37, item 2): no run is left out of a pass rate.
CREATE FUNCTION evalledger.brain_trend_rows_v1(
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
    narrative_coherence_mean       numeric)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id, r.run_trigger::text,
           pg_catalog.to_char(pg_catalog.timezone('UTC', r.started_at), 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           CASE WHEN r.completed_at IS NULL THEN 'fail' ELSE r.decision::text END,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'citation_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'hallucination_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'staleness_recognition_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'diagnosis_accuracy_mean')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'lever_mapping_correctness')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'confidence_calibration_in_band')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'narrative_coherence_mean')::numeric
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT l.*, pg_catalog.row_number() OVER (ORDER BY l.started_at DESC, l.eval_run_id DESC) AS recency_rank
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger
               AND (l.completed_at IS NOT NULL
                    OR pg_catalog.now() OPERATOR(pg_catalog.>=) evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id))
               AND (p_from_month IS NULL
                    OR l.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
               AND (p_to_month IS NULL
                    OR l.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                            OPERATOR(pg_catalog.+) interval '1 month'))
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT p_last) r
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION brain_trend_rows_v1(text, date, date, text, integer) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
