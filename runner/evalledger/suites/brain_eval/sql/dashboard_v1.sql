-- Dashboard and audit views v1: seed 002's six dashboard panels, one view per panel, each read
-- under the row-level security of the role that queries it (RevOps: the 24-month hot tier;
-- auditors: everything the ledger retains). Installed by migrations/0002.dashboards.sql, which
-- sets the owner role and search_path; every name here is schema-qualified all the same.
--
-- How the reader's row-level security applies, on PostgreSQL 14 as on 15+:
-- An ordinary view reads its tables with its owner's rights, and the owner's policy here is
-- USING (true): on PostgreSQL 14, which has no security_invoker, simply leaving the option out
-- would show RevOps the cold tier. So each panel's query lives in a SECURITY INVOKER SQL function
-- (<panel>_rows_v1) and the view is `SELECT * FROM` that function. A function called from a view
-- runs as the querying role, so its reads are filtered by the querying role's policies on every
-- version, and the same objects exist on 14 and 15+ (one code path, tested on whatever server
-- the tests run on; tests/db/test_dashboards.py also switches security_invoker off to check the
-- PostgreSQL 14 behaviour). The functions are STABLE LANGUAGE sql with no SET clause and no
-- SECURITY DEFINER, so the planner inlines them into the calling query: filters on a view push
-- down as if the view held the query itself. Without a SET search_path their bodies are parsed
-- with the caller's search_path, hence the qualified names (pg_temp is never searched for
-- functions or operators, and a SECURITY INVOKER function only ever acts as its caller).
-- Where the server has it (15+), the views also get security_invoker = true, so the view itself
-- checks privileges as the reader too (belt and braces; shown by \d+ and to BI tools).
--
-- Only completed runs count: an in-progress run has no decision, no cost, and reviewer-scored
-- fields that may still change. Views are never dropped or replaced: a changed panel is a _v2.

-- =============================================================================================
-- Per-brain quarterly trend
-- =============================================================================================
-- brain_quarterly_trend_rows_v1: per brain, its last 8 completed quarterly runs with each aggregated dimension as a column.
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
           r.decision::text,
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
             WHERE l.brain_under_test = t.target_id
               AND l.run_trigger = 'quarterly'
               AND l.completed_at IS NOT NULL
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 8) r
$$;

-- brain_quarterly_trend_v1: per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.
CREATE VIEW evalledger.brain_quarterly_trend_v1 AS
    SELECT * FROM evalledger.brain_quarterly_trend_rows_v1();
COMMENT ON VIEW evalledger.brain_quarterly_trend_v1 IS
    'Per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.';

-- =============================================================================================
-- Most-failing questions
-- =============================================================================================
-- most_failing_questions_rows_v1: per catalog question, completed runs it appeared in, runs it failed in, and its rank by fail share.
CREATE FUNCTION evalledger.most_failing_questions_rows_v1()
RETURNS TABLE (
    question_id varchar(16),
    runs_seen   bigint,
    runs_failed bigint,
    fail_pct    numeric,
    fail_rank   bigint)
LANGUAGE sql STABLE AS $$
    SELECT s.question_id, s.runs_seen, s.runs_failed,
           round(100.0 * s.runs_failed / s.runs_seen, 2),
           rank() OVER (ORDER BY s.runs_failed::numeric / s.runs_seen DESC, s.runs_failed DESC)
      FROM (SELECT q.question_id,
                   count(*) AS runs_seen,  -- a question appears at most once per run
                   count(*) FILTER (WHERE NOT q.question_passed) AS runs_failed
              FROM evalledger.brain_eval_question_score q
              JOIN evalledger.brain_eval_log l ON l.eval_run_id = q.eval_run_id
             WHERE l.completed_at IS NOT NULL
             GROUP BY q.question_id) s
$$;

-- most_failing_questions_v1: per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).
CREATE VIEW evalledger.most_failing_questions_v1 AS
    SELECT * FROM evalledger.most_failing_questions_rows_v1();
COMMENT ON VIEW evalledger.most_failing_questions_v1 IS
    'Per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).';

-- =============================================================================================
-- Stale-fixture pass rate
-- =============================================================================================
-- stale_fixture_pass_rate_rows_v1: per completed run, its stale-fixture questions, how many were recognised, and the sev-2 flag.
CREATE FUNCTION evalledger.stale_fixture_pass_rate_rows_v1()
RETURNS TABLE (
    eval_run_id      uuid,
    brain_under_test varchar(16),
    run_trigger      text,
    started_at       timestamptz,
    completed_at     timestamptz,
    stale_questions  bigint,
    stale_recognised bigint,
    stale_missed     bigint,
    all_recognised   boolean,
    sev2_incident    boolean)
LANGUAGE sql STABLE AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.started_at, l.completed_at,
           count(*) FILTER (WHERE q.uses_stale_fixture),
           count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized),
           count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized),
           -- NULL when the run had no stale-fixture question: nothing to recognise.
           bool_and(q.staleness_correctly_recognized) FILTER (WHERE q.uses_stale_fixture),
           count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized) > 0
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id = l.eval_run_id
     WHERE l.completed_at IS NOT NULL
     GROUP BY l.eval_run_id
$$;

-- stale_fixture_pass_rate_v1: per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).
CREATE VIEW evalledger.stale_fixture_pass_rate_v1 AS
    SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v1();
COMMENT ON VIEW evalledger.stale_fixture_pass_rate_v1 IS
    'Per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).';

