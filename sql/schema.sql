-- The current schema, whole: every object the ledger installs, each from its own file, in the order
-- they depend on each other. `psql -v ON_ERROR_STOP=1 -1 -f sql/schema.sql` builds it into an empty
-- database in one transaction, as the installing superuser; tests/db/test_current_schema.py holds it
-- equal to what every migration in order builds. The migrations are the history: a change to the
-- schema is a new migration and the same change here (docs/development.md, "Migrations").

\ir core/roles.sql
\ir core/evalledger.sql

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;
-- As pg_dump does: a function's body may name tables and functions whose files come after it.
SET LOCAL check_function_bodies = off;

-- Types.
\ir brain_eval/eval_decision.sql
\ir brain_eval/eval_run_trigger.sql
\ir capture/eval_candidate_ndjson_row_v1.sql

-- Functions (CHECKs, policies and defaults call them, so they precede the tables).
\ir core/finite_v1.sql
\ir core/json_numbers_v1.sql
\ir core/changed_columns_v1.sql
\ir core/require_read_committed_v2.sql
\ir core/require_fresh_snapshot_v1.sql
\ir core/refuse_supplied_v1.sql
\ir core/purge_horizon_v1.sql
\ir core/hot_tier_v1.sql
\ir core/utc_ago_v1.sql
\ir core/hot_tier_start_v1.sql
\ir core/purge_horizon_at_v1.sql
\ir core/backdating_window_v1.sql
\ir core/guard_append_only_v1.sql
\ir core/seal_tables_v2.sql
\ir core/runner_error_v1.sql
\ir core/check_panel_v1.sql
\ir core/require_open_v1.sql
\ir core/rubric_check_v2.sql
\ir core/active_rubric_v1.sql
\ir core/rubric_admitted_v2.sql
\ir core/judge_scores_v2.sql
\ir core/caller_v1.sql
\ir core/reviewer_id_of_v1.sql
\ir core/readable_time_v1.sql
\ir core/call_cost_v1.sql
\ir brain_eval/prompt_normal_v1.sql
\ir brain_eval/prompt_normal_hash_v1.sql
\ir brain_eval/brain_prompt_claim_v1.sql
\ir brain_eval/run_brains_v1.sql
\ir brain_eval/brain_eval_levers_v1.sql
\ir brain_eval/confidence_in_band_v1.sql
\ir brain_eval/brain_eval_scores_v1.sql
\ir brain_eval/brain_eval_uncertainty_v1.sql
\ir brain_eval/criterion_met_v1.sql
\ir brain_eval/shown_apart_v1.sql
\ir brain_eval/criterion_miss_v1.sql
\ir brain_eval/brain_eval_claims_problem_v1.sql
\ir brain_eval/brain_eval_answer_scores_v1.sql
\ir brain_eval/lock_run_v1.sql
\ir brain_eval/question_fields_needed_v1.sql
\ir brain_eval/brain_eval_question_policy_v2.sql
\ir brain_eval/brain_quarterly_trend_rows_v1.sql
\ir brain_eval/most_failing_questions_rows_v1.sql
\ir brain_eval/stale_fixture_pass_rate_rows_v1.sql
\ir brain_eval/reviewer_calibration_rows_v1.sql
\ir brain_eval/cost_per_run_rows_v1.sql
\ir brain_eval/prompt_drift_rows_v1.sql
\ir takes_quality/takes_quality_cycle_v1.sql
\ir takes_quality/takes_quality_cycle_v2.sql
\ir takes_quality/takes_quality_receipt_built_v3.sql
\ir takes_quality/takes_quality_receipt_v3.sql
\ir takes_quality/takes_quality_complete_v1.sql
\ir capture/capture_purging_v1.sql
\ir capture/capture_partition_expired_v2.sql
\ir capture/capture_make_partition_v2.sql
\ir capture/capture_ensure_partitions_v2.sql
\ir capture/capture_export_bound_v2.sql
\ir capture/eval_candidates_export_v1.sql
\ir brain_eval/brain_eval_complete_v1.sql
\ir brain_eval/brain_eval_show_suggestions_v2.sql
\ir brain_eval/brain_eval_show_reference_v2.sql
\ir brain_eval/brain_eval_reference_v2.sql
\ir work_quality/work_quality_policy_v2.sql
\ir work_quality/work_quality_policy_v1.sql
\ir work_quality/work_quality_compare_v2.sql
\ir work_quality/work_quality_compare_v1.sql
\ir work_quality/work_quality_is_regression_v2.sql
\ir work_quality/work_quality_is_regression_v1.sql
\ir work_quality/work_quality_complete_v1.sql
\ir core/retention_purging_v1.sql
\ir core/retention_held_v2.sql
\ir core/retention_gate_pinned_v1.sql
\ir core/retention_due_v2.sql
\ir core/retention_purge_v2.sql
\ir core/retention_rows_v2.sql
\ir core/retention_plan_v2.sql
\ir core/utc_month_v1.sql
\ir core/whole_hot_months_from_v1.sql
\ir core/cohen_kappa_v1.sql
\ir core/weighted_kappa_v1.sql
\ir core/agreement_measures_v1.sql
\ir core/normal_quantile_v1.sql
\ir core/mean_stderr_v1.sql
\ir core/clustered_stderr_v1.sql
\ir core/ratio_stderr_v1.sql
\ir core/wilson_interval_v1.sql
\ir core/mcnemar_exact_v1.sql
\ir core/paired_difference_v1.sql
\ir core/score_float8_v1.sql
\ir core/paired_object_v1.sql
\ir takes_quality/takes_quality_paired_v1.sql
\ir core/min_detectable_effect_v1.sql
\ir core/sample_size_v1.sql
\ir core/uncertainty_v1.sql
\ir brain_eval/brain_eval_run_facts_v1.sql
\ir brain_eval/brain_eval_question_facts_v1.sql
\ir brain_eval/brain_eval_agreement_pairs_v1.sql
\ir brain_eval/brain_eval_agreement_facts_v1.sql
\ir brain_eval/brain_eval_by_month_add_v1.sql
\ir brain_eval/brain_eval_by_month_recount_v1.sql
\ir brain_eval/brain_trend_rows_v1.sql
\ir brain_eval/most_failing_questions_rows_v2.sql
\ir brain_eval/stale_fixture_pass_rate_rows_v2.sql
\ir brain_eval/stale_fixture_by_month_rows_v1.sql
\ir brain_eval/reviewer_calibration_rows_v2.sql
\ir brain_eval/cost_by_month_rows_v1.sql
\ir brain_eval/prompt_drift_rows_v2.sql
\ir brain_eval/judge_agreement_rows_v1.sql
\ir takes_quality/takes_quality_trend_rows_v1.sql
\ir core/journal_refuse_v1.sql
\ir core/journal_timestamp_v1.sql
\ir core/journal_date_v1.sql
\ir core/journal_number_v1.sql
\ir core/journal_float_v1.sql
\ir core/journal_exempt_v1.sql
\ir core/journal_tables_v1.sql
\ir core/journal_source_v1.sql
\ir core/journal_leaf_v1.sql
\ir core/ledger_writers_v1.sql
\ir core/ledger_seal_v1.sql
\ir core/ledger_digest_v1.sql
\ir core/ledger_recompute_takes_quality_v2.sql
\ir work_quality/work_quality_history_rows_v1.sql
\ir core/ledger_recompute_v3.sql
\ir brain_eval/prompt_drift_rows_v3.sql
\ir capture/capture_all_distinct_v1.sql
\ir capture/capture_keys_stored_v1.sql
\ir core/journal_attach_v2.sql
\ir core/journal_batch_v2.sql
\ir core/journal_coverage_v2.sql
\ir core/ledger_merkle_root_v2.sql
\ir replay/replay_recall_v1.sql
\ir replay/replay_jaccard_v1.sql
\ir replay/replay_rbo_v1.sql

