-- stale_fixture_by_month_v1: per brain and month started, completed runs, runs with stale-fixture
-- questions, runs that recognised all of them, sev-2 runs, and the stale-fixture pass rate (0-1).
CREATE VIEW evalledger.stale_fixture_by_month_v1 AS
    SELECT * FROM evalledger.stale_fixture_by_month_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.stale_fixture_by_month_v1 IS
    'Per brain and month started (UTC), completed runs, runs with stale-fixture questions, runs that recognised all of them, sev-2 runs (any miss), and the stale-fixture pass rate (0-1). RevOps and reviewers: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.runs IS 'Count of completed runs.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.runs_with_stale IS 'Count of those runs with at least one stale-fixture question.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.runs_all_recognised IS 'Count of runs that recognised every one of their stale-fixture questions.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.sev2_runs IS 'Count of runs that missed at least one stale-fixture question (sev-2 incidents).';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.stale_questions IS 'Count of stale-fixture questions asked in those runs.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.stale_recognised IS 'Count of stale-fixture questions recognised.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.stale_pass_rate IS 'Rate, 0-1: stale_recognised / stale_questions (NULL with no stale-fixture question). Exact; round for display.';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON stale_fixture_by_month_v1 FROM PUBLIC;
GRANT SELECT ON stale_fixture_by_month_v1 TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.stale_fixture_by_month_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
