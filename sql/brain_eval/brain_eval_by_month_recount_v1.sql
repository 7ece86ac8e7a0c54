-- brain_eval_by_month_recount_v1: every row of the three by-month panel tables that differs from a
-- recount of the ledger's rows as they stand (a row missing on either side included): the table,
-- the month key, what the table holds and what the recount gives (NULL where a side has no row).
-- None when the panels are exactly what the completed runs say. It reads every completed run,
-- so it is an audit check (doctor, the tests), not a panel. SECURITY DEFINER: it compares the
-- whole ledger whoever asks; EXECUTE is the auditor's and the owner role's.
CREATE FUNCTION evalledger.brain_eval_by_month_recount_v1()
RETURNS TABLE (table_name text, month_key jsonb, stored jsonb, recounted jsonb)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT 'brain_eval_runs_by_month'::text, coalesce(s.k, r.k), s.v, r.v
      FROM (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'reviewer_user_id', x.reviewer_user_id) AS k, to_jsonb(x) AS v FROM evalledger.brain_eval_runs_by_month x) s
      FULL JOIN (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'reviewer_user_id', x.reviewer_user_id) AS k, to_jsonb(x) AS v
                   FROM evalledger.brain_eval_run_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) x) r
        ON r.k = s.k
     WHERE s.v IS DISTINCT FROM r.v
    UNION ALL
    SELECT 'brain_eval_questions_by_month'::text, coalesce(s.k, r.k), s.v, r.v
      FROM (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'question_catalog_version', x.question_catalog_version, 'question_id', x.question_id) AS k, to_jsonb(x) AS v FROM evalledger.brain_eval_questions_by_month x) s
      FULL JOIN (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'question_catalog_version', x.question_catalog_version, 'question_id', x.question_id) AS k, to_jsonb(x) AS v
                   FROM evalledger.brain_eval_question_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) x) r
        ON r.k = s.k
     WHERE s.v IS DISTINCT FROM r.v
    UNION ALL
    SELECT 'brain_eval_agreement_by_month'::text, coalesce(s.k, r.k), s.v, r.v
      FROM (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'judge_model', x.judge_model) AS k, to_jsonb(x) AS v FROM evalledger.brain_eval_agreement_by_month x) s
      FULL JOIN (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'judge_model', x.judge_model) AS k, to_jsonb(x) AS v
                   FROM evalledger.brain_eval_agreement_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) x) r
        ON r.k = s.k
     WHERE s.v IS DISTINCT FROM r.v
$$;

-- The recount reads the whole ledger: an audit check, the auditor's and the owner role's.
GRANT EXECUTE ON FUNCTION brain_eval_by_month_recount_v1() TO evalledger_auditor, evalledger_owner;
