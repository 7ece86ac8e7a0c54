-- Issue 37, item 8: what a reviewer was shown, a run's version and its completion time, at their
-- roots. A run completes at the database's clock when the completion takes its row
-- (complete_once_v1, every suite), and brain_eval_complete_v1 refuses a time its caller gives where
-- it used to take it: a run completed "two minutes after it started" was decided on scores and a
-- sign-off entered hours later. A reviewer's entry is recorded only under READ COMMITTED, whose
-- fresh snapshot sees a reveal another session of the reviewer committed: a session begun
-- REPEATABLE READ before it entered the drafts' numbers as blind. A run's model and label are those
-- of a registered version of its brain's prompt, as a harness run's already were. Functions
-- changed in place: no grant, owner or signature changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- complete_once_v1: the only UPDATE a run accepts is its completion: completed_at set once, from
-- NULL, with every other column as it was. The time is the database's clock when the completion
-- takes the run's row (after any wait for the rows locking it), whatever the UPDATE set: a caller's
-- time could date a decision before the scores and sign-off it was decided on (issue 37, item 8).
-- Every suite's run table uses it; its trigger arguments are how a message names a run ('run',
-- 'takes-quality run'), the run's key column and, optionally, a text[] of the columns the database
-- computes, a change to which is refused as a value the caller may not supply.
CREATE OR REPLACE FUNCTION evalledger.complete_once_v1() RETURNS trigger
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

-- brain_eval_complete_v1: the runner completes an open run it may read (the hot tier, as its
-- policy reads); whether it did. The run completes at the database's clock (complete_once_v1):
-- `completed`, kept for the signature, must be NULL, and a time given there is refused rather than
-- ignored, so a caller learns its time was not taken (issue 37, item 8). What completion checks
-- and decides is the triggers' (brain_eval_log_10_guard_update, brain_eval_log_20_decide). A
-- function and not an UPDATE grant: a role that may UPDATE a table may also take FOR UPDATE and FOR SHARE locks on
-- the rows it reads there, and a runner holding them on every open run stalled every reviewer's
-- score and sign-off, and every question row written to them (issue 17, class 7). SECURITY
-- DEFINER, so it asks caller_reads_v1 what the caller's policy would show: a cold run is no run.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_complete_v1(run_id uuid, completed timestamptz) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF completed IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is the database''s clock at completion, not the caller''s: pass NULL, not %',
                completed
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'completed_at';
    END IF;
    UPDATE evalledger.brain_eval_log l SET completed_at = clock_timestamp()
     WHERE l.eval_run_id = run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, NULL);
    RETURN FOUND;
END;
$$;

-- brain_eval_review_trail_v1: after a reviewer's UPDATE of a question row, one trail row per field
-- it changed: the value, the reviewer, the role the statement ran as, the login behind it, and
-- whether the judges' suggestions on the question had been shown first (blind review). Shown means
-- a reveal committed before the entry: only READ COMMITTED reads it with a snapshot taken now, so
-- an entry under an older snapshot is refused (a session begun REPEATABLE READ before a second
-- session of the same reviewer revealed and read the drafts entered them as blind: issue 37, item 8).
-- SECURITY DEFINER: the trail takes rows from this function alone (brain_eval_review_entry_admit_v1).
CREATE OR REPLACE FUNCTION evalledger.brain_eval_review_trail_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_read_committed_v2('a reviewer''s entry (whether the judges'' suggestions were shown)');
    INSERT INTO evalledger.brain_eval_review_entry
           (eval_run_id, question_id, field, value, reviewer_user_id, acting_role, entered_by, suggestions_shown,
            run_created_at)
    SELECT NEW.eval_run_id, NEW.question_id, f.field, f.value, l.reviewer_user_id, evalledger.caller_v1(),
           session_user, EXISTS (SELECT 1 FROM evalledger.brain_eval_suggestion_shown s
                                  WHERE s.eval_run_id = NEW.eval_run_id AND s.question_id = NEW.question_id),
           NEW.run_created_at
      FROM (VALUES
              (1, 'hallucinations_detected', to_jsonb(NEW.hallucinations_detected),
               NEW.hallucinations_detected IS DISTINCT FROM OLD.hallucinations_detected),
              (2, 'total_claims', to_jsonb(NEW.total_claims), NEW.total_claims IS DISTINCT FROM OLD.total_claims),
              (3, 'staleness_correctly_recognized', to_jsonb(NEW.staleness_correctly_recognized),
               NEW.staleness_correctly_recognized IS DISTINCT FROM OLD.staleness_correctly_recognized),
              (4, 'diagnosis_accuracy_score', to_jsonb(NEW.diagnosis_accuracy_score),
               NEW.diagnosis_accuracy_score IS DISTINCT FROM OLD.diagnosis_accuracy_score),
              (5, 'narrative_coherence_rating', to_jsonb(NEW.narrative_coherence_rating),
               NEW.narrative_coherence_rating IS DISTINCT FROM OLD.narrative_coherence_rating),
              (6, 'reviewer_comments', to_jsonb(NEW.reviewer_comments),
               NEW.reviewer_comments IS DISTINCT FROM OLD.reviewer_comments)) AS f(n, field, value, changed)
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = NEW.eval_run_id
     WHERE f.changed
     ORDER BY f.n;
    RETURN NULL;
END;
$$;

-- brain_eval_log_admit_v2: a new run starts in progress, with nothing the database computes or
-- the reviewer enters supplied by the caller, started neither in the future nor more than a day
-- (in UTC, by the statement's clock: utc_ago_v1) before it is recorded unless an import in the
-- same transaction says it is historical, under an activated rubric, over a loaded question
-- catalog, of a prompt, model and label its brain registered as one version, and with a reviewer
-- independent of every brain that owns that prompt (brain_prompt, read by key). A refusal for independence names neither the brain
-- nor who tunes it: the runner may not read the tuner registry.
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

