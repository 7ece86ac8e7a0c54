-- retention_clock_v1: the tier clock is the database's own time of recording, never the caller's.
-- A row's own clock is now(); a child row carries its parent's recording time (a brain-eval run's,
-- a takes-quality run's, a work-quality snapshot's), so every tier policy compares a column of the
-- row itself. A hold records who placed it.
CREATE FUNCTION evalledger.retention_clock_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    CASE TG_TABLE_NAME
    WHEN 'brain_eval_harness_run', 'brain_eval_harness_answer', 'brain_eval_judge_suggestion' THEN
        NEW.created_at := now();
        NEW.run_created_at := (SELECT l.created_at FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id);
    WHEN 'eval_takes_quality_judge_verdicts' THEN
        NEW.created_at := now();
        NEW.run_created_at := (SELECT t.created_at FROM evalledger.eval_takes_quality_runs t WHERE t.id = NEW.run_id);
    WHEN 'eval_work_quality_judge_verdicts' THEN
        NEW.created_at := now();
        NEW.snapshot_created_at := (SELECT s.created_at FROM evalledger.eval_work_quality_snapshots s
                                     WHERE s.snapshot_id = NEW.snapshot_id);
    WHEN 'eval_capture_failures' THEN
        NEW.recorded_at := now();
    WHEN 'legal_hold' THEN
        NEW.placed_at := now();
        NEW.placed_by := session_user;
    ELSE
        NEW.created_at := now();
    END CASE;
    RETURN NEW;
END;
$$;
