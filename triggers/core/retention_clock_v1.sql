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

-- Every aging row carries the database's own recording time (a child row its parent's), which a
-- caller cannot supply: a tier policy is then a comparison of the row's own column.
CREATE TRIGGER brain_analysis_log_20_tier_clock BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER eval_capture_failures_20_tier_clock BEFORE INSERT ON eval_capture_failures
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER legal_hold_20_tier_clock BEFORE INSERT ON legal_hold
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER brain_eval_harness_run_20_tier_clock BEFORE INSERT ON brain_eval_harness_run
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER brain_eval_harness_answer_20_tier_clock BEFORE INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER brain_eval_judge_suggestion_20_tier_clock BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER eval_takes_quality_judge_verdicts_20_tier_clock BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER eval_work_quality_judge_verdicts_20_tier_clock BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
