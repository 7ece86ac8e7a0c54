-- Each panel is a view over a SECURITY INVOKER SQL function (<panel>_rows_v1): a function called
-- from a view runs as the querying role, so RevOps (hot tier) and auditors (everything) each read
-- through their own row-level security on PostgreSQL 14 too, which has no security_invoker; the
-- functions are plain STABLE SQL, so the planner inlines them and filters push down. Without a SET
-- search_path (which would stop the inlining) their bodies name everything schema-qualified,
-- comparisons included (OPERATOR(pg_catalog.=)): an exact-type operator in a schema on the
-- reader's path would otherwise be picked over pg_catalog's, and run as the reader. Only
-- completed runs count. Where the
-- server has it (15+), the views also get security_invoker = true (belt and braces).
-- brain_quarterly_trend_rows_v1: per brain, its last 8 completed quarterly runs with each aggregated dimension as a column.
-- An open run past its deadline counts as completed, abandoned, decided fail, with no scores, before
-- the next write closes it (brain_eval_run_state_v1; issue 37, item 2).
CREATE FUNCTION evalledger.brain_quarterly_trend_rows_v1()
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
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
    SELECT t.target_id, r.recency_rank, r.eval_run_id,
           to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           CASE WHEN r.completed_at IS NULL THEN 'fail' ELSE r.decision::text END,
           (r.aggregated_scores ->> 'citation_rate')::numeric,
           (r.aggregated_scores ->> 'hallucination_rate')::numeric,
           (r.aggregated_scores ->> 'staleness_recognition_rate')::numeric,
           (r.aggregated_scores ->> 'diagnosis_accuracy_mean')::numeric,
           (r.aggregated_scores ->> 'lever_mapping_correctness')::numeric,
           (r.aggregated_scores ->> 'confidence_calibration_in_band')::numeric,
           (r.aggregated_scores ->> 'narrative_coherence_mean')::numeric
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT l.*, row_number() OVER (ORDER BY l.started_at DESC, l.eval_run_id DESC) AS recency_rank
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.run_trigger OPERATOR(pg_catalog.=) 'quarterly'
               AND (l.completed_at IS NOT NULL
                    OR pg_catalog.now() OPERATOR(pg_catalog.>=) evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id))
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 8) r
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION brain_quarterly_trend_rows_v1() TO evalledger_revops, evalledger_auditor;