-- =============================================================================================
-- Reviewer calibration
-- =============================================================================================
-- reviewer_calibration_rows_v1: per reviewer, the distribution of the narrative-coherence ratings they gave in completed runs.
CREATE FUNCTION evalledger.reviewer_calibration_rows_v1()
RETURNS TABLE (
    reviewer_user_id uuid,
    runs_reviewed    bigint,
    ratings          bigint,
    rating_1         bigint,
    rating_2         bigint,
    rating_3         bigint,
    rating_4         bigint,
    rating_5         bigint,
    rating_mean      numeric,
    rating_stddev    numeric)
LANGUAGE sql STABLE AS $$
    SELECT l.reviewer_user_id,
           count(DISTINCT l.eval_run_id),
           count(q.narrative_coherence_rating),
           count(*) FILTER (WHERE q.narrative_coherence_rating = 1),
           count(*) FILTER (WHERE q.narrative_coherence_rating = 2),
           count(*) FILTER (WHERE q.narrative_coherence_rating = 3),
           count(*) FILTER (WHERE q.narrative_coherence_rating = 4),
           count(*) FILTER (WHERE q.narrative_coherence_rating = 5),
           round(avg(q.narrative_coherence_rating), 4),
           round(stddev_samp(q.narrative_coherence_rating), 4)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id = l.eval_run_id
     WHERE l.completed_at IS NOT NULL
     GROUP BY l.reviewer_user_id
$$;

-- reviewer_calibration_v1: per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.
CREATE VIEW evalledger.reviewer_calibration_v1 AS
    SELECT * FROM evalledger.reviewer_calibration_rows_v1();
COMMENT ON VIEW evalledger.reviewer_calibration_v1 IS
    'Per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.';

-- =============================================================================================
-- Cost per run trend
-- =============================================================================================
-- cost_per_run_rows_v1: per completed run, its token cost and reviewer hours, by brain and time.
CREATE FUNCTION evalledger.cost_per_run_rows_v1()
RETURNS TABLE (
    brain_under_test            varchar(16),
    eval_run_id                 uuid,
    run_trigger                 text,
    started_at                  timestamptz,
    completed_at                timestamptz,
    question_count              integer,
    token_cost_usd              numeric(10,4),
    reviewer_hours_spent        numeric(5,2),
    token_cost_per_question_usd numeric)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.eval_run_id, l.run_trigger::text, l.started_at, l.completed_at,
           l.question_count, l.token_cost_usd, l.reviewer_hours_spent,
           round(l.token_cost_usd / l.question_count, 4)
      FROM evalledger.brain_eval_log l
     WHERE l.completed_at IS NOT NULL
$$;

-- cost_per_run_v1: per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.
CREATE VIEW evalledger.cost_per_run_v1 AS
    SELECT * FROM evalledger.cost_per_run_rows_v1();
COMMENT ON VIEW evalledger.cost_per_run_v1 IS
    'Per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.';

-- =============================================================================================
-- Production-vs-eval prompt comparison
-- =============================================================================================
-- prompt_drift_rows_v1: per brain, the prompt hash of its latest production analysis against the hash of its last passing eval.
-- A production analysis is a brain_analysis_log row of origin 'production' (the harness records
-- its own analyses, origin 'eval', in the same table); a passing eval is a completed run decided
-- pass or pass_with_notes. Latest means produced_at, last means started_at.
CREATE FUNCTION evalledger.prompt_drift_rows_v1()
RETURNS TABLE (
    brain                       varchar(16),
    production_prompt_hash      varchar(64),
    production_last_seen_at     timestamptz,
    eval_prompt_hash            varchar(64),
    eval_prompt_version_label   varchar(64),
    eval_run_id                 uuid,
    eval_decision               text,
    eval_started_at             timestamptz,
    prompt_drift                boolean)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, p.system_prompt_hash, p.produced_at,
           e.system_prompt_hash, e.system_prompt_version_label, e.eval_run_id, e.decision::text,
           e.started_at,
           -- NULL without production traffic; TRUE when production runs a prompt that never passed.
           CASE WHEN p.system_prompt_hash IS NOT NULL
                THEN p.system_prompt_hash IS DISTINCT FROM e.system_prompt_hash END
      FROM evalledger.target t
      LEFT JOIN LATERAL (
            SELECT a.system_prompt_hash, a.produced_at
              FROM evalledger.brain_analysis_log a
             WHERE a.brain = t.target_id AND a.origin = 'production'
             ORDER BY a.produced_at DESC, a.created_at DESC, a.analysis_id DESC
             LIMIT 1) p ON true
      LEFT JOIN LATERAL (
            SELECT l.eval_run_id, l.system_prompt_hash, l.system_prompt_version_label, l.decision, l.started_at
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test = t.target_id
               AND l.completed_at IS NOT NULL
               AND l.decision IN ('pass', 'pass_with_notes')
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 1) e ON true
     WHERE t.kind = 'brain'
$$;

-- prompt_drift_v1: per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.
CREATE VIEW evalledger.prompt_drift_v1 AS
    SELECT * FROM evalledger.prompt_drift_rows_v1();
COMMENT ON VIEW evalledger.prompt_drift_v1 IS
    'Per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.';

-- =============================================================================================
-- security_invoker where the server has it (PostgreSQL 15+)
-- =============================================================================================
DO $invoker$
DECLARE
    v text;
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        FOREACH v IN ARRAY ARRAY['brain_quarterly_trend_v1', 'most_failing_questions_v1',
                                 'stale_fixture_pass_rate_v1', 'reviewer_calibration_v1',
                                 'cost_per_run_v1', 'prompt_drift_v1'] LOOP
            EXECUTE format('ALTER VIEW evalledger.%I SET (security_invoker = true)', v);
        END LOOP;
    END IF;
END
$invoker$;
