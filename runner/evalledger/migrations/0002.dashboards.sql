-- Dashboard and audit views v1 (seed 002's six panels), read by RevOps and auditors under their own row-level security.

SET LOCAL ROLE evalledger_owner;
SET LOCAL search_path = evalledger, pg_temp;

-- The prompt comparison looks up each brain's latest production analysis: without this index
-- that is a scan of the whole (production-sized) analysis log.
CREATE INDEX brain_analysis_log_brain_produced_idx ON brain_analysis_log (brain, produced_at DESC);

\ir ../suites/brain_eval/sql/dashboard_v1.sql
-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON brain_quarterly_trend_v1, most_failing_questions_v1, stale_fixture_pass_rate_v1,
    reviewer_calibration_v1, cost_per_run_v1, prompt_drift_v1 FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION brain_quarterly_trend_rows_v1(), most_failing_questions_rows_v1(),
    stale_fixture_pass_rate_rows_v1(), reviewer_calibration_rows_v1(), cost_per_run_rows_v1(),
    prompt_drift_rows_v1() FROM PUBLIC;
GRANT SELECT ON brain_quarterly_trend_v1, most_failing_questions_v1, stale_fixture_pass_rate_v1,
    reviewer_calibration_v1, cost_per_run_v1, prompt_drift_v1
    TO evalledger_revops, evalledger_auditor;
-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION brain_quarterly_trend_rows_v1(), most_failing_questions_rows_v1(),
    stale_fixture_pass_rate_rows_v1(), reviewer_calibration_rows_v1(), cost_per_run_rows_v1(),
    prompt_drift_rows_v1() TO evalledger_revops, evalledger_auditor;

RESET ROLE;
