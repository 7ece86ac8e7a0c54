-- retention_clock_v1: the tier clock is the database's own time of recording, never the caller's.
-- A row's own clock is now(); a child row carries its parent's recording time (a brain-eval run's,
-- a takes-quality run's, a work-quality snapshot's), so every tier policy compares a column of the
-- row itself. A hold records who placed it. The registries that do not age (reviewer, target) take
-- their recording time here too: the owner set them to 2001 or 2099 (issue 37, item 3). A capture
-- failure's occurred_at is the runner's (a failure spooled while the database was down is written
-- when it is back), so it is bounded instead: not after the database's clock, and not before the
-- hot tier, outside which neither the runner nor doctor would read it ('infinity', which psycopg
-- cannot read back, and 2099, which doctor counted as recent for ever, are both refused). A hold's
-- range, the owner's to choose, is refused where Python could not read it back.
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
        IF NEW.occurred_at > clock_timestamp() THEN
            RAISE EXCEPTION 'evalledger: occurred_at % is in the future', NEW.occurred_at
                USING ERRCODE = 'check_violation', COLUMN = 'occurred_at',
                      CONSTRAINT = 'eval_capture_failures_occurred_not_in_future';
        END IF;
        IF NEW.occurred_at < evalledger.hot_tier_start_v1() THEN
            RAISE EXCEPTION 'evalledger: occurred_at % is before the hot tier', NEW.occurred_at
                USING ERRCODE = 'check_violation', COLUMN = 'occurred_at',
                      CONSTRAINT = 'eval_capture_failures_occurred_in_the_hot_tier';
        END IF;
    WHEN 'legal_hold' THEN
        NEW.placed_at := now();
        NEW.placed_by := session_user;
        -- A range is the owner's to choose, but in times the project's readers can read back.
        IF NOT evalledger.readable_time_v1(NEW.held_from) OR NOT evalledger.readable_time_v1(NEW.held_to) THEN
            RAISE EXCEPTION 'evalledger: a hold''s range is held_from % to held_to %: each a time between the years 1 and 9999',
                    NEW.held_from, NEW.held_to
                USING ERRCODE = 'check_violation', COLUMN = 'held_to', CONSTRAINT = 'legal_hold_range_readable';
        END IF;
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

-- The registries' recording time is the database's too, though they never age.
CREATE TRIGGER reviewer_20_clock BEFORE INSERT ON reviewer
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

CREATE TRIGGER target_20_clock BEFORE INSERT ON target
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
