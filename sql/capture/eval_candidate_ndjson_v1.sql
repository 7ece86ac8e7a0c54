-- eval_candidate_ndjson_v1: one captured row as its seed-001 NDJSON object, the one place that row
-- is built (the export and the demo both call it). row_to_json of the row type keeps the field
-- order (jsonb would not) and prints compact JSON; one expression, so the planner inlines it and
-- a whole-row argument costs no more than naming the columns.
CREATE FUNCTION evalledger.eval_candidate_ndjson_v1(c evalledger.eval_candidates) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT row_to_json(ROW(1, c.id, c.tool_name, c.query, c.retrieved_slugs, c.retrieved_chunk_ids,
                           c.source_ids, c.expand_enabled, c.detail, c.detail_resolved, c.vector_enabled,
                           c.expansion_applied, c.latency_ms, c.remote, c.job_id, c.subagent_id,
                           to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                       )::evalledger.eval_candidate_ndjson_row_v1)
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION eval_candidate_ndjson_v1(eval_candidates) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION eval_candidate_ndjson_v1(eval_candidates) TO evalledger_owner;
