-- cost_per_run_v1: per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.
CREATE VIEW evalledger.cost_per_run_v1 AS
    SELECT * FROM evalledger.cost_per_run_rows_v1();
COMMENT ON VIEW evalledger.cost_per_run_v1 IS
    'Per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.';

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON cost_per_run_v1 FROM PUBLIC;
GRANT SELECT ON cost_per_run_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN cost_per_run_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN cost_per_run_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN cost_per_run_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN cost_per_run_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN cost_per_run_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN cost_per_run_v1.question_count IS 'Count of questions in the run.';
COMMENT ON COLUMN cost_per_run_v1.token_cost_usd IS 'USD: the token cost of the run''s brain calls, summed from its analyses.';
COMMENT ON COLUMN cost_per_run_v1.reviewer_hours_spent IS 'Hours: reported by the reviewer at sign-off (NULL if not reported).';
COMMENT ON COLUMN cost_per_run_v1.token_cost_per_question_usd IS 'USD per question, four decimals: token_cost_usd / question_count.';

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.cost_per_run_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
