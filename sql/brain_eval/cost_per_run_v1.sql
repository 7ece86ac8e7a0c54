-- cost_per_run_v1: per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.
CREATE VIEW evalledger.cost_per_run_v1 AS
    SELECT * FROM evalledger.cost_per_run_rows_v1();
COMMENT ON VIEW evalledger.cost_per_run_v1 IS
    'Per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.';
