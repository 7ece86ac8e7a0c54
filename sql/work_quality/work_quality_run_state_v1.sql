-- work_quality_run_state_v1: each work-quality snapshot as a reader should take it, whether or not
-- anything closed it yet: open, complete, cancelled or abandoned (an open run past its deadline, by
-- the database's clock, reads abandoned, a regression, before the next write closes it), with the
-- regression and note it has or will have (issue 37, item 2; brain_eval_run_state_v1's rule).
CREATE VIEW work_quality_run_state_v1 AS
    SELECT * FROM evalledger.work_quality_run_state_rows_v1();
COMMENT ON VIEW evalledger.work_quality_run_state_v1 IS
    'Each work-quality snapshot as a reader should take it: open, complete, cancelled or abandoned (an open run past its rubric''s deadline reads abandoned, a regression, before anything closes it), with the regression and note it has or will have.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.name IS 'The target (bot or feature) the run assessed.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.run_id IS 'The assessed run''s id (--run-id).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.origin IS 'run (judged here) or import (a history file, complete when recorded).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.at IS 'When the snapshot was taken (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.created_at IS 'When the database recorded the snapshot (timestamptz): a run''s deadline counts from here.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.completed_at IS 'When the snapshot was completed or closed (timestamptz; NULL while open).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.deadline_at IS 'When an open run is abandoned (timestamptz): created_at plus the rubric''s open_run_days (14 by default), in 24-hour days; NULL for an import.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.state IS 'open, complete, cancelled (by the runner, with a reason) or abandoned (open past deadline_at, or closed so).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.regression IS 'Whether it is a regression: IsRegression of its comparison, always for a cancelled or abandoned one (NULL while open).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.note IS 'The note: the stored one (a closed run''s begins "Abandoned:"), or the abandonment''s for an open run past its deadline.';

GRANT SELECT ON work_quality_run_state_v1 TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_run_state_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