-- Tables, each with its constraints, indexes, comments, policies and grants (a table before those
-- that reference it).
\ir core/target.sql
\ir core/rubric.sql
\ir core/rubric_activation.sql
\ir core/reviewer.sql
\ir brain_eval/prompt_tuner.sql
\ir brain_eval/brain_analysis_log.sql
\ir brain_eval/brain_eval_import.sql
\ir brain_eval/brain_eval_log.sql
\ir brain_eval/brain_eval_question_score.sql
\ir brain_eval/brain_eval_review_entry.sql
\ir brain_eval/brain_eval_suggestion_shown.sql
\ir brain_eval/brain_eval_run_review.sql
\ir core/legal_hold.sql
\ir core/legal_hold_release.sql
\ir takes_quality/take.sql
\ir takes_quality/eval_takes_quality_runs.sql
\ir takes_quality/takes_quality_receipt_identity_v1.sql
\ir takes_quality/eval_takes_quality_judge_verdicts.sql
\ir capture/eval_candidates.sql
\ir capture/eval_candidate_keys.sql
\ir capture/eval_capture_failures.sql
\ir capture/capture_window.sql
\ir brain_eval/brain_eval_catalog.sql
\ir brain_eval/brain_eval_catalog_question.sql
\ir brain_eval/brain_eval_catalog_provenance.sql
\ir brain_eval/brain_version.sql
\ir brain_eval/brain_version_registration.sql
\ir brain_eval/brain_prompt.sql
\ir brain_eval/brain_eval_harness_run.sql
\ir brain_eval/brain_eval_harness_answer.sql
\ir brain_eval/brain_eval_judge_suggestion.sql
\ir brain_eval/brain_eval_reference_shown.sql
\ir work_quality/eval_work_quality_snapshots.sql
\ir work_quality/eval_work_quality_judge_verdicts.sql
\ir capture/capture_purge_marker.sql
\ir core/retention_purge_marker.sql
\ir core/retention_purge_log.sql
\ir core/run_claim.sql
\ir replay/replay_run.sql
\ir replay/replay_query.sql
\ir replay/replay_query_measured_v1.sql
\ir core/eval_gate_decision.sql
\ir brain_eval/brain_eval_runs_by_month.sql
\ir brain_eval/brain_eval_questions_by_month.sql
\ir brain_eval/brain_eval_agreement_by_month.sql
\ir core/ledger_identity.sql
\ir core/ledger_journal.sql
\ir core/ledger_block.sql
\ir core/ledger_digest.sql

