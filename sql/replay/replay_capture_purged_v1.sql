-- replay_capture_purged_v1: every replay run over the ledger's captured rows whose replayed queries
-- outlived those rows (replay_capture_purged_rows_v1): replay evidence the retention purge left
-- without its captured rows, named, never silently orphaned.
CREATE VIEW evalledger.replay_capture_purged_v1 AS
    SELECT * FROM evalledger.replay_capture_purged_rows_v1(NULL);
COMMENT ON VIEW evalledger.replay_capture_purged_v1 IS
    'Replay runs whose replayed queries outlived their captured rows: each replayed query keeps the captured fields it was measured against, so its measures and the run''s decision stand; the captured row (the query text) went with the retention purge of its month (docs/replay.md). captured_rows_missing > 0 is a row gone without a purge: investigate.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.replay_run_id IS 'The run (replay_run.replay_run_id).';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.brain_version IS 'The brain version asked (--brain-version).';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.completed_at IS 'When the run was completed and decided (timestamptz); NULL while open.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.queries IS 'Count of captured rows the run recorded a replayed query for.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.captured_rows_purged IS 'Count of those captured rows the retention purge took (their month''s partition is in retention_purge_log).';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.captured_rows_missing IS 'Count of those captured rows gone with no purge that took them: never expected.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.partitions_purged IS 'The monthly partitions (eval_candidates_pYYYYMM) the purge dropped with them, sorted.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.last_purged_at IS 'When the last of those partitions was purged (timestamptz).';

-- Auditors: the purge log is theirs alone.
REVOKE ALL ON replay_capture_purged_v1 FROM PUBLIC;
GRANT SELECT ON replay_capture_purged_v1 TO evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.replay_capture_purged_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
