-- prompt_drift_v2: per brain and month, production's latest prompt against the last passing
-- eval's as of the month's end, and whether they differ: the drift as a history. It reads
-- prompt_drift_rows_v3, prompt_drift_rows_v2's rows with its first month found in bounded probes
-- (migration 0101): the view's name and shape are the contract, so it was repointed, not
-- versioned; prompt_drift_rows_v2 stays for SQL clients that call it by name (docs/bi.md).
CREATE VIEW evalledger.prompt_drift_v2 AS
    SELECT * FROM evalledger.prompt_drift_rows_v3(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.prompt_drift_v2 IS
    'Per brain and UTC month (to this month), as of the month''s end: the prompt hash of the latest production analysis against the hash of the last passing eval (pass or pass_with_notes), and prompt_drift when they differ. brain_under_test, as in every other view (prompt_drift_v1 calls it brain).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.month IS 'Date: the first day of the UTC month; the row holds the state as of that month''s end (as of now for the current month).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.production_prompt_hash IS 'SHA-256 hex of the system prompt of the latest production analysis by then (NULL: no production traffic seen).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.production_last_seen_at IS 'When that production analysis was produced (timestamptz).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_prompt_hash IS 'SHA-256 hex of the system prompt of the last passing eval run by then (NULL: none passed).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_prompt_version_label IS 'That run''s system_prompt_version_label, if any.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_run_id IS 'That passing run.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_decision IS 'Its decision: pass or pass_with_notes.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_started_at IS 'When that run started (timestamptz).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.prompt_drift IS 'Boolean: production''s prompt is not the last one that passed (NULL without production traffic).';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON prompt_drift_v2 FROM PUBLIC;
GRANT SELECT ON prompt_drift_v2 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.prompt_drift_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;
