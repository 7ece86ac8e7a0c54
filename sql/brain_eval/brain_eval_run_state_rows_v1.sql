-- brain_eval_run_state_rows_v1: the view's rows. SECURITY INVOKER (the default), so each reader
-- reads through its own row-level security on every server the ledger supports (a view is
-- security_invoker only from PostgreSQL 15). Inlined into the caller's query, so every operator is
-- pg_catalog's by name (an inlined function has no search_path of its own).
CREATE FUNCTION evalledger.brain_eval_run_state_rows_v1()
RETURNS TABLE (eval_run_id uuid, brain_under_test varchar, system_prompt_hash varchar,
               question_catalog_version varchar, started_at timestamptz, created_at timestamptz,
               completed_at timestamptz, deadline_at timestamptz, state text, decision evalledger.eval_decision,
               decision_rationale text)
LANGUAGE sql STABLE AS $$
SELECT l.eval_run_id, l.brain_under_test, l.system_prompt_hash, l.question_catalog_version, l.started_at,
       l.created_at, l.completed_at, d.deadline_at,
       CASE WHEN c.eval_run_id IS NOT NULL THEN c.closure
            WHEN l.completed_at IS NOT NULL THEN 'complete'
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'abandoned'
            ELSE 'open' END AS state,
       CASE WHEN l.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'fail'::evalledger.eval_decision
            ELSE l.decision END AS decision,
       CASE WHEN l.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at
            THEN evalledger.brain_eval_abandoned_v1('abandoned', evalledger.brain_eval_overdue_v1(d.deadline_at), NULL)
            ELSE l.decision_rationale END AS decision_rationale
  FROM evalledger.brain_eval_log l
  CROSS JOIN LATERAL (SELECT evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id) AS deadline_at) d
  LEFT JOIN evalledger.brain_eval_run_closure c ON c.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
$$;

GRANT EXECUTE ON FUNCTION brain_eval_run_state_rows_v1()
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
