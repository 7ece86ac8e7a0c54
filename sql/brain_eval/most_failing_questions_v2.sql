-- most_failing_questions_v2: per brain, catalog version and question, completed runs seen and
-- failed, fail_pct (0-100) and fail_rank within the brain and catalog version.
CREATE VIEW evalledger.most_failing_questions_v2 AS
    SELECT * FROM evalledger.most_failing_questions_rows_v2(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.most_failing_questions_v2 IS
    'Per brain, catalog version and question, completed runs seen and failed, fail_pct (0-100) and fail_rank within the brain and catalog version (1 = highest fail share; on equal share more failures first; full ties share a rank). RevOps: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.question_catalog_version IS 'The question catalog version the runs used, e.g. v28-2026Q2.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.question_id IS 'The catalog question, e.g. EVAL-Q01 (one question per catalog version).';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.runs_failed IS 'Count of those runs in which the question did not pass (question_passed false).';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.fail_pct IS 'Percent, 0-100, two decimals: 100 * runs_failed / runs_seen.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.fail_rank IS 'Rank, 1 = most failing, within brain_under_test and question_catalog_version (SQL rank(): ties share a rank).';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON most_failing_questions_v2 FROM PUBLIC;
GRANT SELECT ON most_failing_questions_v2 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.most_failing_questions_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;
