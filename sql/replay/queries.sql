-- replay's named queries. Each starts with a "-- name: <name>" line and a comment that says what it
-- does (loaded by core/queries.py).

-- name: open_run
-- The open run of the same request (brain version, adapter, what was asked for), which a second runner resumes.
SELECT r.replay_run_id, r.since_at, r.until_at, r.tool, r.remote, r.max_rows, r.planned, r.completed_at
  FROM evalledger.replay_run r
 WHERE r.completed_at IS NULL AND r.brain_version = %(brain_version)s AND r.adapter_kind = %(adapter_kind)s
   AND r.adapter = %(adapter)s AND r.source = %(source)s AND r.request = %(request)s::jsonb
 ORDER BY r.replay_run_id DESC
 LIMIT 1;

-- name: start_run
-- A new replay run (the database fingerprints it, plans a ledger window and stamps its start), or nothing when it exists.
INSERT INTO evalledger.replay_run (brain_version, adapter_kind, adapter, source, request, since_at, until_at, tool,
                                   remote, max_rows, file_sha256, planned)
VALUES (%(brain_version)s, %(adapter_kind)s, %(adapter)s, %(source)s, %(request)s, %(since_at)s, %(until_at)s,
        %(tool)s, %(remote)s, %(max_rows)s, %(file_sha256)s, %(planned)s)
ON CONFLICT DO NOTHING
RETURNING replay_run_id, since_at, until_at, tool, remote, max_rows, planned, completed_at;

-- name: same_window_run
-- The run of the same brain version, adapter and resolved window or file (under the active rubric), complete or not: the one holding that identity before one closed unfinished.
SELECT r.replay_run_id, r.since_at, r.until_at, r.tool, r.remote, r.max_rows, r.planned, r.completed_at
  FROM evalledger.replay_run r
 WHERE r.brain_version = %(brain_version)s AND r.adapter_kind = %(adapter_kind)s AND r.adapter = %(adapter)s
   AND r.source = %(source)s AND r.since_at IS NOT DISTINCT FROM %(since_at)s
   AND r.until_at IS NOT DISTINCT FROM %(until_at)s AND r.tool IS NOT DISTINCT FROM %(tool)s
   AND r.remote IS NOT DISTINCT FROM %(remote)s AND r.max_rows IS NOT DISTINCT FROM %(max_rows)s
   AND r.file_sha256 IS NOT DISTINCT FROM %(file_sha256)s
 ORDER BY coalesce(r.summary ? 'unrecorded', false), r.replay_run_id DESC
 LIMIT 1;

-- name: run_state
-- One replay run as it stands: its window, plan, and (once complete) the decision and summary.
SELECT r.replay_run_id, r.brain_version, r.adapter_kind, r.adapter, r.source, r.since_at, r.until_at, r.tool,
       r.remote, r.max_rows, r.planned, r.completed_at, r.decision, r.rationale, r.summary,
       (SELECT b.version FROM evalledger.rubric b WHERE b.rubric_id = r.rubric_id) AS rubric_version
  FROM evalledger.replay_run r WHERE r.replay_run_id = %(run_id)s;

-- name: claim_run
-- Claim a replay run for this runner until the claim's transaction ends (never committed); waits while another runner holds it.
INSERT INTO evalledger.run_claim (suite, run_id) VALUES ('replay', %(run_id)s);

-- name: replayed_ids
-- The captured rows a run has recorded already (asked, whatever came back): never asked again.
SELECT q.capture_id FROM evalledger.replay_query q WHERE q.replay_run_id = %(run_id)s;

-- name: window_rows
-- The captured rows of a replay window, newest first as export orders them (created_at DESC, id DESC), at most max_rows.
SELECT c.id, c.created_at, c.tool_name, c.query, c.detail, c.expand_enabled, c.vector_enabled
  FROM evalledger.eval_candidates c
 WHERE (%(since_at)s::timestamptz IS NULL OR c.created_at >= %(since_at)s::timestamptz)
   AND c.created_at < %(until_at)s::timestamptz
   AND (%(tool)s::text IS NULL OR c.tool_name = %(tool)s::text)
   AND (%(remote)s::boolean IS NULL OR c.remote = %(remote)s::boolean)
 ORDER BY c.created_at DESC, c.id DESC
 LIMIT %(max_rows)s;

-- name: insert_query
-- One replayed query of a run: the database copies a ledger row's captured fields, decides its status and computes every measure.
INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, tool_name, captured_slugs,
                                     captured_chunk_ids, captured_source_ids, captured_vector_enabled,
                                     captured_expand_enabled, captured_detail, captured_latency_ms, outcome,
                                     retrieved_slugs, retrieved_chunk_ids, source_ids, vector_enabled,
                                     expansion_applied, detail_resolved, latency_ms, error)
VALUES (%(replay_run_id)s, %(capture_id)s, %(capture_created_at)s, %(tool_name)s, %(captured_slugs)s,
        %(captured_chunk_ids)s, %(captured_source_ids)s, %(captured_vector_enabled)s, %(captured_expand_enabled)s,
        %(captured_detail)s, %(captured_latency_ms)s, %(outcome)s, %(retrieved_slugs)s, %(retrieved_chunk_ids)s,
        %(source_ids)s, %(vector_enabled)s, %(expansion_applied)s, %(detail_resolved)s, %(latency_ms)s, %(error)s)
ON CONFLICT ON CONSTRAINT replay_query_once DO NOTHING
RETURNING status, recall;

-- name: complete_run
-- Complete a replay run: the database decides it (replay_run_decide_v1); NULL when it was complete already.
SELECT evalledger.replay_complete_v1(%(run_id)s) AS summary;

-- name: run_queries
-- A run's replayed queries as the database measured them, unrounded, in the order they were recorded.
SELECT q.capture_id, q.status, q.recall::float8 AS recall, q.jaccard::float8 AS jaccard, q.rbo::float8 AS rbo,
       q.sources_gained, q.sources_lost, q.latency_ratio::float8 AS latency_ratio, q.error
  FROM evalledger.replay_query q
 WHERE q.replay_run_id = %(run_id)s
 ORDER BY q.replay_query_id;

-- name: dashboard_replay_drift_v1
-- The replay_drift_v1 panel, newest run first.
SELECT * FROM evalledger.replay_drift_v1;

-- name: dashboard_replay_lost_most_v1
-- The replay_lost_most_v1 panel: each run's queries, newest run first, the one that lost the most first.
SELECT * FROM evalledger.replay_lost_most_v1;

-- name: dashboard_production_beside_eval_v1
-- The production_beside_eval_v1 panel: per brain, the questions furthest from production first.
SELECT * FROM evalledger.production_beside_eval_v1 ORDER BY brain_under_test, jaccard, prompt_hash;

-- name: dashboard_replay_capture_purged_v1
-- The replay_capture_purged_v1 panel (the auditor's): replay runs whose captured rows the retention purge took, newest run first.
SELECT * FROM evalledger.replay_capture_purged_v1;
