-- brain_eval_run_state_v1: each run as a reader should take it, whether or not anything closed it
-- yet: open, complete, cancelled or abandoned (an open run past its deadline, by the database's
-- clock, reads abandoned, decided fail, before the next write closes it), with the decision and
-- rationale it has or will have.
CREATE VIEW brain_eval_run_state_v1 AS
    SELECT * FROM evalledger.brain_eval_run_state_rows_v1();
COMMENT ON VIEW evalledger.brain_eval_run_state_v1 IS
    'Each brain-eval run as a reader should take it: open, complete, cancelled or abandoned (an open run past its rubric''s deadline reads abandoned, decided fail, before anything closes it), with the decision and rationale it has or will have.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.system_prompt_hash IS 'SHA-256 hex of the run''s system prompt.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.question_catalog_version IS 'The question catalog the run asks.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.created_at IS 'When the database recorded the run (timestamptz): its deadline counts from here.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.completed_at IS 'When the run was completed or closed (timestamptz; NULL while open).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.deadline_at IS 'When an open run is abandoned (timestamptz): created_at plus the rubric''s open_run_days (14 by default), in 24-hour days.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.state IS 'open, complete, cancelled (by the runner, with a reason) or abandoned (open past deadline_at, or closed so).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.decision IS 'The decision: the stored one, or fail for an open run past its deadline (NULL while open).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.decision_rationale IS 'The rationale: the stored one, or the abandonment''s for an open run past its deadline (it begins "Abandoned:").';

GRANT SELECT ON brain_eval_run_state_v1 TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.brain_eval_run_state_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
