-- cost_by_month_v1: per brain and month started, completed runs, token cost (USD, total and per
-- run) and reviewer hours (total, runs reporting, per reporting run).
CREATE VIEW evalledger.cost_by_month_v1 AS
    SELECT * FROM evalledger.cost_by_month_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.cost_by_month_v1 IS
    'Per brain and month started (UTC), completed runs, token cost in USD (total and mean per run) and reviewer hours (total, runs that reported hours, mean per reporting run). RevOps and reviewers: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.runs IS 'Count of completed runs.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.token_cost_usd IS 'USD: the runs'' brain-call token cost, summed (each run''s token_cost_usd).';
COMMENT ON COLUMN evalledger.cost_by_month_v1.token_cost_per_run_usd IS 'USD per run, four decimals: token_cost_usd / runs.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.reviewer_hours_spent IS 'Hours: reviewer hours reported (self-reported at sign-off), summed.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.runs_with_hours IS 'Count of runs whose reviewer reported hours.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.reviewer_hours_per_run IS 'Hours per reporting run, two decimals: reviewer_hours_spent / runs_with_hours (NULL when none reported).';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON cost_by_month_v1 FROM PUBLIC;
GRANT SELECT ON cost_by_month_v1 TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.cost_by_month_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
