-- cost_per_run_rows_v1: per completed run, its token cost and reviewer hours, by brain and time.
CREATE FUNCTION evalledger.cost_per_run_rows_v1()
RETURNS TABLE (
    brain_under_test            varchar(16),
    eval_run_id                 uuid,
    run_trigger                 text,
    started_at                  timestamptz,
    completed_at                timestamptz,
    question_count              integer,
    token_cost_usd              numeric(10,4),
    reviewer_hours_spent        numeric(5,2),
    token_cost_per_question_usd numeric)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.eval_run_id, l.run_trigger::text, l.started_at, l.completed_at,
           l.question_count, l.token_cost_usd, l.reviewer_hours_spent,
           round(l.token_cost_usd / l.question_count, 4)
      FROM evalledger.brain_eval_log l
     WHERE l.completed_at IS NOT NULL
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION cost_per_run_rows_v1() TO evalledger_revops, evalledger_auditor;
