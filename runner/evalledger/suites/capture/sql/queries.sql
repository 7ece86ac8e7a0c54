-- capture's named queries. Each starts with a "-- name: <name>" line and a comment that says
-- what it does (loaded by core/queries.py).

-- name: ndjson_by_capture_key
-- The NDJSON export lines of the captures with these client keys, newest first.
SELECT evalledger.eval_candidate_ndjson_v1(c)::text
  FROM evalledger.eval_candidates c
 WHERE c.capture_key = ANY(%(keys)s)
 ORDER BY c.created_at DESC, c.id DESC;
