-- replay_lost_most_v1: the replayed queries of every completed replay run, ranked within the run
-- by what they lost (replay_lost_most_rows_v1): the queries that lost the most.
CREATE VIEW evalledger.replay_lost_most_v1 AS
    SELECT * FROM evalledger.replay_lost_most_rows_v1(NULL, NULL);
COMMENT ON VIEW evalledger.replay_lost_most_v1 IS
    'The replayed queries of every completed replay run, ranked within their run by what they lost (lowest recall first, then Jaccard, then rank-biased overlap): WHERE rank_in_run <= 10 is each run''s ten worst.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.replay_run_id IS 'The run (replay_run.replay_run_id).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.brain_version IS 'The brain version asked (--brain-version).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.completed_at IS 'When the run was completed and decided (timestamptz).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.rank_in_run IS 'Rank within the run, 1 the query that lost the most.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.capture_id IS 'The captured row (eval_candidates.id; the export''s id).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.tool_name IS 'query or search: which operation production captured.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.recall IS 'Recall, 0-1: the captured slugs found among as many replayed ones.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.jaccard IS 'Jaccard index, 0-1, of the captured and replayed slug sets.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.rbo IS 'Rank-biased overlap, 0-1, of the captured and replayed chunk orders.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.sources_lost IS 'Source ids production retrieved and the replay did not, sorted.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.sources_gained IS 'Source ids only the replay retrieved, sorted.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.latency_ratio IS 'The replayed latency over the captured latency, on an open scale (1: as fast); NULL when the captured was 0 ms.';

-- RevOps and auditors.
REVOKE ALL ON replay_lost_most_v1 FROM PUBLIC;
GRANT SELECT ON replay_lost_most_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.replay_lost_most_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
