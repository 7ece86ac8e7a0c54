-- takes_quality_run_state_rows_v1: the rows of takes_quality_run_state_v1 (see it). SECURITY INVOKER
-- (the default), so each reader reads through its own row-level security on every server the ledger
-- supports. Inlined into the caller's query, so every operator is pg_catalog's by name (an inlined
-- function has no search_path of its own).
CREATE FUNCTION evalledger.takes_quality_run_state_rows_v1()
RETURNS TABLE (run_id bigint, target_id varchar, prompt_sha8 char(8), scope_sha8 char(8), started_at timestamptz,
               created_at timestamptz, completed_at timestamptz, deadline_at timestamptz, state text,
               verdict text, verdict_message text)
LANGUAGE sql STABLE AS $$
SELECT r.id, r.target_id, r.prompt_sha8, r.scope_sha8, r.started_at, r.created_at, r.completed_at, d.deadline_at,
       CASE WHEN c.closure_id IS NOT NULL THEN c.closure
            WHEN r.completed_at IS NOT NULL THEN 'complete'
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'abandoned'
            ELSE 'open' END AS state,
       CASE WHEN r.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'fail'
            ELSE r.verdict END AS verdict,
       CASE WHEN r.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at
            THEN evalledger.brain_eval_abandoned_v1('abandoned', evalledger.brain_eval_overdue_v1(d.deadline_at), NULL)
            ELSE r.receipt_json OPERATOR(pg_catalog.->>) 'verdictMessage' END AS verdict_message
  FROM evalledger.eval_takes_quality_runs r
  CROSS JOIN LATERAL (SELECT evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id) AS deadline_at) d
  LEFT JOIN evalledger.eval_run_closure c ON c.takes_quality_run_id OPERATOR(pg_catalog.=) r.id
$$;

GRANT EXECUTE ON FUNCTION takes_quality_run_state_rows_v1() TO evalledger_runner, evalledger_revops, evalledger_auditor;
