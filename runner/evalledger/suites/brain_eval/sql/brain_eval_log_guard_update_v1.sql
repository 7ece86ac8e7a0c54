-- brain_eval_log_guard_update_v1: the only UPDATE a run accepts is its completion: completed_at
-- set once, from NULL, with every other column as it was.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_log_guard_update_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    changed text;
BEGIN
    IF OLD.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: run % is complete: brain_eval_log is append-only', OLD.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    changed := changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY['completed_at']);
    IF changed IS NOT NULL THEN
        IF changed ~ '(aggregated_scores|hard_criteria_passed|soft_criteria_passed_count|decision|token_cost_usd|reviewer_independence_verified)' THEN
            PERFORM evalledger.refuse_supplied_v1('brain_eval_log', jsonb_build_object(changed, true));
        END IF;
        RAISE EXCEPTION 'evalledger: brain_eval_log is append-only: only completed_at may be set, not %', changed
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.completed_at IS NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is set once, to a time'
            USING ERRCODE = 'not_null_violation', COLUMN = 'completed_at';
    END IF;
    RETURN NEW;
END;
$$;
