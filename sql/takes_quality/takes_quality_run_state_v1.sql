-- takes_quality_run_state_v1: each takes-quality run as a reader should take it, whether or not
-- anything closed it yet: open, complete, cancelled or abandoned (an open run past its deadline, by
-- the database's clock, reads abandoned, verdict fail, before the next write closes it), with the
-- verdict and message it has or will have (issue 37, item 2; brain_eval_run_state_v1's rule).
CREATE VIEW takes_quality_run_state_v1 AS
    SELECT * FROM evalledger.takes_quality_run_state_rows_v1();
COMMENT ON VIEW evalledger.takes_quality_run_state_v1 IS
    'Each takes-quality run as a reader should take it: open, complete, cancelled or abandoned (an open run past its rubric''s deadline reads abandoned, verdict fail, before anything closes it), with the verdict and message it has or will have.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.run_id IS 'The run (eval_takes_quality_runs.id).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.target_id IS 'The brain whose takes were judged (target_id), NULL when the run named none.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.prompt_sha8 IS 'The judges'' prompt fingerprint (first 8 hex).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.scope_sha8 IS 'Where the sample was drawn from (source, path, slug prefix), fingerprinted (first 8 hex).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.created_at IS 'When the database recorded the run (timestamptz): its deadline counts from here.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.completed_at IS 'When the run was completed or closed (timestamptz; NULL while open).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.deadline_at IS 'When an open run is abandoned (timestamptz): created_at plus the rubric''s open_run_days (14 by default), in 24-hour days.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.state IS 'open, complete, cancelled (by the runner, with a reason) or abandoned (open past deadline_at, or closed so).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.verdict IS 'pass, fail or inconclusive: the stored verdict, or fail for an open run past its deadline (NULL while open).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.verdict_message IS 'The receipt''s verdictMessage, or the abandonment''s for an open run past its deadline (a closed run''s begins "Abandoned:").';

GRANT SELECT ON takes_quality_run_state_v1 TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_run_state_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
