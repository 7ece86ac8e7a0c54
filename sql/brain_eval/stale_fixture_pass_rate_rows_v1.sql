-- stale_fixture_pass_rate_rows_v1: per completed run, its stale-fixture questions, how many were recognised, and the sev-2 flag.
CREATE FUNCTION evalledger.stale_fixture_pass_rate_rows_v1()
RETURNS TABLE (
    eval_run_id      uuid,
    brain_under_test varchar(16),
    run_trigger      text,
    started_at       timestamptz,
    completed_at     timestamptz,
    stale_questions  bigint,
    stale_recognised bigint,
    stale_missed     bigint,
    all_recognised   boolean,
    sev2_incident    boolean)
LANGUAGE sql STABLE AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.started_at, l.completed_at,
           count(*) FILTER (WHERE q.uses_stale_fixture),
           count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized),
           count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized),
           -- NULL when the run had no stale-fixture question: nothing to recognise.
           bool_and(q.staleness_correctly_recognized) FILTER (WHERE q.uses_stale_fixture),
           count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized) > 0
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.completed_at IS NOT NULL
     GROUP BY l.eval_run_id
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION stale_fixture_pass_rate_rows_v1() TO evalledger_revops, evalledger_auditor;
