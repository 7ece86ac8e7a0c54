-- most_failing_questions_rows_v1: per catalog question, completed runs it appeared in, runs it failed in
-- (did not pass: a cancelled or abandoned run's question closed before its verdict included, migration
-- 0167), and its rank by fail share.
CREATE FUNCTION evalledger.most_failing_questions_rows_v1()
RETURNS TABLE (
    question_id varchar(16),
    runs_seen   bigint,
    runs_failed bigint,
    fail_pct    numeric,
    fail_rank   bigint)
LANGUAGE sql STABLE AS $$
    SELECT s.question_id, s.runs_seen, s.runs_failed,
           round(100.0 * s.runs_failed / s.runs_seen, 2),
           rank() OVER (ORDER BY s.runs_failed::numeric / s.runs_seen DESC, s.runs_failed DESC)
      FROM (SELECT q.question_id,
                   count(*) AS runs_seen,  -- a question appears at most once per run
                   count(*) FILTER (WHERE q.question_passed IS NOT TRUE) AS runs_failed
              FROM evalledger.brain_eval_question_score q
              JOIN evalledger.brain_eval_log l ON l.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id
             WHERE l.completed_at IS NOT NULL
             GROUP BY q.question_id) s
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION most_failing_questions_rows_v1() TO evalledger_revops, evalledger_auditor;
