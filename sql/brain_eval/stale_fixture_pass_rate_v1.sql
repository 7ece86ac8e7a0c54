-- stale_fixture_pass_rate_v1: per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).
CREATE VIEW evalledger.stale_fixture_pass_rate_v1 AS
    SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v1();
COMMENT ON VIEW evalledger.stale_fixture_pass_rate_v1 IS
    'Per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).';

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON stale_fixture_pass_rate_v1 FROM PUBLIC;
GRANT SELECT ON stale_fixture_pass_rate_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN stale_fixture_pass_rate_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_questions IS 'Count of the run''s stale-fixture questions.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_recognised IS 'Count of stale-fixture questions recognised.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_missed IS 'Count of stale-fixture questions missed.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.all_recognised IS 'Boolean: every stale-fixture question recognised (NULL when the run had none).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.sev2_incident IS 'Boolean: at least one stale-fixture question missed (a sev-2 incident by seed 002).';

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.stale_fixture_pass_rate_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
