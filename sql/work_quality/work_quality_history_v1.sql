-- work_quality_history_v1: per target, every completed snapshot over time: the mean score of each
-- dimension, the comparison with the previous snapshot (deltas and headline verdict), whether it
-- is a regression at the policy's default tolerance and why, and the price (the assessed run's
-- cost, tokens and duration, and what the judges cost). Read by RevOps and auditors under their
-- own row-level security, by the same pattern as the brain-eval dashboards: the query lives in a
-- SECURITY INVOKER SQL function (work_quality_history_rows_v1) so the reader's policies filter it
-- on PostgreSQL 14 too, and the view gets security_invoker where the server has it (15+).
CREATE VIEW evalledger.work_quality_history_v1 AS
    SELECT * FROM evalledger.work_quality_history_rows_v1();
COMMENT ON VIEW evalledger.work_quality_history_v1 IS
    'Per target (name), each completed work-quality snapshot over time: dimension means, deltas and verdict against the previous snapshot, regression at the default tolerance, price and judge cost.';

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_history_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
-- The history view: RevOps and auditors, each under its own policies (a function a view calls is
-- executed with the reader's rights, so the reader needs EXECUTE on it and on what it calls).
REVOKE ALL ON work_quality_history_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_history_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN work_quality_history_v1.name IS 'The target (a bot or feature) the snapshots are of.';
COMMENT ON COLUMN work_quality_history_v1.kind IS 'bot or feature.';
COMMENT ON COLUMN work_quality_history_v1.persona IS 'The persona the work was done for (empty when none).';
COMMENT ON COLUMN work_quality_history_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN work_quality_history_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN work_quality_history_v1.origin IS 'run (judged here) or import (a history file brought in).';
COMMENT ON COLUMN work_quality_history_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN work_quality_history_v1.models IS 'The judge panel, provider/model each.';
COMMENT ON COLUMN work_quality_history_v1.efficacy IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the efficacy dimension.';
COMMENT ON COLUMN work_quality_history_v1.completeness IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the completeness dimension.';
COMMENT ON COLUMN work_quality_history_v1.output_quality IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the output_quality dimension.';
COMMENT ON COLUMN work_quality_history_v1.restraint IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the restraint dimension.';
COMMENT ON COLUMN work_quality_history_v1.reliability IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the reliability dimension.';
COMMENT ON COLUMN work_quality_history_v1.value_for_money IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the value_for_money dimension.';
COMMENT ON COLUMN work_quality_history_v1.overall IS 'Score, 0-1: the overall mean over the dimensions.';
COMMENT ON COLUMN work_quality_history_v1.prev_run_id IS 'The run id of the previous snapshot it is compared with (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.overall_delta IS 'Score points (0-1 scale): overall minus the previous snapshot''s overall.';
COMMENT ON COLUMN work_quality_history_v1.value_delta IS 'Score points (0-1 scale): value_for_money minus the previous snapshot''s.';
COMMENT ON COLUMN work_quality_history_v1.verdict IS 'better, same or worse against the previous snapshot (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.regression IS 'Boolean: a regression at the policy''s default tolerance (work_quality_is_regression_v1).';
COMMENT ON COLUMN work_quality_history_v1.regression_reasons IS 'Why it is a regression, one phrase each (empty when it is not).';
COMMENT ON COLUMN work_quality_history_v1.cost_usd IS 'USD: what the assessed run cost (its own price metric).';
COMMENT ON COLUMN work_quality_history_v1.tokens IS 'Count of tokens the assessed run used.';
COMMENT ON COLUMN work_quality_history_v1.duration_ms IS 'Milliseconds the assessed run took.';
COMMENT ON COLUMN work_quality_history_v1.iterations IS 'Count of the assessed run''s iterations.';
COMMENT ON COLUMN work_quality_history_v1.model_calls IS 'Count of the assessed run''s model calls.';
COMMENT ON COLUMN work_quality_history_v1.retries IS 'Count of the assessed run''s retries.';
COMMENT ON COLUMN work_quality_history_v1.judges_cost_usd IS 'USD: what the judges'' calls cost.';
COMMENT ON COLUMN work_quality_history_v1.note IS 'The database''s one-line note on the snapshot.';

-- The history view: RevOps and auditors, each under its own policies (a function a view calls is
-- executed with the reader's rights, so the reader needs EXECUTE on it and on what it calls).
REVOKE ALL ON work_quality_history_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_history_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN work_quality_history_v1.name IS 'The target (a bot or feature) the snapshots are of.';
COMMENT ON COLUMN work_quality_history_v1.kind IS 'bot or feature.';
COMMENT ON COLUMN work_quality_history_v1.persona IS 'The persona the work was done for (empty when none).';
COMMENT ON COLUMN work_quality_history_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN work_quality_history_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN work_quality_history_v1.origin IS 'run (judged here) or import (a history file brought in).';
COMMENT ON COLUMN work_quality_history_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN work_quality_history_v1.models IS 'The judge panel, provider/model each.';
COMMENT ON COLUMN work_quality_history_v1.efficacy IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the efficacy dimension.';
COMMENT ON COLUMN work_quality_history_v1.completeness IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the completeness dimension.';
COMMENT ON COLUMN work_quality_history_v1.output_quality IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the output_quality dimension.';
COMMENT ON COLUMN work_quality_history_v1.restraint IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the restraint dimension.';
COMMENT ON COLUMN work_quality_history_v1.reliability IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the reliability dimension.';
COMMENT ON COLUMN work_quality_history_v1.value_for_money IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the value_for_money dimension.';
COMMENT ON COLUMN work_quality_history_v1.overall IS 'Score, 0-1: the overall mean over the dimensions.';
COMMENT ON COLUMN work_quality_history_v1.prev_run_id IS 'The run id of the previous snapshot it is compared with (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.overall_delta IS 'Score points (0-1 scale): overall minus the previous snapshot''s overall.';
COMMENT ON COLUMN work_quality_history_v1.value_delta IS 'Score points (0-1 scale): value_for_money minus the previous snapshot''s.';
COMMENT ON COLUMN work_quality_history_v1.verdict IS 'better, same or worse against the previous snapshot (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.regression IS 'Boolean: a regression at the policy''s default tolerance (work_quality_is_regression_v1).';
COMMENT ON COLUMN work_quality_history_v1.regression_reasons IS 'Why it is a regression, one phrase each (empty when it is not).';
COMMENT ON COLUMN work_quality_history_v1.cost_usd IS 'USD: what the assessed run cost (its own price metric).';
COMMENT ON COLUMN work_quality_history_v1.tokens IS 'Count of tokens the assessed run used.';
COMMENT ON COLUMN work_quality_history_v1.duration_ms IS 'Milliseconds the assessed run took.';
COMMENT ON COLUMN work_quality_history_v1.iterations IS 'Count of the assessed run''s iterations.';
COMMENT ON COLUMN work_quality_history_v1.model_calls IS 'Count of the assessed run''s model calls.';
COMMENT ON COLUMN work_quality_history_v1.retries IS 'Count of the assessed run''s retries.';
COMMENT ON COLUMN work_quality_history_v1.judges_cost_usd IS 'USD: what the judges'' calls cost.';
COMMENT ON COLUMN work_quality_history_v1.note IS 'The database''s one-line note on the snapshot.';
