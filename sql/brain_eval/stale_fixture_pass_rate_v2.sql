-- stale_fixture_pass_rate_v2: per completed run, stale-fixture questions, recognised, missed, the
-- pass rate as a column (0-1), all_recognised (NULL if none) and sev2_incident (any miss).
CREATE VIEW evalledger.stale_fixture_pass_rate_v2 AS
    SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v2(NULL, NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.stale_fixture_pass_rate_v2 IS
    'Per completed run, its stale-fixture questions, recognised and missed, stale_pass_rate (0-1), all_recognised (NULL when the run had none) and sev2_incident (any miss: seed 002''s sev-2).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.started_at IS 'When the run started (timestamptz; UTC in the ledger).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_questions IS 'Count of the run''s stale-fixture questions (seed 002: typically 5).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_recognised IS 'Count of stale-fixture questions whose staleness the brain recognised.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_missed IS 'Count of stale-fixture questions whose staleness the brain missed.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_pass_rate IS 'Rate, 0-1: stale_recognised / stale_questions (NULL when the run had no stale-fixture question). Exact; round for display.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.all_recognised IS 'Boolean: every stale-fixture question recognised (NULL when the run had none).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.sev2_incident IS 'Boolean: at least one stale-fixture question missed, a sev-2 incident by seed 002.';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON stale_fixture_pass_rate_v2 FROM PUBLIC;
GRANT SELECT ON stale_fixture_pass_rate_v2 TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.stale_fixture_pass_rate_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;
