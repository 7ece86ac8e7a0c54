-- A cancelled or abandoned run's questions count as not passed in the most-failing questions (found
-- by a newcomer reading the dashboard after the README's tour).
--
-- A run closed before it was reviewed whole (cancelled, or abandoned past its deadline) is complete,
-- and its question rows count in the question panels; but a question it closed before its verdict
-- has question_passed NULL, and the counts took `NOT question_passed`, which NULL is not: the run
-- was counted as having asked the question and not failed it, so each such run lowered every fail
-- share like a pass. docs/bi.md says no pass rate leaves out a run that was started and never
-- finished, and missing evidence never counts as met: a question without its verdict is now one it
-- did not pass, in brain_eval_question_facts_v1 (the stored monthly counts most_failing_questions_v2
-- reads) and in most_failing_questions_rows_v1. The stored counts are recounted here, from the
-- completed runs, by the function the completion trigger adds them with.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

CREATE OR REPLACE FUNCTION evalledger.brain_eval_question_facts_v1(runs uuid[])
RETURNS TABLE (
    brain_under_test         varchar(16),
    run_trigger              evalledger.eval_run_trigger,
    started_month            date,
    recorded_month           date,
    question_catalog_version varchar(32),
    question_id              varchar(16),
    runs_seen                bigint,
    runs_failed              bigint)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.run_trigger, evalledger.utc_month_v1(l.started_at),
           evalledger.utc_month_v1(l.created_at), l.question_catalog_version, q.question_id,
           count(*),  -- a question appears at most once per run
           count(*) FILTER (WHERE q.question_passed IS NOT TRUE)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs)) AND l.completed_at IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5, 6
$$;

CREATE OR REPLACE FUNCTION evalledger.most_failing_questions_rows_v1()
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

UPDATE evalledger.brain_eval_questions_by_month t SET runs_failed = f.runs_failed
  FROM evalledger.brain_eval_question_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) f
 WHERE t.brain_under_test = f.brain_under_test AND t.run_trigger = f.run_trigger
   AND t.started_month = f.started_month AND t.recorded_month = f.recorded_month
   AND t.question_catalog_version = f.question_catalog_version AND t.question_id = f.question_id
   AND t.runs_failed <> f.runs_failed;
