-- brain_eval_log_admit_v2: a new run starts in progress, with nothing the database computes or the
-- reviewer enters supplied by the caller, started neither in the future nor more than a day (in
-- UTC, by the statement's clock: utc_ago_v1) before it is recorded unless an import in the same
-- transaction says it is historical (and at a time readable_time_v1 admits), under an activated
-- rubric, over a loaded question catalog, of a prompt, model and label its brain registered as one
-- version, and with a reviewer independent of every brain that owns that prompt (brain_prompt, read
-- by key). A refusal for independence names neither the brain nor who tunes it: the runner may not
-- read the tuner registry.
CREATE FUNCTION evalledger.brain_eval_log_admit_v2() RETURNS trigger
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
    IF NEW.reviewer_hours_spent IS NOT NULL OR NEW.calibration_notes IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: brain_eval_log.reviewer_hours_spent and calibration_notes are the reviewer''s to enter, not the runner''s'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'the run''s reviewer signs off with them (evalledger review finish); completion copies them onto the run';
    END IF;
    IF NEW.started_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: started_at % is in the future', NEW.started_at
            USING ERRCODE = 'check_violation', COLUMN = 'started_at', CONSTRAINT = 'brain_eval_log_started_not_in_future';
    END IF;
    -- An import may date a run years back, but not where no reader can read it (issue 37, item 8).
    IF NOT evalledger.readable_time_v1(NEW.started_at) THEN
        RAISE EXCEPTION 'evalledger: started_at % is not a time between the years 1 and 9999', NEW.started_at
            USING ERRCODE = 'check_violation', COLUMN = 'started_at', CONSTRAINT = 'brain_eval_log_started_readable';
    END IF;
    IF NEW.started_at < evalledger.utc_ago_v1(evalledger.backdating_window_v1()) AND NOT EXISTS (
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

    NEW.rubric_id := evalledger.rubric_admitted_v2('brain-eval', NEW.rubric_id);
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = NEW.question_catalog_version) THEN
        RAISE EXCEPTION 'evalledger: question catalog % is not loaded', NEW.question_catalog_version
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'question_catalog_version',
                  CONSTRAINT = 'brain_eval_log_catalog_loaded',
                  HINT = 'load it first (evalledger catalog load FILE): its stale-fixture questions and sources are policy';
    END IF;

    -- The prompt under review is one its brain registered (`brain add`); independence is asked of
    -- the tuners of every brain that owns it (brain_prompt). Holding their target rows FOR SHARE makes
    -- a concurrent prompt-tuner registration (FOR NO KEY UPDATE) wait for this run or run first, and
    -- holding the prompt's registry rows FOR SHARE does the same for a brain taking the prompt on
    -- (brain_prompt_claim_v1, FOR UPDATE): never both unseen by the other.
    PERFORM evalledger.require_read_committed_v2('a run''s admission (reviewer independence)');
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_version v
                    WHERE v.target_id = NEW.brain_under_test AND v.system_prompt_hash = NEW.system_prompt_hash) THEN
        RAISE EXCEPTION 'evalledger: % has no registered version with system prompt %',
                NEW.brain_under_test, NEW.system_prompt_hash
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'system_prompt_hash',
                  CONSTRAINT = 'brain_eval_log_prompt_registered',
                  HINT = 'register the brain version with evalledger brain add';
    END IF;
    -- The model and label too are a registered version's of this prompt: a run is of a version, and
    -- a label borrowed from another brain or model would file it under that one (issue 37, item 8).
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_version v
                    WHERE v.target_id = NEW.brain_under_test AND v.system_prompt_hash = NEW.system_prompt_hash
                      AND v.model_id = NEW.model_id
                      AND v.version_label IS NOT DISTINCT FROM NEW.system_prompt_version_label) THEN
        RAISE EXCEPTION 'evalledger: % has no registered version with system prompt %, model % and label %',
                NEW.brain_under_test, NEW.system_prompt_hash, NEW.model_id,
                coalesce(NEW.system_prompt_version_label, '(none)')
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'model_id',
                  CONSTRAINT = 'brain_eval_log_version_registered',
                  HINT = 'record the run with the model and label of the version it ran (evalledger brain list)';
    END IF;
    PERFORM 1 FROM evalledger.target t
     WHERE t.target_id IN (SELECT p.target_id FROM evalledger.brain_prompt p
                            WHERE p.system_prompt_hash = NEW.system_prompt_hash)
     ORDER BY t.target_id FOR SHARE;
    PERFORM 1 FROM evalledger.brain_prompt p WHERE p.system_prompt_hash = NEW.system_prompt_hash
     ORDER BY p.target_id FOR SHARE;
    -- The reviewer must exist before independence is asked: the refusal below would otherwise
    -- tell the runner who tunes a prompt, for any uuid it tries (it may not read the registry).
    IF NOT EXISTS (SELECT 1 FROM evalledger.reviewer r WHERE r.reviewer_user_id = NEW.reviewer_user_id) THEN
        RAISE EXCEPTION 'evalledger: no reviewer %', NEW.reviewer_user_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_fkey';
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.prompt_tuner t JOIN evalledger.brain_prompt p USING (target_id)
                WHERE t.user_id = NEW.reviewer_user_id AND p.system_prompt_hash = NEW.system_prompt_hash) THEN
        RAISE EXCEPTION 'evalledger: reviewer % is not independent of this run''s system prompt', NEW.reviewer_user_id
            USING ERRCODE = 'check_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_independent',
                  HINT = 'pick a reviewer who tunes no brain that owns this prompt';
    END IF;
    NEW.reviewer_independence_verified := true;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_log_10_admit BEFORE INSERT ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_admit_v2();
