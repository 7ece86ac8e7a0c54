-- brain_eval_log_admit_v1: a new run starts in progress, with nothing the database computes or
-- the reviewer enters supplied by the caller, started neither in the future nor more than a day
-- before it is recorded (unless an import in the same transaction says it is historical), under an
-- activated rubric, of a prompt its brain registered, and with a reviewer independent of every
-- brain that owns that prompt.
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
    IF NEW.reviewer_hours_spent IS NOT NULL OR NEW.calibration_notes IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: brain_eval_log.reviewer_hours_spent and calibration_notes are the reviewer''s to enter, not the runner''s'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'the run''s reviewer signs off with them (evalledger review finish); completion copies them onto the run';
    END IF;
    IF NEW.started_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: started_at % is in the future', NEW.started_at
            USING ERRCODE = 'check_violation', COLUMN = 'started_at', CONSTRAINT = 'brain_eval_log_started_not_in_future';
    END IF;
    IF NEW.started_at < now() - interval '1 day' AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i
            WHERE i.import_id = NEW.import_id AND i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: started_at % is more than a day before the run is recorded', NEW.started_at
            USING ERRCODE = 'check_violation', COLUMN = 'started_at', CONSTRAINT = 'brain_eval_log_started_recently',
                  HINT = 'historical runs are recorded through an import (evalledger brain-eval record --historical REASON)';
    END IF;
    IF NEW.import_id IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i
            WHERE i.import_id = NEW.import_id AND i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: import % was not made in this transaction', NEW.import_id
            USING ERRCODE = 'check_violation', COLUMN = 'import_id', CONSTRAINT = 'brain_eval_log_import_in_transaction';
    END IF;

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
