-- brain_eval_log_admit_v1: a new run starts in progress, with nothing the database computes
-- supplied by the caller, under a rubric, and with a reviewer independent of the brain's prompt.
CREATE FUNCTION evalledger.brain_eval_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_open_v1('run', NEW.completed_at, 'question rows');
    PERFORM evalledger.refuse_supplied_v1(
        'brain_eval_log',
        jsonb_build_object(
            'reviewer_independence_verified', NEW.reviewer_independence_verified,
            'aggregated_scores', NEW.aggregated_scores,
            'hard_criteria_passed', NEW.hard_criteria_passed,
            'soft_criteria_passed_count', NEW.soft_criteria_passed_count,
            'decision', NEW.decision,
            'decision_rationale', NEW.decision_rationale,
            'token_cost_usd', NEW.token_cost_usd));

    IF NEW.rubric_id IS NULL THEN
        SELECT r.rubric_id INTO NEW.rubric_id
          FROM evalledger.rubric r WHERE r.suite = 'brain-eval'
         ORDER BY r.rubric_id DESC LIMIT 1;
    ELSIF NOT EXISTS (SELECT 1 FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id AND r.suite = 'brain-eval') THEN
        RAISE EXCEPTION 'evalledger: rubric % is not a brain-eval rubric', NEW.rubric_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id';
    END IF;

    -- Holding the target row FOR SHARE makes a concurrent prompt-tuner registration (which
    -- takes it FOR UPDATE) wait for this run or run first: never both unseen by the other.
    PERFORM evalledger.require_read_committed_v1('insert runs');
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.brain_under_test FOR SHARE;
    IF EXISTS (SELECT 1 FROM evalledger.prompt_tuner p
                WHERE p.target_id = NEW.brain_under_test AND p.user_id = NEW.reviewer_user_id) THEN
        RAISE EXCEPTION 'evalledger: reviewer % tunes the prompt of %: not independent',
                NEW.reviewer_user_id, NEW.brain_under_test
            USING ERRCODE = 'check_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_independent',
                  HINT = 'pick a reviewer who is not in the prompt-tuner registry for this brain';
    END IF;
    NEW.reviewer_independence_verified := true;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
