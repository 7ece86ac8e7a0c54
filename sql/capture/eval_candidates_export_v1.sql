-- eval_candidates_export_v1: the rows of the window [since, until) (since NULL: unbounded),
-- optionally of one tool, newest first (created_at DESC, id DESC), at most max_rows (NULL: all),
-- each built by eval_candidate_ndjson_v1. Inlined by the planner, so it streams from the export
-- index under the caller's row-level security.
CREATE FUNCTION evalledger.eval_candidates_export_v1(since timestamptz, until timestamptz, tool text, max_rows bigint)
RETURNS SETOF json
LANGUAGE sql STABLE AS $$
    SELECT evalledger.eval_candidate_ndjson_v1(c)
      FROM evalledger.eval_candidates c
     WHERE (since IS NULL OR c.created_at >= since)
       AND c.created_at < until
       AND (tool IS NULL OR c.tool_name OPERATOR(pg_catalog.=) tool)
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT max_rows
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION eval_candidates_export_v1(timestamptz, timestamptz, text, bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION eval_candidates_export_v1(timestamp with time zone,timestamp with time zone,text,bigint) TO evalledger_owner;
