-- complete_once_v1: the only UPDATE a run accepts is its completion: completed_at set once, from
-- NULL, with every other column as it was. The time is the database's clock when the completion
-- takes the run's row (after any wait for the rows locking it), whatever the UPDATE set: a caller's
-- time could date a decision before the scores and sign-off it was decided on (issue 37, item 8).
-- Every suite's run table uses it; its trigger arguments are how a message names a run ('run',
-- 'takes-quality run'), the run's key column and, optionally, a text[] of the columns the database
-- computes, a change to which is refused as a value the caller may not supply.
CREATE FUNCTION evalledger.complete_once_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    changed text;
BEGIN
    IF OLD.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: % % is complete: % is append-only',
                TG_ARGV[0], to_jsonb(OLD) ->> TG_ARGV[1], TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    changed := evalledger.changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY['completed_at']);
    IF changed IS NOT NULL THEN
        IF TG_NARGS > 2 AND string_to_array(changed, ', ') && TG_ARGV[2]::text[] THEN
            PERFORM evalledger.refuse_supplied_v1(TG_TABLE_NAME, jsonb_build_object(changed, true));
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: only completed_at may be set, not %', TG_TABLE_NAME, changed
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.completed_at IS NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is set once, to a time'
            USING ERRCODE = 'not_null_violation', COLUMN = 'completed_at';
    END IF;
    NEW.completed_at := clock_timestamp();
    RETURN NEW;
END;
$$;

-- A changed computed column is refused as a value the caller may not supply.
CREATE TRIGGER brain_eval_log_10_guard_update BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('run', 'eval_run_id',
        '{aggregated_scores,hard_criteria_passed,soft_criteria_passed_count,decision,decision_rationale,token_cost_usd,reviewer_independence_verified,reviewer_hours_spent,calibration_notes}');

CREATE TRIGGER eval_takes_quality_runs_10_guard_update BEFORE UPDATE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('takes-quality run', 'id');

-- A changed computed column is refused as a value the caller may not supply.
CREATE TRIGGER eval_work_quality_snapshots_10_guard_update BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('work-quality snapshot', 'snapshot_id',
        '{mean_scores,disagreement,note,comparison,judges_cost_usd,snapshot_json,prev_snapshot_id,prev_run_id}');

-- A changed decision is refused as a value the caller may not supply.
CREATE TRIGGER replay_run_10_guard_update BEFORE UPDATE ON replay_run
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('replay run', 'replay_run_id', '{decision,rationale,summary}');