-- Functions whose arguments or results are a table's rows.
\ir core/caller_reads_v1.sql
\ir brain_eval/question_needs_v2.sql
\ir brain_eval/question_passes_v2.sql
\ir brain_eval/brain_eval_decide_v2.sql
\ir brain_eval/brain_eval_question_verdict_v1.sql
\ir takes_quality/takes_quality_current_v1.sql
\ir capture/eval_candidate_ndjson_v1.sql
\ir brain_eval/brain_eval_open_harness_v2.sql
\ir work_quality/work_quality_document_v1.sql
\ir work_quality/work_quality_decide_v1.sql
\ir work_quality/work_quality_current_v1.sql
\ir core/ledger_entry_text_v1.sql
\ir core/ledger_block_text_v1.sql
\ir core/ledger_recompute_brain_eval_v2.sql
\ir core/ledger_recompute_work_quality_v2.sql
\ir replay/replay_decision_v1.sql
\ir replay/replay_complete_v1.sql
\ir replay/replay_drift_rows_v1.sql
\ir replay/replay_lost_most_rows_v1.sql
\ir replay/production_beside_eval_rows_v1.sql
\ir replay/replay_capture_purged_rows_v1.sql

-- Views, each over its rows function, with its comments and grants.
\ir brain_eval/brain_quarterly_trend_v1.sql
\ir brain_eval/most_failing_questions_v1.sql
\ir brain_eval/stale_fixture_pass_rate_v1.sql
\ir brain_eval/reviewer_calibration_v1.sql
\ir brain_eval/cost_per_run_v1.sql
\ir brain_eval/prompt_drift_v1.sql
\ir work_quality/work_quality_history_v1.sql
\ir work_quality/work_quality_judge_scores_v1.sql
\ir work_quality/work_quality_uncertainty_v2.sql
\ir work_quality/work_quality_uncertainty_v1.sql
\ir brain_eval/most_failing_questions_v2.sql
\ir brain_eval/stale_fixture_pass_rate_v2.sql
\ir brain_eval/stale_fixture_by_month_v1.sql
\ir brain_eval/reviewer_calibration_v2.sql
\ir brain_eval/cost_by_month_v1.sql
\ir brain_eval/prompt_drift_v2.sql
\ir brain_eval/judge_agreement_v1.sql
\ir takes_quality/takes_quality_trend_v1.sql
\ir replay/replay_drift_v1.sql
\ir replay/replay_lost_most_v1.sql
\ir replay/production_beside_eval_v1.sql
\ir replay/replay_capture_purged_v1.sql

-- Issue 37 (INS-B): takes-quality's regress in SQL.
\ir takes_quality/takes_quality_threshold_v1.sql
\ir takes_quality/takes_quality_regression_v1.sql

-- Issue 36: each verdict's uncertainty beside it, and a view per suite for BI.
\ir takes_quality/takes_quality_uncertainty_v1.sql
\ir takes_quality/takes_quality_receipt_uncertainty_v1.sql
-- Issue 36, item 4: judge repeats, flaky items and the judges' noise beside the items' variance.
\ir takes_quality/takes_quality_flaky_v1.sql
\ir takes_quality/takes_quality_repeat_variance_v1.sql
\ir work_quality/work_quality_flaky_v1.sql
\ir brain_eval/brain_eval_flaky_v1.sql
\ir brain_eval/judge_agreement_v2.sql
\ir work_quality/work_quality_repeat_variance_v1.sql

