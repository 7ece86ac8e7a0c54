-- Issue 37, item 3: the database's clock for every time a role does not own. The owner set
-- reviewer.created_at and target.created_at to 2001 or 2099 (INSERT on the registries carries every
-- column): both are now stamped on insert by retention_clock_v1, as every aging table's clock is.
-- The runner set eval_capture_failures.occurred_at to 2001, 2099 or 'infinity' (which psycopg
-- cannot read back, and which doctor counted among the last 24 hours for ever): the time is the
-- runner's to give (a failure spooled while the database was down is written once it is back), so
-- it is bounded, not after the database's clock and not before the hot tier. Rows stored before
-- keep their times (the tables are append-only); doctor's count stops at the statement's clock. A
-- time a role gives that the project's readers cannot read back (readable_time_v1: psycopg reads
-- years 1 to 9999, not 'infinity') is refused: a hold's range, and a run's started_at or an
-- analysis's produced_at dated by an import ('-infinity' was admitted). No grant changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- readable_time_v1: whether a time a role gives can be read back by the project's own readers:
-- psycopg reads a timestamptz as Python's datetime, years 1 to 9999, so 'infinity', '-infinity'
-- and the years beyond (which PostgreSQL stores) broke every read of the row (issue 37, item 8).
-- A day's margin at each end, for the reader's time zone.
CREATE FUNCTION evalledger.readable_time_v1(t timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT t >= '0001-01-02 00:00:00+00'::timestamptz AND t <= '9999-12-30 00:00:00+00'::timestamptz
$$;

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
CREATE OR REPLACE FUNCTION evalledger.retention_clock_v1() RETURNS trigger
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

-- brain_eval_log_admit_v2: a new run starts in progress, with nothing the database computes or the
-- reviewer enters supplied by the caller, started neither in the future nor more than a day (in
-- UTC, by the statement's clock: utc_ago_v1) before it is recorded unless an import in the same
-- transaction says it is historical (and at a time readable_time_v1 admits), under an activated
-- rubric, over a loaded question catalog, of a prompt, model and label its brain registered as one
-- version, and with a reviewer independent of every brain that owns that prompt (brain_prompt, read
-- by key). A refusal for independence names neither the brain nor who tunes it: the runner may not
-- read the tuner registry.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_log_admit_v2() RETURNS trigger
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

-- brain_analysis_log_admit_v1: an analysis (production traffic, or a brain's eval answer) is
-- produced neither in the future nor more than a day (in UTC, by the statement's clock) before it
-- is recorded, unless an audited import (brain_eval_import) was made in the same transaction: a
-- caller's produced_at never answers a run it predates, nor stays "latest" from 2099. Its brain
-- then owns its prompt (brain_prompt_claim_v1), for independence, levers and holds by key. Its time
-- is one the project's readers can read back (readable_time_v1).
CREATE OR REPLACE FUNCTION evalledger.brain_analysis_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.produced_at := coalesce(NEW.produced_at, now());
    IF NEW.produced_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: produced_at % is in the future', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at',
                  CONSTRAINT = 'brain_analysis_log_produced_not_in_future';
    END IF;
    -- An import may date an analysis years back, but not where no reader can read it (issue 37, item 8).
    IF NOT evalledger.readable_time_v1(NEW.produced_at) THEN
        RAISE EXCEPTION 'evalledger: produced_at % is not a time between the years 1 and 9999', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at', CONSTRAINT = 'brain_analysis_log_produced_readable';
    END IF;
    IF NEW.produced_at < evalledger.utc_ago_v1(evalledger.backdating_window_v1()) AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i WHERE i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: produced_at % is more than a day before the analysis is recorded', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at',
                  CONSTRAINT = 'brain_analysis_log_produced_recently',
                  HINT = 'historical analyses are recorded through an import made in the same transaction '
                         '(evalledger brain-eval record --historical REASON)';
    END IF;
    -- An unknown brain or a malformed hash is left to the row's own foreign key and CHECK.
    IF NEW.system_prompt_hash ~ '^[0-9a-f]{64}$'
       AND EXISTS (SELECT 1 FROM evalledger.target t WHERE t.target_id = NEW.brain) THEN
        PERFORM evalledger.brain_prompt_claim_v1(NEW.brain, NEW.system_prompt_hash, 'analysis');
    END IF;
    RETURN NEW;
END;
$$;

-- The registries' recording time is the database's too, though they never age.
CREATE TRIGGER reviewer_20_clock BEFORE INSERT ON reviewer
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
ALTER TABLE reviewer ENABLE ALWAYS TRIGGER reviewer_20_clock;

CREATE TRIGGER target_20_clock BEFORE INSERT ON target
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
ALTER TABLE target ENABLE ALWAYS TRIGGER target_20_clock;
