-- stale_fixture_by_month_rows_v1: per brain and month started, the completed runs, those with
-- stale-fixture questions, those that recognised all of them and those with a miss (sev-2), and
-- the stale-fixture questions and recognitions with their pass rate: the stale-fixture panel over
-- any span at the cost of its months (from brain_eval_runs_by_month; each reader sees the months
-- its policy shows). Filters, each NULL for all: a brain, the first and last month started (UTC;
-- whole months), a run trigger.
CREATE FUNCTION evalledger.stale_fixture_by_month_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test    varchar(16),
    started_month       date,
    runs                bigint,
    runs_with_stale     bigint,
    runs_all_recognised bigint,
    sev2_runs           bigint,
    stale_questions     bigint,
    stale_recognised    bigint,
    stale_pass_rate     numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT f.brain_under_test, f.started_month, sum(f.runs)::bigint, sum(f.runs_with_stale)::bigint,
           sum(f.runs_all_recognised)::bigint, sum(f.sev2_runs)::bigint, sum(f.stale_questions)::bigint,
           sum(f.stale_recognised)::bigint, sum(f.stale_recognised)::numeric / nullif(sum(f.stale_questions), 0)
      FROM evalledger.brain_eval_runs_by_month f
     WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
       AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
       AND (p_to_month IS NULL OR f.started_month <= p_to_month)
       AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
     GROUP BY f.brain_under_test, f.started_month
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION stale_fixture_by_month_rows_v1(text, date, date, text) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