-- Issue 36, item 5: paired comparisons, and gates that know noise.
\ir brain_eval/brain_eval_paired_v1.sql
\ir work_quality/work_quality_paired_v2.sql
\ir core/gate_decide_v2.sql
\ir core/gate_scores_in_range_v1.sql
\ir core/plan_v1.sql

-- Trigger functions, each with its CREATE TRIGGER bindings.
\ir ../triggers/core/complete_once_v1.sql
\ir ../triggers/core/run_claim_commit_refused_v1.sql
\ir ../triggers/core/rubric_fingerprint_v1.sql
\ir ../triggers/core/rubric_activation_admit_v1.sql
\ir ../triggers/core/legal_hold_release_admit_v1.sql
\ir ../triggers/brain_eval/prompt_tuner_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_log_admit_v2.sql
\ir ../triggers/brain_eval/brain_analysis_log_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_log_decide_v2.sql
\ir ../triggers/brain_eval/brain_eval_question_score_write_v4.sql
\ir ../triggers/brain_eval/brain_eval_question_score_judge_v1.sql
\ir ../triggers/brain_eval/brain_eval_review_trail_v1.sql
\ir ../triggers/brain_eval/brain_eval_review_entry_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_run_review_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_import_admit_v1.sql
\ir ../triggers/takes_quality/takes_quality_run_admit_v2.sql
\ir ../triggers/takes_quality/takes_quality_verdict_admit_v2.sql
\ir ../triggers/takes_quality/takes_quality_run_identity_v1.sql
\ir ../triggers/takes_quality/takes_quality_verdict_sequence_v1.sql
\ir ../triggers/takes_quality/takes_quality_run_decide_v2.sql
\ir ../triggers/capture/capture_window_lock_v2.sql
\ir ../triggers/capture/capture_refuse_change_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_expand_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_question_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_question_provenance_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_provenance_admit_v1.sql
\ir ../triggers/brain_eval/brain_version_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_run_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_answer_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_question_v1.sql
\ir ../triggers/brain_eval/brain_eval_judge_suggestion_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_reference_shown_guard_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_admit_v2.sql
\ir ../triggers/work_quality/work_quality_import_verdicts_v1.sql
\ir ../triggers/work_quality/work_quality_verdict_admit_v2.sql
\ir ../triggers/work_quality/work_quality_snapshot_identity_v1.sql
\ir ../triggers/work_quality/work_quality_verdict_sequence_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_decide_v3.sql
\ir ../triggers/replay/replay_run_admit_v1.sql
\ir ../triggers/replay/replay_run_decide_v1.sql
\ir ../triggers/replay/replay_query_admit_v1.sql
\ir ../triggers/core/eval_gate_decision_admit_v1.sql
\ir ../triggers/core/retention_clock_v1.sql
\ir ../triggers/core/call_cost_stamp_v1.sql
\ir ../triggers/core/retention_purge_log_admit_v1.sql
\ir ../triggers/core/refuse_change_v3.sql
\ir ../triggers/brain_eval/brain_eval_by_month_complete_v1.sql
\ir ../triggers/brain_eval/brain_eval_by_month_purge_v1.sql
\ir ../triggers/capture/capture_keys_v1.sql
\ir ../triggers/core/journal_capture_v2.sql
\ir ../triggers/core/journal_deleted_v2.sql
\ir ../triggers/core/journal_row_v2.sql

-- Closing runs that are not completed whole (issue 37, item 2; migration 0110): after
-- refuse_change_v3, which guards the closures.
\ir brain_eval/brain_eval_run_closure.sql
\ir brain_eval/brain_eval_run_deadline_v1.sql
\ir brain_eval/brain_eval_abandoned_v1.sql
\ir brain_eval/brain_eval_overdue_v1.sql
\ir brain_eval/brain_eval_close_v1.sql
\ir brain_eval/brain_eval_cancel_v1.sql
\ir brain_eval/brain_eval_run_state_rows_v1.sql
\ir brain_eval/brain_eval_run_state_v1.sql
\ir ../triggers/brain_eval/brain_eval_log_one_open_v1.sql

