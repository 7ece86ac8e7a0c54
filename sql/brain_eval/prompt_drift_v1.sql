-- prompt_drift_v1: per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.
CREATE VIEW evalledger.prompt_drift_v1 AS
    SELECT * FROM evalledger.prompt_drift_rows_v1();
COMMENT ON VIEW evalledger.prompt_drift_v1 IS
    'Per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.';

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON prompt_drift_v1 FROM PUBLIC;
GRANT SELECT ON prompt_drift_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN prompt_drift_v1.brain IS 'The brain (target_id); brain_under_test in every other view and in prompt_drift_v2.';
COMMENT ON COLUMN prompt_drift_v1.production_prompt_hash IS 'SHA-256 hex of the prompt of the brain''s latest production analysis (NULL: none).';
COMMENT ON COLUMN prompt_drift_v1.production_last_seen_at IS 'When that production analysis was produced (timestamptz).';
COMMENT ON COLUMN prompt_drift_v1.eval_prompt_hash IS 'SHA-256 hex of the prompt of the brain''s last passing eval (pass or pass_with_notes).';
COMMENT ON COLUMN prompt_drift_v1.eval_prompt_version_label IS 'That run''s system_prompt_version_label, if any.';
COMMENT ON COLUMN prompt_drift_v1.eval_run_id IS 'That passing run.';
COMMENT ON COLUMN prompt_drift_v1.eval_decision IS 'Its decision: pass or pass_with_notes.';
COMMENT ON COLUMN prompt_drift_v1.eval_started_at IS 'When that run started (timestamptz).';
COMMENT ON COLUMN prompt_drift_v1.prompt_drift IS 'Boolean: production runs a prompt that is not the last one that passed (NULL without production traffic).';

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.prompt_drift_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
