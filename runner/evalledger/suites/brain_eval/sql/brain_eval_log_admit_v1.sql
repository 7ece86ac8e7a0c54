-- brain_eval_log_admit_v1: a new run starts in progress, with nothing the database computes
-- supplied by the caller, under an activated rubric, of a prompt its brain registered, and with a
-- reviewer independent of every brain that owns that prompt.
CREATE FUNCTION evalledger.brain_eval_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tuned varchar(16);
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

    NEW.rubric_id := evalledger.rubric_admitted_v1('brain-eval', NEW.rubric_id);

    -- The prompt under review is one its brain registered (`brain add`); independence is asked of
    -- the tuners of every brain that registered it or whose analyses carry it. Holding their target
    -- rows FOR SHARE makes a concurrent prompt-tuner registration (which takes one FOR NO KEY
    -- UPDATE) wait for this run or run first: never both unseen by the other.
    PERFORM evalledger.require_read_committed_v1('insert runs');
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_version v
                    WHERE v.target_id = NEW.brain_under_test AND v.system_prompt_hash = NEW.system_prompt_hash) THEN
        RAISE EXCEPTION 'evalledger: % has no registered version with system prompt %',
                NEW.brain_under_test, NEW.system_prompt_hash
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'system_prompt_hash',
                  CONSTRAINT = 'brain_eval_log_prompt_registered',
                  HINT = 'register the brain version with evalledger brain add';
    END IF;
    PERFORM 1 FROM evalledger.target t
     WHERE t.target_id IN (SELECT v.target_id FROM evalledger.brain_version v
                            WHERE v.system_prompt_hash = NEW.system_prompt_hash)
        OR t.target_id IN (SELECT a.brain FROM evalledger.brain_analysis_log a
                            WHERE a.system_prompt_hash = NEW.system_prompt_hash)
     ORDER BY t.target_id FOR SHARE;
    -- The reviewer must exist before independence is asked: the refusal below would otherwise
    -- tell the runner who tunes a prompt, for any uuid it tries (it may not read the registry).
    IF NOT EXISTS (SELECT 1 FROM evalledger.reviewer r WHERE r.reviewer_user_id = NEW.reviewer_user_id) THEN
        RAISE EXCEPTION 'evalledger: no reviewer %', NEW.reviewer_user_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_fkey';
    END IF;
    SELECT p.target_id INTO tuned FROM evalledger.prompt_tuner p
     WHERE p.user_id = NEW.reviewer_user_id
       AND (p.target_id IN (SELECT v.target_id FROM evalledger.brain_version v
                             WHERE v.system_prompt_hash = NEW.system_prompt_hash)
            OR p.target_id IN (SELECT a.brain FROM evalledger.brain_analysis_log a
                                WHERE a.system_prompt_hash = NEW.system_prompt_hash))
     ORDER BY p.target_id <> NEW.brain_under_test, p.target_id LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: reviewer % tunes the prompt of %: not independent',
                NEW.reviewer_user_id, tuned
            USING ERRCODE = 'check_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_independent',
                  HINT = 'pick a reviewer who is not in the prompt-tuner registry for this brain';
    END IF;
    NEW.reviewer_independence_verified := true;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
