-- The readers' named queries (runner/evalledger/bi/): the dashboards' panels with their filters,
-- the drill-down from a run to its evidence, the report's ledger state. Every one runs as the
-- reader (the signed-in login, or the CLI's --as role): row-level security decides what each
-- returns. Each starts with a "-- name: <name>" line and a comment that says what it does.

-- -- `evalledger dashboard` (bi/cli.py) -------------------------------------------------------

-- name: panel_description
-- What a dashboard view shows, from its COMMENT (the BI contract's own words).
SELECT obj_description(to_regclass('evalledger.' || %(panel)s), 'pg_class');

-- -- The dashboards' panels (bi/panels.py), each with the filters: brain, from_month, to_month, trigger ----

-- name: readable
-- Which panels this login may read (the functions and views it may use), whether it reads reviewers' names, and where the hot tier's whole months begin.
SELECT has_function_privilege('evalledger.brain_trend_rows_v2(text, date, date, text, integer)', 'EXECUTE') AS trend,
       has_function_privilege('evalledger.most_failing_questions_rows_v2(text, date, date, text)', 'EXECUTE') AS most_failing,
       has_function_privilege('evalledger.stale_fixture_pass_rate_rows_v2(text, date, date, text, integer)', 'EXECUTE') AS stale_fixture,
       has_function_privilege('evalledger.reviewer_calibration_rows_v2(text, date, date, text, boolean)', 'EXECUTE') AS calibration,
       has_function_privilege('evalledger.cost_by_month_rows_v1(text, date, date, text)', 'EXECUTE') AS cost,
       has_function_privilege('evalledger.prompt_drift_rows_v3(text, date, date, text)', 'EXECUTE') AS drift,
       has_function_privilege('evalledger.judge_agreement_rows_v1(text, date, date, text, boolean)', 'EXECUTE') AS agreement,
       has_function_privilege('evalledger.production_beside_eval_rows_v1(text, date, date, text)', 'EXECUTE') AS beside,
       has_function_privilege('evalledger.takes_quality_trend_rows_v1(text, date, date, integer)', 'EXECUTE') AS takes_quality,
       has_table_privilege('evalledger.work_quality_history_v1', 'SELECT') AS work_quality,
       has_table_privilege('evalledger.brain_eval_log', 'SELECT') AS failed,
       has_table_privilege('evalledger.reviewer', 'SELECT') AS reviewer_names,
       pg_has_role(current_user, 'evalledger_auditor', 'MEMBER') AS every_month,
       pg_has_role(current_user, 'evalledger_reviewer', 'MEMBER')
           AND NOT pg_has_role(current_user, 'evalledger_revops', 'MEMBER')
           AND NOT pg_has_role(current_user, 'evalledger_auditor', 'MEMBER') AS reviewer_only,
       evalledger.whole_hot_months_from_v1() AS whole_months_from;

-- name: completed_runs_readable
-- How many brain-eval runs this login may read, and how many of them are completed: with none completed, the panels say that is why they are empty.
SELECT count(*) AS runs, count(*) FILTER (WHERE completed_at IS NOT NULL) AS completed FROM evalledger.brain_eval_log;

-- name: brains
-- The brains a filter may name, in order.
SELECT target_id FROM evalledger.target WHERE kind = 'brain' ORDER BY target_id;

-- name: panel_trend
-- Per brain, its last 8 completed runs of the trigger (quarterly unless one is chosen), newest first, each with its aggregates' 95 per cent intervals for the error bars: ci95_lo and ci95_hi, in seed 002's order (citation, hallucination, staleness, diagnosis, levers, confidence, coherence), read with the run in one row (brain_trend_rows_v2: the trend row its completion stored; under the reader's own row-level security).
SELECT * FROM evalledger.brain_trend_rows_v2(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, %(trigger)s::text, 8)
 ORDER BY brain_under_test, recency_rank;

-- name: rubric_criteria
-- The hard and soft criteria of a rubric, in order: key, label, comparison, threshold, unit, the brains it applies to (NULL: all).
SELECT r.suite, r.version, c.kind, c.n, c.criterion ->> 'key' AS key, c.criterion ->> 'label' AS label,
       c.criterion ->> 'op' AS op, (c.criterion ->> 'threshold')::numeric AS threshold, c.criterion ->> 'unit' AS unit,
       c.criterion -> 'applies_to' AS applies_to
  FROM evalledger.rubric r
 CROSS JOIN LATERAL (
        SELECT 'hard' AS kind, n, criterion FROM jsonb_array_elements(r.definition -> 'hard_criteria') WITH ORDINALITY h(criterion, n)
        UNION ALL
        SELECT 'soft', n, criterion FROM jsonb_array_elements(r.definition -> 'soft_criteria') WITH ORDINALITY s(criterion, n)) c
 WHERE r.rubric_id = (SELECT l.rubric_id FROM evalledger.brain_eval_log l WHERE l.eval_run_id = %(eval_run_id)s)
 ORDER BY c.kind, c.n;

-- name: panel_most_failing
-- The 20 most failing questions by share of completed runs failed, within each brain and catalog version's ranking.
SELECT * FROM evalledger.most_failing_questions_rows_v2(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, %(trigger)s::text)
 ORDER BY fail_pct DESC, runs_failed DESC, brain_under_test, question_catalog_version, question_id
 LIMIT 20;

-- name: panel_stale_runs
-- The latest 40 completed runs with their stale-fixture pass rate and sev-2 flag, newest first.
SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v2(%(brain)s::text, %(from_month)s::date, %(to_month)s::date,
                                                         %(trigger)s::text, 40)
 ORDER BY started_at DESC, eval_run_id DESC
 LIMIT 40;

-- name: panel_stale_total
-- Over the whole range: completed runs, those with stale-fixture questions, those that recognised all, sev-2 runs, and the pass rate.
SELECT coalesce(sum(runs), 0)::bigint AS runs, coalesce(sum(runs_with_stale), 0)::bigint AS runs_with_stale,
       coalesce(sum(runs_all_recognised), 0)::bigint AS runs_all_recognised, coalesce(sum(sev2_runs), 0)::bigint AS sev2_runs,
       coalesce(sum(stale_questions), 0)::bigint AS stale_questions, coalesce(sum(stale_recognised), 0)::bigint AS stale_recognised,
       sum(stale_recognised)::numeric / nullif(sum(stale_questions), 0) AS stale_pass_rate
  FROM evalledger.stale_fixture_by_month_rows_v1(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, %(trigger)s::text);

-- name: panel_stale_misses
-- The latest 20 sev-2 incidents: completed runs with a stale-fixture question whose staleness was missed, newest first. Each target's runs are walked newest first (index 1) and each run's misses looked up by its id in brain_eval_question_score_stale_missed_idx (whose predicate the miss test spells exactly, coalesce and all), so the read stops at each target's 20th incident, however many came before.
SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.started_at, l.missed
  FROM evalledger.target t
 CROSS JOIN LATERAL (
        SELECT r.eval_run_id, r.brain_under_test, r.run_trigger, r.started_at, m.missed
          FROM evalledger.brain_eval_log r
         CROSS JOIN LATERAL (
                SELECT array_agg(q.question_id::text ORDER BY q.question_id) AS missed
                  FROM evalledger.brain_eval_question_score q
                 WHERE q.eval_run_id = r.eval_run_id AND q.uses_stale_fixture
                   AND NOT coalesce(q.staleness_correctly_recognized, true)) m
         WHERE r.brain_under_test = t.target_id AND r.completed_at IS NOT NULL AND m.missed IS NOT NULL
           AND (%(from_month)s::date IS NULL OR r.started_at >= %(from_month)s::date::timestamp AT TIME ZONE 'UTC')
           AND (%(to_month)s::date IS NULL OR r.started_at < (%(to_month)s::date + interval '1 month') AT TIME ZONE 'UTC')
           AND (%(trigger)s::text IS NULL OR r.run_trigger::text = %(trigger)s::text)
         ORDER BY r.started_at DESC, r.eval_run_id DESC
         LIMIT 20) l
 WHERE %(brain)s::text IS NULL OR t.target_id = %(brain)s::text
 ORDER BY l.started_at DESC, l.eval_run_id DESC
 LIMIT 20;

-- name: panel_calibration
-- Per reviewer over the range: runs reviewed and the distribution of their narrative-coherence ratings.
SELECT * FROM evalledger.reviewer_calibration_rows_v2(%(brain)s::text, %(from_month)s::date, %(to_month)s::date,
                                                      %(trigger)s::text, false)
 ORDER BY runs_reviewed DESC, reviewer_user_id;

-- name: reviewer_names
-- Reviewers' display names, for a login that may read the registry (the auditor; a reviewer reads itself).
SELECT reviewer_user_id, display_name, role_name::text AS role_name FROM evalledger.reviewer;

-- name: panel_cost
-- Per brain and month started: runs, token cost (USD, total and per run), reviewer hours (total and per reporting run).
SELECT * FROM evalledger.cost_by_month_rows_v1(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, %(trigger)s::text)
 ORDER BY started_month, brain_under_test;

-- name: panel_drift
-- Per brain and month: production's latest prompt against the last passing eval's, as of the month's end.
SELECT * FROM evalledger.prompt_drift_rows_v3(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, %(trigger)s::text)
 ORDER BY brain_under_test, month;

-- name: panel_beside
-- Production beside eval: per prompt hash and brain version, the latest run's question beside production's captured queries, the furthest from production first.
SELECT * FROM evalledger.production_beside_eval_rows_v1(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, %(trigger)s::text)
 ORDER BY jaccard, recall, brain_under_test, prompt_hash, started_at DESC
 LIMIT 40;

-- name: panel_agreement
-- Per brain, judge model and quarter: how the judges' drafts agree with the reviewers' final numbers (blind entries only).
SELECT * FROM evalledger.judge_agreement_rows_v1(%(brain)s::text, %(from_month)s::date, %(to_month)s::date,
                                                 %(trigger)s::text, true)
 ORDER BY brain_under_test, judge_model, quarter;

-- name: panel_agreement_total
-- Per brain and judge model over the whole range: the same measures.
SELECT * FROM evalledger.judge_agreement_rows_v1(%(brain)s::text, %(from_month)s::date, %(to_month)s::date,
                                                 %(trigger)s::text, false)
 ORDER BY brain_under_test, judge_model;

-- name: panel_takes_quality_intervals
-- The 95 per cent interval of the overall score of the trend's takes-quality runs, for its error bars (takes_quality_intervals_v1).
SELECT run_id, ci95_lo, ci95_hi
  FROM evalledger.takes_quality_intervals_v1
 WHERE dimension = 'overall' AND run_id = ANY(%(run_ids)s::bigint[]);

-- name: panel_work_quality_intervals
-- The 95 per cent interval of the overall score of the history's work-quality snapshots, for its error bars (work_quality_intervals_v1).
SELECT snapshot_id, ci95_lo, ci95_hi
  FROM evalledger.work_quality_intervals_v1
 WHERE dimension = 'overall' AND snapshot_id = ANY(%(snapshot_ids)s::bigint[]);

-- name: panel_takes_quality
-- The latest 40 completed takes-quality runs (of the brain as target, when one is chosen), newest first, with their rubric epoch and state (an open run past its deadline among them, abandoned, verdict fail). Each run's state is looked up by its key: joined as a table, the state of every run was computed to be hashed (the trend's function is planned at a thousand rows), 3x the time at 10x the runs; a run has one state, so LIMIT 1 only keeps the lookup per run.
SELECT t.*, s.state
  FROM evalledger.takes_quality_trend_rows_v1(%(brain)s::text, %(from_month)s::date, %(to_month)s::date, 40) t
 CROSS JOIN LATERAL (SELECT r.state FROM evalledger.takes_quality_run_state_v1 r WHERE r.run_id = t.run_id LIMIT 1) s
 ORDER BY t.started_at DESC, t.run_id DESC;

-- name: takes_quality_rubrics
-- The score scale and the mean every dimension must reach for a pass, as each rubric the given takes-quality runs were judged by holds them (the active rubric's when no run is given): the trend chart's axis and pass lines.
SELECT b.version, (b.definition -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric AS every_mean_at_least,
       (b.definition -> 'scale' ->> 'min')::numeric AS scale_min, (b.definition -> 'scale' ->> 'max')::numeric AS scale_max
  FROM evalledger.rubric b
 WHERE b.suite = 'takes-quality'
   AND CASE WHEN cardinality(%(run_ids)s::bigint[]) > 0
            THEN b.rubric_id IN (SELECT r.rubric_id FROM evalledger.eval_takes_quality_runs r
                                  WHERE r.id = ANY(%(run_ids)s::bigint[]))
            ELSE b.rubric_id = (SELECT a.rubric_id FROM evalledger.rubric_activation a
                                 WHERE a.suite = 'takes-quality' ORDER BY a.activation_id DESC LIMIT 1) END
 ORDER BY every_mean_at_least, b.version;

-- name: panel_work_quality
-- The latest 40 completed work-quality snapshots of every target, newest first, with their state and their verdict against the previous one (an open run past its deadline among them, abandoned, a regression).
SELECT h.name, h.kind, h.at, h.run_id, h.snapshot_id, s.state, h.overall, h.prev_run_id, h.overall_delta, h.verdict,
       h.regression, h.regression_reasons, h.cost_usd, h.judges_cost_usd
  FROM evalledger.work_quality_history_v1 h
  JOIN evalledger.work_quality_run_state_v1 s USING (snapshot_id)
 WHERE (%(from_month)s::date IS NULL OR h.at >= %(from_month)s::date::timestamp AT TIME ZONE 'UTC')
   AND (%(to_month)s::date IS NULL OR h.at < (%(to_month)s::date + interval '1 month') AT TIME ZONE 'UTC')
 ORDER BY h.at DESC, h.snapshot_id DESC
 LIMIT 40;

-- name: panel_failed
-- The latest 20 runs decided fail, newest first, read in order from brain_eval_log_failed_started_idx by every reader (under RevOps' and a reviewer's policies decision = 'fail' is no index condition on seed 002's index 2).
SELECT eval_run_id, brain_under_test, run_trigger::text AS run_trigger, question_catalog_version, started_at,
       decision_rationale
  FROM evalledger.brain_eval_log
 WHERE decision = 'fail'
   AND (%(brain)s::text IS NULL OR brain_under_test = %(brain)s::text)
   AND (%(from_month)s::date IS NULL OR started_at >= %(from_month)s::date::timestamp AT TIME ZONE 'UTC')
   AND (%(to_month)s::date IS NULL OR started_at < (%(to_month)s::date + interval '1 month') AT TIME ZONE 'UTC')
   AND (%(trigger)s::text IS NULL OR run_trigger::text = %(trigger)s::text)
 ORDER BY started_at DESC, eval_run_id DESC
 LIMIT 20;

-- name: panel_unfinished_brain_eval
-- The latest 20 brain-eval runs not completed whole (open, abandoned: past the deadline, or cancelled), newest first, as brain_eval_run_state_v1 reads them.
SELECT 'brain-eval' AS suite, s.eval_run_id::text AS run, s.brain_under_test AS subject, s.created_at, s.deadline_at,
       s.state, s.decision_rationale AS why
  FROM evalledger.brain_eval_run_state_v1 s
 WHERE s.state IN ('open', 'abandoned', 'cancelled')
   AND (%(brain)s::text IS NULL OR s.brain_under_test = %(brain)s::text)
   AND (%(from_month)s::date IS NULL OR s.created_at >= %(from_month)s::date::timestamp AT TIME ZONE 'UTC')
   AND (%(to_month)s::date IS NULL OR s.created_at < (%(to_month)s::date + interval '1 month') AT TIME ZONE 'UTC')
 ORDER BY s.created_at DESC, s.eval_run_id
 LIMIT 20;

-- name: panel_unfinished_takes_quality
-- The latest 20 takes-quality runs not completed whole (open, abandoned or cancelled), newest first, as takes_quality_run_state_v1 reads them.
SELECT 'takes-quality' AS suite, s.run_id::text AS run, s.target_id AS subject, s.created_at, s.deadline_at, s.state,
       s.verdict_message AS why
  FROM evalledger.takes_quality_run_state_v1 s
 WHERE s.state IN ('open', 'abandoned', 'cancelled')
   AND (%(brain)s::text IS NULL OR s.target_id = %(brain)s::text)
   AND (%(from_month)s::date IS NULL OR s.created_at >= %(from_month)s::date::timestamp AT TIME ZONE 'UTC')
   AND (%(to_month)s::date IS NULL OR s.created_at < (%(to_month)s::date + interval '1 month') AT TIME ZONE 'UTC')
 ORDER BY s.created_at DESC, s.run_id DESC
 LIMIT 20;

-- name: panel_unfinished_work_quality
-- The latest 20 work-quality runs not completed whole (open, abandoned or cancelled), newest first, as work_quality_run_state_v1 reads them.
SELECT 'work-quality' AS suite, s.snapshot_id::text AS run, s.name AS subject, s.created_at, s.deadline_at, s.state,
       s.note AS why
  FROM evalledger.work_quality_run_state_v1 s
 WHERE s.state IN ('open', 'abandoned', 'cancelled')
   AND (%(from_month)s::date IS NULL OR s.created_at >= %(from_month)s::date::timestamp AT TIME ZONE 'UTC')
   AND (%(to_month)s::date IS NULL OR s.created_at < (%(to_month)s::date + interval '1 month') AT TIME ZONE 'UTC')
 ORDER BY s.created_at DESC, s.snapshot_id DESC
 LIMIT 20;

-- -- The drill-down (bi/drill.py): a run, a question of it, its evidence and trail; a question over time;
-- -- a takes-quality run; a work-quality snapshot ----------------------------------------------------------

-- name: drill_run
-- One brain-eval run as the reader sees it: what was tested, by which rubric, who reviewed it, and what the database decided.
SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.model_id, l.system_prompt_hash,
       l.system_prompt_version_label, l.brain_view_contracts_hash, l.question_catalog_version, l.question_count,
       l.started_at, l.completed_at, l.created_at, l.reviewer_user_id, l.reviewer_independence_verified,
       l.aggregated_scores, l.hard_criteria_passed, l.soft_criteria_passed_count, l.decision::text AS decision,
       l.decision_rationale, l.calibration_notes, l.token_cost_usd, l.reviewer_hours_spent, l.import_id,
       r.suite AS rubric_suite, r.version AS rubric_version, r.fingerprint AS rubric_fingerprint,
       h.answers AS harness_answers, h.brain_version_id
  FROM evalledger.brain_eval_log l
  JOIN evalledger.rubric r USING (rubric_id)
  LEFT JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
 WHERE l.eval_run_id = %(eval_run_id)s;

-- name: drill_intervals
-- A completed run's aggregates, each with its standard error and 95 per cent interval (brain_eval_intervals_v1, docs/statistics.md), in the order of seed 002.
SELECT aggregate, estimate, stderr, ci95_lo, ci95_hi, n, clusters, method, criterion_op, criterion_threshold, criterion_bound
  FROM evalledger.brain_eval_intervals_v1
 WHERE eval_run_id = %(eval_run_id)s
 ORDER BY array_position(ARRAY['citation_rate', 'hallucination_rate', 'staleness_recognition_rate', 'diagnosis_accuracy_mean',
                               'lever_mapping_correctness', 'confidence_calibration_in_band', 'narrative_coherence_mean'], aggregate);

-- name: drill_criteria
-- A completed run's rubric criteria, each with the run's exact value against its threshold, whether it applies to the run's brain, and whether it was met (criterion_met_v1, as the decision compares: an unmeasurable value is not met).
SELECT c.kind, c.n, c.criterion ->> 'key' AS key, c.criterion ->> 'label' AS label, c.criterion ->> 'op' AS op,
       (c.criterion ->> 'threshold')::numeric AS threshold, c.criterion ->> 'unit' AS unit,
       (l.aggregated_scores ->> (c.criterion ->> 'key'))::numeric AS value,
       NOT (c.criterion ? 'applies_to') OR (c.criterion -> 'applies_to') ? l.brain_under_test AS applies,
       coalesce(evalledger.criterion_met_v1(c.criterion, (l.aggregated_scores ->> (c.criterion ->> 'key'))::numeric), false) AS met
  FROM evalledger.brain_eval_log l
  JOIN evalledger.rubric r USING (rubric_id)
 CROSS JOIN LATERAL (
        SELECT 'hard' AS kind, n, criterion FROM jsonb_array_elements(r.definition -> 'hard_criteria') WITH ORDINALITY h(criterion, n)
        UNION ALL
        SELECT 'soft', n, criterion FROM jsonb_array_elements(r.definition -> 'soft_criteria') WITH ORDINALITY s(criterion, n)) c
 WHERE l.eval_run_id = %(eval_run_id)s AND l.completed_at IS NOT NULL
 ORDER BY c.kind, c.n;

-- name: drill_sign_offs
-- Every sign-off of a run, newest first (completion copied the newest onto the run): hours, notes, who entered it and when.
SELECT v.review_id, v.reviewer_hours_spent, v.calibration_notes, v.reviewer_user_id, v.entered_by::text AS entered_by,
       v.created_at
  FROM evalledger.brain_eval_run_review v
 WHERE v.eval_run_id = %(eval_run_id)s
 ORDER BY v.created_at DESC, v.review_id DESC;

-- name: drill_questions
-- A run's question rows in its order, with the reviewer's values, whether each passed, how many trail entries it has and when the judges' suggestions were shown.
SELECT q.question_id, q.question_type, q.uses_stale_fixture, q.citation_rate, q.hallucinations_detected, q.total_claims,
       q.staleness_correctly_recognized, q.diagnosis_accuracy_score, q.lever_mapping_violations,
       q.narrative_coherence_rating, q.reviewer_comments, q.question_passed,
       (SELECT count(*) FROM evalledger.brain_eval_review_entry e
         WHERE e.eval_run_id = q.eval_run_id AND e.question_id = q.question_id) AS entries,
       (SELECT count(*) FROM evalledger.brain_eval_judge_suggestion s
         WHERE s.eval_run_id = q.eval_run_id AND s.question_id = q.question_id) AS drafts,
       w.shown_at
  FROM evalledger.brain_eval_question_score q
  LEFT JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
  LEFT JOIN evalledger.brain_eval_suggestion_shown w ON w.eval_run_id = q.eval_run_id AND w.question_id = q.question_id
 WHERE q.eval_run_id = %(eval_run_id)s
 ORDER BY coalesce(array_position(h.question_ids, q.question_id::text), 0), q.question_id;

-- name: drill_question
-- One question row of a run as the reader sees it, with the effective pass criteria (the rubric's question_pass defaults under the catalog question's own) and the brain and rubric they apply to.
SELECT q.*, l.brain_under_test, l.completed_at,
       (r.definition -> 'question_pass') || coalesce(c.pass_criteria, '{}'::jsonb) AS criteria,
       coalesce(r.definition -> 'diagnosis_question_types' ? q.question_type, false) AS diagnosis_applies,
       coalesce((r.definition #> '{question_pass,lever_mapping_applies_to}') ? l.brain_under_test, false) AS levers_apply,
       c.question_text, a.contract_error, a.recorded AS recorded_answer
  FROM evalledger.brain_eval_question_score q
  JOIN evalledger.brain_eval_log l ON l.eval_run_id = q.eval_run_id
  JOIN evalledger.rubric r ON r.rubric_id = l.rubric_id
  LEFT JOIN evalledger.brain_eval_harness_run h ON h.eval_run_id = q.eval_run_id
  LEFT JOIN evalledger.brain_eval_catalog_question c ON c.catalog_version = h.catalog_version AND c.question_id = q.question_id
  LEFT JOIN evalledger.brain_eval_harness_answer a ON a.eval_run_id = q.eval_run_id AND a.question_id = q.question_id
 WHERE q.eval_run_id = %(eval_run_id)s AND q.question_id = %(question_id)s;

-- name: drill_analysis
-- The brain's answer behind a question row: its narrative, claims, proposed actions, the sources it read, its model, prompt and cost.
SELECT b.analysis_id, b.model_id, b.system_prompt_hash, b.question, b.output, b.claims, b.proposed_actions, b.sources_read,
       b.input_tokens, b.output_tokens, b.token_cost_usd, b.produced_at
  FROM evalledger.brain_analysis_log b
 WHERE b.analysis_id = %(analysis_id)s;

-- name: drill_trail
-- Who entered each of the reviewer's values of a question, when, acting as which role, and whether the judges' suggestions had been shown by then (oldest first).
SELECT e.entry_id, e.field, e.value, e.reviewer_user_id, e.acting_role::text AS acting_role, e.entered_by::text AS entered_by,
       e.entered_at, e.suggestions_shown
  FROM evalledger.brain_eval_review_entry e
 WHERE e.eval_run_id = %(eval_run_id)s AND e.question_id = %(question_id)s
 ORDER BY e.entered_at, e.entry_id;

-- name: drill_shown
-- When the judges' suggestions on a question were first shown to its reviewer, and to which login (none: never shown).
SELECT w.shown_at, w.shown_by::text AS shown_by, w.reviewer_user_id
  FROM evalledger.brain_eval_suggestion_shown w
 WHERE w.eval_run_id = %(eval_run_id)s AND w.question_id = %(question_id)s;

-- name: drill_drafts
-- Each judge's draft on a question: what it drafted (claims, the unsupported ones quoted, diagnosis, staleness, notes) or why it does not count, and what the call cost.
SELECT s.model, s.family, s.same_family, s.recorded, s.structured, s.contributes, s.total_claims, s.unsupported_claims,
       s.diagnosis_accuracy, s.staleness_recognised, s.notes, s.error_kind, s.error_message, s.input_tokens,
       s.output_tokens, s.cost_usd, s.latency_ms, s.created_at
  FROM evalledger.brain_eval_judge_suggestion s
 WHERE s.eval_run_id = %(eval_run_id)s AND s.question_id = %(question_id)s
 ORDER BY s.model;

-- name: question_history
-- How one catalog question scored over time (index 4: question_id, created_at DESC): its latest 50 rows in completed runs, of a brain and catalog version when given.
SELECT q.eval_run_id, l.brain_under_test, l.question_catalog_version, l.started_at, q.created_at, q.question_passed,
       q.hallucinations_detected, q.total_claims, q.citation_rate, q.diagnosis_accuracy_score, q.narrative_coherence_rating
  FROM evalledger.brain_eval_question_score q
  JOIN evalledger.brain_eval_log l ON l.eval_run_id = q.eval_run_id
 WHERE q.question_id = %(question_id)s AND l.completed_at IS NOT NULL
   AND (%(brain)s::text IS NULL OR l.brain_under_test = %(brain)s::text)
   AND (%(catalog)s::text IS NULL OR l.question_catalog_version = %(catalog)s::text)
 ORDER BY q.created_at DESC
 LIMIT 50;

-- name: takes_intervals
-- A completed takes-quality run's dimensions and overall, each with its 95 per cent interval over the deciding cycle's judges (takes_quality_intervals_v1).
SELECT dimension, estimate, stderr, ci95_lo, ci95_hi, judges FROM evalledger.takes_quality_intervals_v1 WHERE run_id = %(run_id)s;

-- name: work_intervals
-- A completed work-quality snapshot's dimensions, each with its 95 per cent interval over the judges (work_quality_intervals_v1).
SELECT dimension, estimate, stderr, ci95_lo, ci95_hi, judges FROM evalledger.work_quality_intervals_v1 WHERE snapshot_id = %(snapshot_id)s;

-- name: takes_run
-- One completed or open takes-quality run as the reader sees it, with its rubric epoch, receipt and state (takes_quality_run_state_v1: an open run past its deadline is abandoned, verdict fail).
SELECT r.id, r.target_id, r.started_at, r.completed_at, b.version AS rubric_version, r.rubric_sha8, r.corpus_source,
       r.corpus_path, r.slug_prefix, r.sample_limit, r.seed, r.n_takes, r.corpus_sha8, r.prompt_sha8, r.models_sha8,
       r.models, r.cycles_run, s.verdict, r.overall_score, r.cost_usd, r.receipt_json, b.definition -> 'pass_rule' AS pass_rule,
       s.state, s.deadline_at, s.verdict_message
  FROM evalledger.eval_takes_quality_runs r
  JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
  JOIN evalledger.takes_quality_run_state_v1 s ON s.run_id = r.id
 WHERE r.id = %(run_id)s;

-- name: takes_verdicts
-- Each judge's verdict on a takes-quality run, cycle by cycle: its scores and feedback, or why it does not count.
SELECT v.cycle, v.model, v.family, v.same_family, v.recorded, v.contributes, v.scores, v.feedback, v.improvements,
       v.error_kind, v.error_message, v.input_tokens, v.output_tokens, v.cost_usd, v.latency_ms
  FROM evalledger.eval_takes_quality_judge_verdicts v
 WHERE v.run_id = %(run_id)s
 ORDER BY v.cycle, array_position((SELECT r.models FROM evalledger.eval_takes_quality_runs r WHERE r.id = v.run_id), v.model), v.model;

-- name: work_snapshot
-- One work-quality snapshot as the reader sees it: what was judged, its price, its mean scores, its comparison with the previous one and its state (work_quality_run_state_v1: a cancelled or abandoned one is a regression, its note the reason).
SELECT s.snapshot_id, s.origin, s.kind, s.name, s.persona, s.run_id, s.at, s.bot_family, s.bot_version, s.iterion_sha,
       s.task, s.outcome, s.evidence_digest, s.evidence_sha256, s.cost_usd, s.tokens, s.duration_ms, s.iterations,
       s.model_calls, s.retries, s.models, s.prev_run_id, s.completed_at, s.mean_scores, s.disagreement, s.note,
       s.comparison, s.judges_cost_usd, b.version AS rubric_version,
       CASE WHEN w.state IN ('cancelled', 'abandoned') THEN ARRAY[w.note]
            ELSE evalledger.work_quality_is_regression_v1(s.comparison) END AS regression_reasons,
       w.state, w.deadline_at
  FROM evalledger.eval_work_quality_snapshots s
  JOIN evalledger.rubric b ON b.rubric_id = s.rubric_id
  JOIN evalledger.work_quality_run_state_v1 w ON w.snapshot_id = s.snapshot_id
 WHERE s.snapshot_id = %(snapshot_id)s;

-- name: work_verdicts
-- Each judge's verdict on a work-quality snapshot: its scores, narrative and comparison with the previous snapshot, or why it does not count.
SELECT v.model, v.family, v.same_family, v.recorded, v.contributes, v.scores, v.narrative, v.relative_vs_prev,
       v.relative_narrative, v.confidence, v.error_kind, v.error_message, v.cost_usd, v.latency_ms
  FROM evalledger.eval_work_quality_judge_verdicts v
 WHERE v.snapshot_id = %(snapshot_id)s
 ORDER BY v.model;

-- -- The report's ledger state (bi/report.py) ----------------------------------------------------------------

-- name: ledger_installed
-- Whether the tamper-evidence journal (issue 18) is installed and this login may read its blocks.
SELECT to_regclass('evalledger.ledger_block') IS NOT NULL
       AND has_table_privilege('evalledger.ledger_block', 'SELECT')
       AND has_table_privilege('evalledger.ledger_identity', 'SELECT') AS readable,
       to_regclass('evalledger.ledger_block') IS NOT NULL AS installed;

-- name: ledger_state
-- The ledger's id and its latest sealed block: number, hashes (hex), when and by whom it was sealed, how many entries it holds; and how many journal entries are newer than it (not yet sealed).
SELECT (SELECT ledger_id FROM evalledger.ledger_identity) AS ledger_id,
       b.block_id, encode(b.block_hash, 'hex') AS block_hash, encode(b.ledger_root, 'hex') AS ledger_root,
       encode(b.merkle_root, 'hex') AS merkle_root, b.entry_count, b.last_entry_id, b.sealed_at, b.sealed_by::text AS sealed_by,
       (SELECT count(*) FROM evalledger.ledger_journal j WHERE j.entry_id > coalesce(b.last_entry_id, 0)) AS unsealed
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (SELECT * FROM evalledger.ledger_block ORDER BY block_id DESC LIMIT 1) b ON true;

-- name: drill_catalog_question
-- One question of a loaded catalog as the reader sees it: its type and text, and how many captured rows it was drafted from (its document's count; NULL for a question written by hand).
SELECT q.catalog_version, q.question_id, q.question_type, q.question_text, q.position,
       (c.document -> 'questions' -> (q.position - 1) -> 'provenance' ->> 'captured')::bigint AS captured,
       (SELECT count(*) FROM evalledger.brain_eval_catalog_provenance p
         WHERE p.catalog_version = q.catalog_version AND p.question_id = q.question_id) AS listed
  FROM evalledger.brain_eval_catalog_question q
  JOIN evalledger.brain_eval_catalog c ON c.catalog_version = q.catalog_version
 WHERE q.catalog_version = %(catalog_version)s AND q.question_id = %(question_id)s;

-- name: drill_provenance
-- The captured rows a catalog question was drafted from, in the draft's order, each as the reader's tier shows it (a row it may not read, or one this ledger does not hold, comes back without its fields).
SELECT p.position, p.capture_id, p.capture_created_at, c.id IS NOT NULL AS readable, c.tool_name, c.query,
       c.detail, c.remote, c.retrieved_slugs, c.source_ids, c.latency_ms
  FROM evalledger.brain_eval_catalog_provenance p
  LEFT JOIN evalledger.eval_candidates c ON c.created_at = p.capture_created_at AND c.id = p.capture_id
 WHERE p.catalog_version = %(catalog_version)s AND p.question_id = %(question_id)s
 ORDER BY p.position;
-- -- `evalledger plan` (bi/cli.py, bi/plan.py) ---------------------------------------------------

-- name: plan
-- Each suite's subject and measure with what the next run can detect at 80 per cent power, its regression threshold and the units a chosen drop needs (plan_v1, from the interval views as this reader may read them).
SELECT suite, subject, measure, runs, n, sd, mde, threshold, detectable, effect, needed_n
  FROM evalledger.plan_v1(%(suite)s, %(runs)s, %(effect)s);
