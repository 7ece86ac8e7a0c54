-- work_quality_run_state_rows_v1: the rows of work_quality_run_state_v1 (see it). SECURITY INVOKER
-- (the default), so each reader reads through its own row-level security on every server the ledger
-- supports. Inlined into the caller's query, so every operator is pg_catalog's by name (an inlined
-- function has no search_path of its own).
CREATE FUNCTION evalledger.work_quality_run_state_rows_v1()
RETURNS TABLE (snapshot_id bigint, name text, run_id text, origin text, at timestamptz, created_at timestamptz,
               completed_at timestamptz, deadline_at timestamptz, state text, regression boolean, note text)
LANGUAGE sql STABLE AS $$
SELECT s.snapshot_id, s.name, s.run_id, s.origin, s.at, s.created_at, s.completed_at, d.deadline_at,
       CASE WHEN c.closure_id IS NOT NULL THEN c.closure
            WHEN s.completed_at IS NOT NULL THEN 'complete'
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'abandoned'
            ELSE 'open' END AS state,
       CASE WHEN c.closure_id IS NOT NULL THEN true
            WHEN s.completed_at IS NOT NULL
            THEN pg_catalog.cardinality(evalledger.work_quality_is_regression_v1(s.comparison)) OPERATOR(pg_catalog.>) 0
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN true END AS regression,
       CASE WHEN s.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at
            THEN evalledger.brain_eval_abandoned_v1('abandoned', evalledger.brain_eval_overdue_v1(d.deadline_at), NULL)
            ELSE s.note END AS note
  FROM evalledger.eval_work_quality_snapshots s
  CROSS JOIN LATERAL (SELECT CASE WHEN s.origin OPERATOR(pg_catalog.=) 'run'
                                  THEN evalledger.brain_eval_run_deadline_v1(s.created_at, s.rubric_id) END AS deadline_at) d
  LEFT JOIN evalledger.eval_run_closure c ON c.snapshot_id OPERATOR(pg_catalog.=) s.snapshot_id
$$;

GRANT EXECUTE ON FUNCTION work_quality_run_state_rows_v1() TO evalledger_runner, evalledger_revops, evalledger_auditor;
