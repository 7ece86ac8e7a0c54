-- brain_eval_question_facts_v1: what the given runs add to brain_eval_questions_by_month, one row
-- per month key (brain, trigger, month started, month recorded: no reviewer, so the table's size
-- stays months x brains x triggers x questions) and catalog question (its catalog version and
-- question id): the completed runs it was asked in and those it did not pass in (question_passed
-- not true: a question a cancelled or abandoned run closed before its verdict was no pass, as
-- every pass rate counts such a run; migration 0167). Open runs add nothing. Inlined where it is
-- called, as brain_eval_run_facts_v1.
CREATE FUNCTION evalledger.brain_eval_question_facts_v1(runs uuid[])
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
