-- capture's named queries. Each starts with a "-- name: <name>" line and a comment that says
-- what it does (loaded by core/queries.py).

-- name: ndjson_by_capture_key
-- The NDJSON export lines of the captures with these client keys, newest first.
SELECT evalledger.eval_candidate_ndjson_v1(c)::text
  FROM evalledger.eval_candidates c
 WHERE c.capture_key = ANY(%(keys)s)
 ORDER BY c.created_at DESC, c.id DESC;

-- name: writer_session
-- The capture writer's session: the ledger's schema first, and no statement stuck for long.
SET search_path = evalledger, public; SET statement_timeout = '30s';

-- name: ensure_partitions
-- Create this month's partition of eval_candidates and the next three, if missing.
SELECT evalledger.capture_ensure_partitions_v2(3);

-- name: insert_candidates
-- A batch of captured rows sent as one JSON array (one statement, one round trip), their keys distinct;
-- a capture_key already stored is left out (the database refuses a statement that stores one twice).
-- A filter, not an anti-join, which could store the rows in another order than the batch's.
INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,
                                        expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied,
                                        latency_ms, remote, job_id, subagent_id, capture_key)
SELECT r.tool_name, r.query, r.retrieved_slugs, r.retrieved_chunk_ids, r.source_ids, r.expand_enabled, r.detail,
       r.detail_resolved, r.vector_enabled, r.expansion_applied, r.latency_ms, r.remote, r.job_id, r.subagent_id,
       r.capture_key
  FROM json_populate_recordset(NULL::evalledger.eval_candidates, %(rows)s::json) r
 WHERE r.capture_key <> ALL (ARRAY(SELECT evalledger.capture_keys_stored_v1(%(keys)s::uuid[])));

-- name: insert_candidates_before_0103
-- insert_candidates for a ledger not yet migrated to 0103, whose row trigger (capture_dedupe_v1)
-- skips a capture_key already stored: a newer writer keeps capturing into it until it is migrated.
INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,
                                        expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied,
                                        latency_ms, remote, job_id, subagent_id, capture_key)
SELECT tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids, expand_enabled, detail, detail_resolved,
       vector_enabled, expansion_applied, latency_ms, remote, job_id, subagent_id, capture_key
  FROM json_populate_recordset(NULL::evalledger.eval_candidates, %(rows)s::json);

-- name: ledger_refuses_repeated_keys
-- Whether the ledger has migration 0103: a statement storing a capture_key twice is refused, and
-- insert_candidates leaves out the keys stored already.
SELECT to_regprocedure('evalledger.capture_keys_stored_v1(uuid[])') IS NOT NULL;

-- name: exported_present
-- Which (id, created_at) pairs of exported lines are rows of this ledger already (an export imported back).
SELECT c.id, c.created_at
  FROM evalledger.eval_candidates c
  JOIN unnest(%(ids)s::bigint[], %(created)s::timestamptz[]) AS e(id, created_at)
    ON c.id = e.id AND c.created_at = e.created_at;

-- name: insert_failure
-- One capture failure; the same row failing for the same reason (the same failure_key) is recorded once.
INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at, tool_name, sqlstate, detail, capture_key)
VALUES (%(failure_key)s, %(reason)s, %(occurred_at)s, %(tool_name)s, %(sqlstate)s, %(detail)s, %(capture_key)s)
ON CONFLICT (failure_key) DO NOTHING;

-- name: export_copy
-- The export lines of a window, as COPY CSV with delimiter and quote bytes no JSON line contains, so each line passes through unchanged.
COPY (SELECT * FROM evalledger.eval_candidates_export_v1(%(since)s, %(until)s, %(tool)s, %(max_rows)s))
  TO STDOUT (FORMAT csv, DELIMITER E'\x02', QUOTE E'\x01');

-- name: list_failures
-- Capture failures newest first, since a time, optionally of one reason (what `capture failures` shows).
SELECT failure_id, occurred_at, reason, tool_name, sqlstate, detail
  FROM evalledger.eval_capture_failures
 WHERE (%(since)s::timestamptz IS NULL OR occurred_at >= %(since)s)
   AND (%(reason)s::text IS NULL OR reason = %(reason)s)
 ORDER BY occurred_at DESC, failure_id DESC
 LIMIT %(limit)s;
