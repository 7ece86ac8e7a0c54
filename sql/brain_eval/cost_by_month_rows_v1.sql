-- cost_by_month_rows_v1: per brain and month started, the completed runs, their token cost (USD:
-- the total and the mean per run) and the reviewer hours reported (the total, the runs that
-- reported them, and the mean per reporting run): seed 002's cost-per-run trend over any span at
-- the cost of its months (from brain_eval_runs_by_month). Filters, each NULL for all: a brain,
-- the first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.cost_by_month_rows_v1(p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test             varchar(16),
    started_month                date,
    runs                         bigint,
    token_cost_usd               numeric,
    token_cost_per_run_usd       numeric,
    reviewer_hours_spent         numeric,
    runs_with_hours              bigint,
    reviewer_hours_per_run       numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT f.brain_under_test, f.started_month, sum(f.runs)::bigint, sum(f.token_cost_usd),
           round(sum(f.token_cost_usd) / sum(f.runs), 4), sum(f.reviewer_hours_spent), sum(f.runs_with_hours)::bigint,
           round(sum(f.reviewer_hours_spent) / nullif(sum(f.runs_with_hours), 0), 2)
      FROM evalledger.brain_eval_runs_by_month f
     WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
       AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
       AND (p_to_month IS NULL OR f.started_month <= p_to_month)
       AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
     GROUP BY f.brain_under_test, f.started_month
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION cost_by_month_rows_v1(text, date, date, text) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
