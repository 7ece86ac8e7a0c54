-- replay_query_measured_v1: what the database decides of a replayed query from what it stores of
-- it (the captured fields, what the adapter did and returned) and its run's rubric's rbo_p: its
-- status (an answer in the captured mode is replayed, an answer in another mode or a decline is
-- not replayable, a failure is an adapter failure, the purge's row is purged) and, replayed only,
-- its recall, Jaccard, rank-biased overlap, sources gained and lost, and latency ratio (NULL when
-- the captured latency was 0), unrounded. One home for the rule: replay_query_admit_v1 stores what
-- it returns, and ledger_recompute_v3 compares every stored query with it again.
CREATE FUNCTION evalledger.replay_query_measured_v1(
    q evalledger.replay_query, rbo_p numeric,
    OUT status text, OUT recall numeric, OUT jaccard numeric, OUT rbo numeric, OUT sources_gained text[],
    OUT sources_lost text[], OUT latency_ratio numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.status,
           CASE WHEN s.replayed THEN evalledger.replay_recall_v1(q.captured_slugs, q.retrieved_slugs) END,
           CASE WHEN s.replayed THEN evalledger.replay_jaccard_v1(q.captured_slugs, q.retrieved_slugs) END,
           CASE WHEN s.replayed THEN evalledger.replay_rbo_v1(q.captured_chunk_ids, q.retrieved_chunk_ids, rbo_p) END,
           CASE WHEN s.replayed THEN ARRAY(SELECT DISTINCT x COLLATE "C" FROM unnest(q.source_ids) x
                                            WHERE x <> ALL (q.captured_source_ids) ORDER BY 1) END,
           CASE WHEN s.replayed THEN ARRAY(SELECT DISTINCT x COLLATE "C" FROM unnest(q.captured_source_ids) x
                                            WHERE x <> ALL (q.source_ids) ORDER BY 1) END,
           CASE WHEN s.replayed AND q.captured_latency_ms > 0
                THEN q.latency_ms::numeric / q.captured_latency_ms::numeric END
      FROM (SELECT d.status, d.status = 'replayed' AS replayed
              FROM (SELECT CASE WHEN q.outcome = 'capture_purged' THEN 'capture_purged'
                                WHEN q.outcome = 'adapter_failed' THEN 'adapter_failed'
                                WHEN q.outcome = 'answered' AND q.vector_enabled = q.captured_vector_enabled
                                    THEN 'replayed'
                                ELSE 'not_replayable' END AS status) d) s
$$;
