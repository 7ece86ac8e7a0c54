-- replay_drift_v1: every completed replay run newest first (replay_drift_rows_v1): drift over time
-- per brain version.
CREATE VIEW evalledger.replay_drift_v1 AS
    SELECT * FROM evalledger.replay_drift_rows_v1(NULL, NULL);
COMMENT ON VIEW evalledger.replay_drift_v1 IS
    'Every completed replay run newest first: the brain version asked, its decision and the drift figures it rests on (docs/replay.md). Chart mean_recall over completed_at, a series per brain_version.';
COMMENT ON COLUMN evalledger.replay_drift_v1.replay_run_id IS 'The run (replay_run.replay_run_id; the --json document''s replay_run_id).';
COMMENT ON COLUMN evalledger.replay_drift_v1.brain_version IS 'The brain version asked (--brain-version).';
COMMENT ON COLUMN evalledger.replay_drift_v1.adapter IS 'How it was asked: command, url or python, then the command line, URL or module:function.';
COMMENT ON COLUMN evalledger.replay_drift_v1.rubric_version IS 'The replay rubric''s version the run was decided by, e.g. v1.0.';
COMMENT ON COLUMN evalledger.replay_drift_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN evalledger.replay_drift_v1.completed_at IS 'When the run was completed and decided (timestamptz).';
COMMENT ON COLUMN evalledger.replay_drift_v1.decision IS 'pass, fail or inconclusive, as the database decided.';
COMMENT ON COLUMN evalledger.replay_drift_v1.queries_asked IS 'Count of captured queries the run asked (replayed, not replayable or failed).';
COMMENT ON COLUMN evalledger.replay_drift_v1.queries_replayed IS 'Count of queries replayed in their captured mode (the ones measured).';
COMMENT ON COLUMN evalledger.replay_drift_v1.mean_recall IS 'Recall, 0-1: the mean over the replayed queries of the captured slugs found at the captured count; NULL when none was replayed.';
COMMENT ON COLUMN evalledger.replay_drift_v1.min_recall IS 'Recall, 0-1: the lowest replayed query''s.';
COMMENT ON COLUMN evalledger.replay_drift_v1.mean_jaccard IS 'Jaccard index, 0-1: the mean over the replayed queries of the two slug sets'' overlap.';
COMMENT ON COLUMN evalledger.replay_drift_v1.mean_rbo IS 'Rank-biased overlap, 0-1: the mean over the replayed queries, of the chunk orders.';
COMMENT ON COLUMN evalledger.replay_drift_v1.p95_latency_ratio IS 'The p95 replayed latency over the p95 captured latency, on an open scale (1: as fast as production); NULL when the captured p95 was 0 ms.';
COMMENT ON COLUMN evalledger.replay_drift_v1.queries_losing_a_source IS 'Count of replayed queries that lost a source production retrieved.';

-- RevOps and auditors, as the other suites' trends. A function a view calls runs with the reader's
-- rights: EXECUTE follows.
REVOKE ALL ON replay_drift_v1 FROM PUBLIC;
GRANT SELECT ON replay_drift_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.replay_drift_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