-- The same for takes-quality runs and work-quality snapshots (issue 37, item 2; migration 0114): one
-- closure table for both, the deadline and the wording brain-eval's.
\ir core/eval_run_closure.sql
\ir core/eval_run_close_v1.sql
\ir core/eval_run_cancel_v1.sql
\ir takes_quality/takes_quality_receipt_built_v4.sql
\ir takes_quality/takes_quality_receipt_v4.sql
\ir takes_quality/takes_quality_run_state_rows_v1.sql
\ir takes_quality/takes_quality_run_state_v1.sql
\ir work_quality/work_quality_run_state_rows_v1.sql
\ir work_quality/work_quality_run_state_v1.sql
\ir ../triggers/takes_quality/takes_quality_run_one_open_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_one_open_v1.sql
-- Each brain-eval run's uncertainty, stored by the database when the run completes (issue 36, item 3;
-- migration 0148), and the intervals view that reads it: the trend's error bars cost a read, not the
-- statistics functions run again for every run shown.
\ir brain_eval/brain_eval_run_uncertainty.sql
\ir ../triggers/brain_eval/brain_eval_uncertainty_complete_v1.sql
\ir brain_eval/brain_eval_intervals_v1.sql
-- Each completed run's trend row, its error bars beside its columns, copied by the database at completion
-- from the run's row and its stored uncertainty (issue 36; migration 0164): the trend panel reads one row
-- per run through one index.
\ir brain_eval/brain_eval_trend.sql
\ir brain_eval/brain_eval_trend_of_v1.sql
\ir ../triggers/brain_eval/brain_eval_trend_complete_v1.sql
\ir brain_eval/brain_trend_rows_v2.sql
-- The same for each takes-quality run (issue 36, item 3; migration 0153): stored at its completion,
-- read by the intervals view, `takes-quality show` and the receipt's stderr and ci95.
\ir takes_quality/eval_takes_quality_run_uncertainty.sql
\ir ../triggers/takes_quality/takes_quality_uncertainty_complete_v1.sql
\ir takes_quality/takes_quality_intervals_v1.sql
-- And for each work-quality snapshot (issue 36, item 3; migration 0153): stored at its completion or
-- import, read by the intervals view and `snapshot show`.
\ir work_quality/eval_work_quality_snapshot_uncertainty.sql
\ir ../triggers/work_quality/work_quality_uncertainty_complete_v1.sql
\ir work_quality/work_quality_intervals_v1.sql
-- A run's completion journals its manifest, the rows that make it whole (issue 35, item 3;
-- migration 0124); readers check the ledger still extends the newest digest they saw.
\ir brain_eval/brain_eval_manifest_v1.sql
\ir ../triggers/brain_eval/brain_eval_log_manifest_v1.sql
\ir core/ledger_heads_v1.sql
-- Judge calls sent through the providers' batch APIs (issue 38, item 1; migration 0143): each batch,
-- its requests, what the provider said of it and each request's outcome, written before the runner
-- waits, so a killed runner resumes the same batch.
\ir judges/judge_batch.sql
\ir judges/judge_batch_request.sql
\ir judges/judge_batch_event.sql
\ir judges/judge_batch_result.sql

-- Functions: nothing is PUBLIC (the default privileges say so too; this covers any function made
-- otherwise).
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA evalledger FROM PUBLIC;
-- This month's capture partition and the next three exist from the start; writers extend the range
-- as they run.
SELECT capture_ensure_partitions_v2(3);

-- The rows every ledger starts with: the seed brains and the first rubrics, admitted under the
-- rules of their day, then the admission check of today's rubrics and the first rubric it admitted.
\ir brain_eval/brain_eval_targets.sql
\ir brain_eval/brain_eval_rubric_v1.sql
\ir takes_quality/takes_quality_rubric_v1_0.sql
\ir work_quality/work_quality_rubric_v1.sql
\ir ../triggers/core/rubric_admit_v2.sql
\ir takes_quality/takes_quality_rubric_v1_1.sql

-- Row-level security enabled and forced on every table, its _owner_all and _code_all policies,
-- the owner role's SELECT, every trigger ENABLE ALWAYS; then the journal (docs/ledger.md) covers
-- every ledger table, the rows above as BASELINE entries.
CALL seal_tables_v2();
CALL journal_attach_v2();

-- Rows a migration after the journal added, journalled as that migration's INSERTs were (0131: the
-- replay suite's first rubric, issue 40).
\ir replay/replay_rubric_v1.sql

RESET ROLE;

-- Guards no application role can lift: the event triggers (where a superuser installs).
\ir core/evalledger_guard.sql
\ir ../triggers/core/ddl_guard_v1.sql
\ir ../triggers/core/drop_guard_v1.sql
\ir core/large_objects.sql
