-- No abandoned takes-quality or work-quality run without a trace (issue 37, item 2, as 0110 did it for
-- brain-eval). A second open run of the same subject was admitted while the first was open (another
-- seed of the same sample scope, another --run-id of the same bot), and a run never completed was never
-- decided and counted in no verdict or regression: an operator could start runs until one looked
-- good and leave the others open. Now one run of a subject is open at a time: a takes-quality run of
-- a brain, judges' prompt, sample scope and judges (eval_takes_quality_runs_one_open_idx), a
-- work-quality run of a target and judges (eval_work_quality_snapshots_one_open_idx; recorded
-- replies never occupy a live run's place), and a trigger names the open run. An open
-- run past its rubric's deadline (open_run_days, 14 by default: brain_eval_run_deadline_v1, the one
-- home of the rule, which every suite's rubric may now set) is closed as abandoned by the next run
-- of its subject or its own completion, and reads so before that (takes_quality_run_state_v1,
-- work_quality_run_state_v1, the takes-quality trend and the work-quality history): a takes-quality
-- run decided fail, a work-quality one a regression, each with a message that begins "Abandoned:"
-- (brain_eval_abandoned_v1's wording). The runner cancels with a reason (eval_run_cancel_v1). How a
-- run was closed is one append-only, journalled table for both suites (eval_run_closure) that the
-- receipt (takes_quality_receipt_v4), the decision triggers and the ledger's recompute read, aged and
-- purged with its run. An abandoned or cancelled snapshot is no later run's baseline. Every reader
-- counts an abandoned run as not passed: the takes-quality trend (fail), the work-quality history (a
-- regression), takes-quality's regress (a regression whatever the scores), and the brain-eval trends,
-- which 0110 left to completed runs (fail). The receipt of the run a trigger decides asks no reader's
-- tier (takes_quality_receipt_v3), so a run open past the hot tier is closed too.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- How a takes-quality run or a work-quality snapshot that was not completed whole was closed
-- (issue 37, item 2), as brain_eval_run_closure says it of a brain-eval run: abandoned (open past
-- its rubric's deadline, closed by the database) or cancelled (by the runner, with a reason). One
-- table for both suites, a row naming the one run it closes (takes_quality_run_id or snapshot_id,
-- as suite says). A stored input, so the ledger's recompute re-derives what the closure decided
-- (takes_quality_receipt_v4, ledger_recompute_work_quality_v2 read it). Only the closing function
-- (eval_run_close_v1) writes it (no role holds INSERT), and every column is its: who closed it and
-- when are the database's.
CREATE TABLE eval_run_closure (
    closure_id           bigint      GENERATED ALWAYS AS IDENTITY,
    suite                text        NOT NULL,
    takes_quality_run_id bigint,
    snapshot_id          bigint,
    closure              text        NOT NULL,
    reason               text        NOT NULL,
    closed_by            name        NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    run_created_at       timestamptz NOT NULL,
    CONSTRAINT eval_run_closure_pkey PRIMARY KEY (closure_id),
    CONSTRAINT eval_run_closure_takes_quality_key UNIQUE (takes_quality_run_id),
    CONSTRAINT eval_run_closure_snapshot_key UNIQUE (snapshot_id),
    CONSTRAINT eval_run_closure_takes_quality_fkey FOREIGN KEY (takes_quality_run_id)
        REFERENCES eval_takes_quality_runs (id),
    CONSTRAINT eval_run_closure_snapshot_fkey FOREIGN KEY (snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
    CONSTRAINT eval_run_closure_suite_names_its_run CHECK (
        (suite = 'takes-quality' AND takes_quality_run_id IS NOT NULL AND snapshot_id IS NULL)
        OR (suite = 'work-quality' AND snapshot_id IS NOT NULL AND takes_quality_run_id IS NULL)),
    CONSTRAINT eval_run_closure_kind CHECK (closure IN ('abandoned', 'cancelled')),
    CONSTRAINT eval_run_closure_reason_given CHECK (reason ~ '\S')
);

-- The same readers as the runs' own rows, by the same tier clock (the run's).
CREATE POLICY eval_run_closure_runner ON eval_run_closure FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_run_closure_revops ON eval_run_closure FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_run_closure_auditor ON eval_run_closure FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_run_closure TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['eval_run_closure:UPDATE OR DELETE:refuse_change_v3']);

-- eval_run_close_v1: close an open takes-quality run or work-quality snapshot without completing it
-- whole, as brain_eval_close_v1 closes a brain-eval run: a cancellation records its closure (with
-- the reason and the login that closed it) first; then the run completes at the database's clock,
-- and its decision trigger (takes_quality_run_decide_v2, work_quality_snapshot_decide_v3) decides it
-- as closed, recording an abandonment itself for a run past its deadline. Whether it closed the run:
-- false when it was complete or closed already. The row is locked first, so a completion or a
-- closure racing with this one waits and then finds it closed. The closing is the database's (the
-- one-open triggers, eval_run_cancel_v1): no role runs it itself.
CREATE FUNCTION evalledger.eval_run_close_v1(run_suite text, run_key bigint, cancel_reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    recorded timestamptz;
BEGIN
    IF run_suite = 'takes-quality' THEN
        SELECT r.created_at INTO recorded FROM evalledger.eval_takes_quality_runs r
         WHERE r.id = run_key AND r.completed_at IS NULL FOR UPDATE;
    ELSIF run_suite = 'work-quality' THEN
        SELECT s.created_at INTO recorded FROM evalledger.eval_work_quality_snapshots s
         WHERE s.snapshot_id = run_key AND s.completed_at IS NULL FOR UPDATE;
    ELSE
        RAISE EXCEPTION 'evalledger: no suite % closes runs here', run_suite USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recorded IS NULL THEN
        RETURN false;
    END IF;
    IF cancel_reason IS NOT NULL THEN
        INSERT INTO evalledger.eval_run_closure
               (suite, takes_quality_run_id, snapshot_id, closure, reason, closed_by, run_created_at)
        VALUES (run_suite, CASE WHEN run_suite = 'takes-quality' THEN run_key END,
                CASE WHEN run_suite = 'work-quality' THEN run_key END,
                'cancelled', cancel_reason, evalledger.caller_v1(), recorded);
    END IF;
    IF run_suite = 'takes-quality' THEN
        UPDATE evalledger.eval_takes_quality_runs r SET completed_at = now() WHERE r.id = run_key;
    ELSE
        UPDATE evalledger.eval_work_quality_snapshots s SET completed_at = now() WHERE s.snapshot_id = run_key;
    END IF;
    RETURN true;
END;
$$;

-- eval_run_cancel_v1: the runner cancels an open takes-quality run (run_suite 'takes-quality', its
-- id) or work-quality snapshot ('work-quality', its snapshot_id) that it may read, with a reason: a
-- recorded act (eval_run_closure), and the run is decided as an abandoned one is, "Abandoned:
-- cancelled by <login>: <reason>" (brain_eval_cancel_v1's rule, for the other suites). Whether it
-- cancelled it; a run complete or closed already, or one the caller may not read (caller_reads_v1:
-- a cold run is no run), is not cancelled.
CREATE FUNCTION evalledger.eval_run_cancel_v1(run_suite text, run_key bigint, reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF reason IS NULL OR reason !~ '\S' THEN
        RAISE EXCEPTION 'evalledger: a cancellation needs a reason'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_run_closure_reason_given';
    END IF;
    IF run_suite = 'takes-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE r.id = run_key AND evalledger.caller_reads_v1(r.created_at, NULL))
       OR run_suite = 'work-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_work_quality_snapshots s
             WHERE s.snapshot_id = run_key AND evalledger.caller_reads_v1(s.created_at, NULL))
       OR run_suite IS DISTINCT FROM 'takes-quality' AND run_suite IS DISTINCT FROM 'work-quality' THEN
        RETURN false;
    END IF;
    RETURN evalledger.eval_run_close_v1(run_suite, run_key, reason);
END;
$$;

-- The runner's, as completion is.
GRANT EXECUTE ON FUNCTION eval_run_cancel_v1(text, bigint, text) TO evalledger_runner;

-- takes_quality_receipt_v4: the receipt of a run as takes_quality_receipt_v3 builds it, and for a run
-- closed without completing whole (eval_run_closure: abandoned past its rubric's deadline, or
-- cancelled by the runner; issue 37, item 2) the suite's failing decision: verdict fail, a
-- verdictMessage that begins "Abandoned:" (brain_eval_abandoned_v1, the one wording of every suite),
-- final, and the additive field closure (abandoned or cancelled) that readers filter on. What the
-- judges had answered and cost before it was closed stays in it; a run closed before any judge
-- answered has no scores, no cycles and costs 0. The function takes_quality_run_decide_v2 writes a
-- receipt with and the ledger's recompute re-derives it with (ledger_recompute_takes_quality_v2). A
-- caller reads the receipt of a run it may read (caller_reads_v1), a trigger any (as v3).
CREATE FUNCTION evalledger.takes_quality_receipt_v4(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    closed evalledger.eval_run_closure;
    receipt jsonb;
BEGIN
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = p_run_id;
    IF closed.closure_id IS NULL THEN
        RETURN evalledger.takes_quality_receipt_v3(p_run_id);
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id) THEN
        receipt := evalledger.takes_quality_receipt_v3(p_run_id);
    ELSE
        SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
         WHERE r.id = p_run_id AND (evalledger.caller_reads_v1(r.created_at, NULL) OR pg_trigger_depth() > 0);
        IF NOT FOUND THEN
            RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
        END IF;
        SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
        receipt := jsonb_build_object(
            'schema_version', 1,
            'ts', to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'rubric_version', rub.version,
            'rubric_sha8', run.rubric_sha8,
            'corpus', jsonb_build_object('source', run.corpus_source, 'n_takes', run.n_takes,
                                         'slug_prefix', run.slug_prefix, 'corpus_sha8', run.corpus_sha8)
                      || CASE WHEN run.corpus_path IS NULL THEN '{}'::jsonb
                              ELSE jsonb_build_object('path', run.corpus_path) END,
            'prompt_sha8', run.prompt_sha8,
            'models_sha8', run.models_sha8,
            'models', to_jsonb(run.models),
            'cycles_run', 0,
            'successes_per_cycle', '[]'::jsonb,
            'scores', '{}'::jsonb,
            'overall_score', NULL,
            'cost_usd', 0,
            'improvements', '[]'::jsonb,
            'errors', '[]'::jsonb,
            'run_id', run.id,
            'seed', run.seed,
            'judges', coalesce(run.judges, 'live'),
            'rerun', coalesce(run.rerun, 0));
    END IF;
    RETURN receipt || jsonb_build_object(
        'verdict', 'fail',
        'verdictMessage', evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by),
        'final', true,
        'closure', closed.closure);
END;
$$;

-- Readers read a run's receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v4(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers).
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v4(bigint) TO evalledger_owner;

-- The receipt of the run a trigger decides, whatever its age: the database closes a cold open run too.
-- takes_quality_receipt_v3: the seed-000 receipt (schema_version 1) of a run, built from the run
-- row and each judge's current row per cycle (takes_quality_current_v1): the last cycle decides.
-- Over takes_quality_receipt_v1 it tells the story of calls that were retried: `errors` lists every
-- row that did not contribute, a retried one marked "retried", and every call that started and
-- got no reply; `cost_usd` is exact (never rounded) and counts what each call cost plus, for a
-- call that started and was never answered, the runner's estimate of it. A run whose current rows
-- still hold a failure outside the judges' content (a provider error, a call the budget did not
-- allow, a call with no reply) is not final: the receipt says so (`final`: false, and the message
-- says how to retry), and takes_quality_run_decide_v2 refuses to complete it. Optional fields
-- (additive at schema_version 1): run_id, seed, judges (live or recorded), final, rerun. Over
-- takes_quality_receipt_v2 (the caller-checked v1) it asks caller_reads_v1 the same way: a run the
-- caller may not read reads as one that does not exist. Inside a trigger (the completion's decision,
-- which builds the receipt of the run it decides and returns it to no one) it asks nothing: the
-- database closes an open run past its deadline whatever its age (issue 37, item 2).
CREATE OR REPLACE FUNCTION evalledger.takes_quality_receipt_v3(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    last_cycle int;
    decided jsonb;
    successes jsonb;
    errors jsonb;
    cost numeric;
    skipped int;
    pending int;
    recorded int;
    total int;
    message text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
     WHERE r.id = p_run_id AND (evalledger.caller_reads_v1(r.created_at, NULL) OR pg_trigger_depth() > 0);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT max(v.cycle), count(*) FILTER (WHERE NOT v.call_started),
           count(*) FILTER (WHERE v.recorded)
      INTO last_cycle, total, recorded
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id;
    IF last_cycle IS NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % has no verdicts', p_run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    decided := evalledger.takes_quality_cycle_v1(p_run_id, last_cycle);
    SELECT jsonb_agg(c.n ORDER BY c.cycle) INTO successes FROM (
        SELECT g.cycle, count(v.*) FILTER (WHERE v.contributes) AS n
          FROM generate_series(1, last_cycle) g(cycle)
          LEFT JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = p_run_id AND v.cycle = g.cycle
         GROUP BY g.cycle) c;
    SELECT count(*) FILTER (WHERE c.error_kind = 'budget_exhausted' AND NOT c.call_started),
           count(*) FILTER (WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted'))
      INTO skipped, pending
      FROM evalledger.takes_quality_current_v1(p_run_id) c;

    WITH calls AS (
        SELECT v.*, lead(v.retry_no) OVER w IS NULL AS current, coalesce(lead(v.call_started) OVER w, false) AS restarted
          FROM evalledger.eval_takes_quality_judge_verdicts v
         WHERE v.run_id = p_run_id
        WINDOW w AS (PARTITION BY v.cycle, v.model ORDER BY v.retry_no)
    ), told AS (
        SELECT c.cycle, array_position(run.models, c.model) AS pos, c.retry_no,
               -- A started call whose answer follows is not an error: the answer says what happened.
               CASE WHEN c.call_started AND c.current
                    THEN format('cycle %s %s: no reply: the call started at %s and no answer was recorded '
                                '(estimated $%s counted)', c.cycle, c.model,
                                to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN c.call_started AND c.restarted
                    THEN format('cycle %s %s: no reply: the runner stopped while the call was in flight '
                                '(estimated $%s counted); retried', c.cycle, c.model,
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN NOT c.call_started AND NOT c.contributes
                    THEN format('cycle %s %s: %s%s%s', c.cycle, c.model, c.error_kind,
                                CASE WHEN c.error_message IS NULL THEN '' ELSE ': ' || c.error_message END,
                                CASE WHEN c.current THEN '' ELSE '; retried' END) END AS line,
               CASE WHEN c.call_started AND (c.current OR c.restarted) THEN c.estimated_cost_usd ELSE 0 END
                   + c.cost_usd AS cost
          FROM calls c
    )
    SELECT coalesce(jsonb_agg(t.line ORDER BY t.cycle, t.pos, t.retry_no) FILTER (WHERE t.line IS NOT NULL), '[]'),
           trim_scale(coalesce(sum(t.cost), 0))
      INTO errors, cost
      FROM told t;

    message := decided ->> 'message';
    IF last_cycle > 1 THEN
        message := message || format('; decided in cycle %s', last_cycle);
    END IF;
    IF skipped > 0 THEN
        message := message || format('; %s call(s) not made: the budget cap would have been passed', skipped);
    END IF;
    IF pending > 0 THEN
        message := message || format('; not final: %s call(s) failed outside the judges'' content, '
                                     'and running the same eval again retries them', pending);
    END IF;

    RETURN jsonb_build_object(
        'schema_version', 1,
        'ts', to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'rubric_version', rub.version,
        'rubric_sha8', run.rubric_sha8,
        'corpus', jsonb_build_object('source', run.corpus_source, 'n_takes', run.n_takes,
                                     'slug_prefix', run.slug_prefix, 'corpus_sha8', run.corpus_sha8)
                  || CASE WHEN run.corpus_path IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object('path', run.corpus_path) END,
        'prompt_sha8', run.prompt_sha8,
        'models_sha8', run.models_sha8,
        'models', to_jsonb(run.models),
        'cycles_run', last_cycle,
        'successes_per_cycle', successes,
        'verdict', decided ->> 'verdict',
        'scores', decided -> 'scores',
        'overall_score', decided -> 'overall_score',
        'cost_usd', cost,
        'improvements', decided -> 'improvements',
        'errors', errors,
        'verdictMessage', message,
        -- Optional fields (additive at schema_version 1).
        'run_id', run.id,
        'seed', run.seed,
        'judges', coalesce(run.judges, CASE WHEN recorded = 0 THEN 'live' WHEN recorded = total THEN 'recorded'
                                            ELSE 'mixed' END),
        'final', pending = 0,
        'rerun', coalesce(run.rerun, 0));
END;
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v3(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v3(bigint) TO evalledger_owner;

-- The decisions: a closed run is decided by its closure, and a completion past the deadline records
-- the abandonment (the trigger functions replaced in place: same triggers).
-- takes_quality_run_decide_v2: at completion (which complete_once_v1 admits first), every cycle
-- must hold a row from every panel model, and every judge's current row must be an answer: a
-- run whose calls failed outside the judges' content (a provider error, a call the budget did not
-- allow, a call started with no reply) is not a final verdict, so it stays open and the same eval
-- run again retries exactly those calls. The database then writes what it decided: cycles_run,
-- verdict, overall_score, cost_usd and the whole receipt (takes_quality_receipt_v4). A run past its
-- rubric's deadline (brain_eval_run_deadline_v1, open_run_days from its created_at) is closed as
-- abandoned instead (its closure recorded here), and a closed run (eval_run_closure: abandoned or
-- cancelled) is decided fail, "Abandoned: ...", whole or not (issue 37, item 2).
CREATE OR REPLACE FUNCTION evalledger.takes_quality_run_decide_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    pending text;
    receipt jsonb;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('takes-quality run');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c
                                          WHERE c.takes_quality_run_id = NEW.id) THEN
        INSERT INTO evalledger.eval_run_closure
               (suite, takes_quality_run_id, closure, reason, closed_by, run_created_at)
        VALUES ('takes-quality', NEW.id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline),
                evalledger.caller_v1(), NEW.created_at);
    END IF;
    -- A closed run is decided as closed, whole or not.
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = NEW.id) THEN
        SELECT format('cycle %s lacks %s', g.cycle, string_agg(m, ', ' ORDER BY p)) INTO gap
          FROM generate_series(1, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = NEW.id)) g(cycle)
          CROSS JOIN unnest(NEW.models) WITH ORDINALITY u(m, p)
         WHERE NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v
                            WHERE v.run_id = NEW.id AND v.cycle = g.cycle AND v.model = u.m)
         GROUP BY g.cycle ORDER BY g.cycle LIMIT 1;
        IF gap IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not whole: %', NEW.id, gap
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
        END IF;
        SELECT string_agg(format('cycle %s %s (%s)', c.cycle, c.model,
                                 CASE WHEN c.call_started THEN 'started, no reply' ELSE c.error_kind END),
                          ', ' ORDER BY c.cycle, array_position(NEW.models, c.model))
          INTO pending
          FROM evalledger.takes_quality_current_v1(NEW.id) c
         WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
        IF pending IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not final: % failed outside the judges'' content',
                    NEW.id, pending
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_is_final',
                      HINT = 'running the same eval again retries exactly those calls';
        END IF;
    END IF;
    receipt := evalledger.takes_quality_receipt_v4(NEW.id);
    NEW.cycles_run := (receipt ->> 'cycles_run')::int;
    NEW.verdict := receipt ->> 'verdict';
    NEW.overall_score := (receipt ->> 'overall_score')::numeric;
    NEW.cost_usd := (receipt ->> 'cost_usd')::numeric;
    NEW.receipt_json := receipt;
    RETURN NEW;
END;
$$;

-- work_quality_snapshot_decide_v3: a run's completion (complete_once_v1 has already refused any
-- other UPDATE), once every panel model's current row (work_quality_current_v1) is an answer or a
-- failure: a call that started with no reply recorded is no verdict yet. The database computes
-- the aggregate: mean_scores per dimension over the contributing judges; disagreement (max - min)
-- per dimension when at least two contributed (one judge has no spread to show); the note naming
-- each judge skipped in its current row (a call retried is not skipped), and each contributing
-- judge of the assessed run's family, after a label naming the judges whose replies were recorded
-- rather than live; the comparison with the previous snapshot (work_quality_compare_v1); what the
-- judges cost, exactly, a call that started and was never answered counting the runner's estimate
-- of it; and the whole document. With no contributing judge there is nothing to aggregate:
-- completion is refused and the run stays open, and the same --run-id judges again. Verdicts lock
-- their snapshot FOR SHARE, so this waits for them; it then reads under READ COMMITTED only
-- (require_fresh_snapshot_v1), whose fresh snapshot sees what it waited for. Over v2: current rows.
-- A snapshot past its rubric's deadline (brain_eval_run_deadline_v1, open_run_days from its
-- created_at) is closed as abandoned instead (its closure recorded here), and a closed one
-- (eval_run_closure: abandoned or cancelled; issue 37, item 2) is completed whole or not, with what
-- its judges had answered, and its note is the abandonment's rationale ("Abandoned: ..."): the
-- suite's failing decision, a regression (work_quality_history_rows_v1).
CREATE OR REPLACE FUNCTION evalledger.work_quality_snapshot_decide_v3() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    dims text[];
    contributing integer;
    prev_mean jsonb;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
    closed evalledger.eval_run_closure;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('work-quality snapshot');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c
                                          WHERE c.snapshot_id = NEW.snapshot_id) THEN
        INSERT INTO evalledger.eval_run_closure (suite, snapshot_id, closure, reason, closed_by, run_created_at)
        VALUES ('work-quality', NEW.snapshot_id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline),
                evalledger.caller_v1(), NEW.created_at);
    END IF;
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.snapshot_id = NEW.snapshot_id;
    SELECT string_agg(m, ', ' ORDER BY p) INTO gap
      FROM unnest(NEW.models) WITH ORDINALITY u(m, p)
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.work_quality_current_v1(NEW.snapshot_id) v
                        WHERE v.model = u.m AND NOT v.call_started);
    IF gap IS NOT NULL AND closed.closure_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % lacks a verdict from %', NEW.snapshot_id, gap
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_verdicts';
    END IF;
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes;
    IF contributing = 0 AND closed.closure_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no judge produced a verdict for work-quality snapshot %', NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_a_verdict';
    END IF;

    dims := ARRAY(SELECT d ->> 'key' FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                   WHERE r.rubric_id = NEW.rubric_id ORDER BY n);
    SELECT jsonb_object_agg(d, a.mean), CASE WHEN contributing >= 2 THEN jsonb_object_agg(d, a.spread) END
      INTO NEW.mean_scores, NEW.disagreement
      FROM unnest(dims) d
     CROSS JOIN LATERAL (
            SELECT trim_scale(avg((v.scores ->> d)::numeric)) AS mean,
                   trim_scale(max((v.scores ->> d)::numeric) - min((v.scores ->> d)::numeric)) AS spread
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes) a;
    SELECT coalesce(string_agg(line, '; ' ORDER BY p, k), '') INTO NEW.note
      FROM (SELECT array_position(NEW.models, v.model) AS p, 1 AS k,
                   format('judge %s skipped: %s%s', v.model, v.error_kind, coalesce(': ' || v.error_message, '')) AS line
              FROM evalledger.work_quality_current_v1(NEW.snapshot_id) v
             WHERE NOT v.contributes
            UNION ALL
            SELECT array_position(NEW.models, v.model), 2,
                   format('judge %s shares the assessed run''s family (%s)', v.model, v.family)
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes AND v.same_family
            UNION ALL
            SELECT 0, 0, 'recorded replies shipped with evalledger, not live calls: '
                         || string_agg(v.model, ', ' ORDER BY array_position(NEW.models, v.model))
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes AND v.recorded
            HAVING count(*) > 0) notes;
    IF NEW.prev_snapshot_id IS NOT NULL THEN
        SELECT s.mean_scores INTO prev_mean FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.prev_snapshot_id;
        NEW.comparison := evalledger.work_quality_compare_v1(prev_mean, NEW.mean_scores, NEW.prev_run_id);
    END IF;
    -- A started call is settled by the answer that follows it; one followed by another start (its
    -- runner stopped) counts its estimate.
    SELECT trim_scale(coalesce(sum(c.cost_usd + CASE WHEN c.call_started AND c.restarted THEN c.estimated_cost_usd
                                                      ELSE 0 END), 0))
      INTO NEW.judges_cost_usd
      FROM (SELECT v.cost_usd, v.call_started, v.estimated_cost_usd,
                   coalesce(lead(v.call_started) OVER (PARTITION BY v.model ORDER BY v.retry_no), false) AS restarted
              FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = NEW.snapshot_id) c;
    IF closed.closure_id IS NOT NULL THEN
        -- No judge answered a dimension: no mean (closed before any answer, an empty object).
        NEW.mean_scores := jsonb_strip_nulls(NEW.mean_scores);
        NEW.note := evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by);
    END IF;
    NEW.snapshot_json := evalledger.work_quality_document_v1(NEW);
    RETURN NEW;
END;
$$;

-- The recompute re-derives what a closure decided.
-- ledger_recompute_takes_quality_v2: a takes-quality run's receipt, re-derived from its verdict rows
-- by the function its completion trigger (takes_quality_run_decide_v2) writes it
-- with (takes_quality_receipt_v4: each judge's current row, lost calls' estimates, retried failures;
-- a run closed without completing whole decided by its closure);
-- the run's cycles_run, verdict, overall_score and cost_usd are read from it as the trigger reads
-- them. The one place the ledger's recompute names takes-quality's decision.
CREATE OR REPLACE FUNCTION evalledger.ledger_recompute_takes_quality_v2(run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.takes_quality_receipt_v4(run_id)
$$;

-- ledger_recompute_work_quality_v2: a completed work-quality run's computed columns, re-derived
-- from its verdict rows: the means and spreads over the contributing judges, the note, what the
-- judges cost, the comparison with the previous snapshot (work_quality_compare_v1) and the document
-- (work_quality_document_v1), as work_quality_snapshot_decide_v3 computes them at completion (a skipped
-- judge is noted by its current row, and a call its runner lost counts its estimate). The
-- comparison and the document are the trigger's own functions; the means, spreads, note and cost
-- the trigger computes inline, so they are restated here, statement for statement, and the tests
-- hold the two equal on every completed snapshot until the trigger calls a shared function. The
-- one place the ledger's recompute names work-quality's decision. A closed snapshot's note is its
-- closure's rationale (eval_run_closure; issue 37, item 2), as the trigger writes it.
CREATE OR REPLACE FUNCTION evalledger.ledger_recompute_work_quality_v2(snap evalledger.eval_work_quality_snapshots) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s evalledger.eval_work_quality_snapshots := snap;
    dims text[];
    contributing integer;
    prev_mean jsonb;
BEGIN
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = s.snapshot_id AND v.contributes;
    dims := ARRAY(SELECT d ->> 'key' FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                   WHERE r.rubric_id = s.rubric_id ORDER BY n);
    SELECT jsonb_object_agg(d, a.mean), CASE WHEN contributing >= 2 THEN jsonb_object_agg(d, a.spread) END
      INTO s.mean_scores, s.disagreement
      FROM unnest(dims) d
     CROSS JOIN LATERAL (
            SELECT trim_scale(avg((v.scores ->> d)::numeric)) AS mean,
                   trim_scale(max((v.scores ->> d)::numeric) - min((v.scores ->> d)::numeric)) AS spread
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes) a;
    SELECT coalesce(string_agg(line, '; ' ORDER BY p, k), '') INTO s.note
      FROM (SELECT array_position(s.models, v.model) AS p, 1 AS k,
                   format('judge %s skipped: %s%s', v.model, v.error_kind, coalesce(': ' || v.error_message, '')) AS line
              FROM evalledger.work_quality_current_v1(s.snapshot_id) v
             WHERE NOT v.contributes
            UNION ALL
            SELECT array_position(s.models, v.model), 2,
                   format('judge %s shares the assessed run''s family (%s)', v.model, v.family)
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.same_family
            UNION ALL
            SELECT 0, 0, 'recorded replies shipped with evalledger, not live calls: '
                         || string_agg(v.model, ', ' ORDER BY array_position(s.models, v.model))
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.recorded
            HAVING count(*) > 0) notes;
    s.comparison := NULL;
    IF s.prev_snapshot_id IS NOT NULL THEN
        SELECT p.mean_scores INTO prev_mean FROM evalledger.eval_work_quality_snapshots p WHERE p.snapshot_id = s.prev_snapshot_id;
        s.comparison := evalledger.work_quality_compare_v1(prev_mean, s.mean_scores, s.prev_run_id);
    END IF;
    SELECT trim_scale(coalesce(sum(c.cost_usd + CASE WHEN c.call_started AND c.restarted THEN c.estimated_cost_usd
                                                      ELSE 0 END), 0))
      INTO s.judges_cost_usd
      FROM (SELECT v.cost_usd, v.call_started, v.estimated_cost_usd,
                   coalesce(lead(v.call_started) OVER (PARTITION BY v.model ORDER BY v.retry_no), false) AS restarted
              FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = s.snapshot_id) c;
    IF EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id) THEN
        s.mean_scores := jsonb_strip_nulls(s.mean_scores);
        SELECT evalledger.brain_eval_abandoned_v1(c.closure, c.reason, c.closed_by) INTO s.note
          FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id;
    END IF;
    s.snapshot_json := evalledger.work_quality_document_v1(s);
    RETURN jsonb_build_object('mean_scores', s.mean_scores, 'disagreement', s.disagreement, 'note', s.note,
                              'comparison', s.comparison, 'judges_cost_usd', s.judges_cost_usd,
                              'snapshot_json', s.snapshot_json);
END;
$$;

-- A closed snapshot is no baseline.
-- work_quality_snapshot_identity_v1: a snapshot's identity is its target, its run id and how it
-- was judged (live or recorded), so recorded replies never occupy a live run's id. After
-- work_quality_snapshot_admit_v2: a run's previous snapshot is the target's latest completed one
-- judged the same way (a live run is never compared with recorded replies, nor shown them); an
-- imported file was judged live unless its note says its replies were the recorded ones. A
-- snapshot closed without completing whole (eval_run_closure: abandoned or cancelled; issue 37,
-- item 2) is no baseline: a run compares with the last one its judges completed.
CREATE OR REPLACE FUNCTION evalledger.work_quality_snapshot_identity_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    prev evalledger.eval_work_quality_snapshots;
BEGIN
    IF NEW.origin = 'import' THEN
        NEW.judges := CASE WHEN NEW.note LIKE 'recorded replies shipped with evalledger%' THEN 'recorded' ELSE 'live' END;
        RETURN NEW;
    END IF;
    SELECT * INTO prev FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.completed_at IS NOT NULL
       AND coalesce(s.judges, CASE WHEN s.note LIKE 'recorded replies shipped with evalledger%' THEN 'recorded'
                                   ELSE 'live' END) = NEW.judges
       AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id)
     ORDER BY s.at DESC, s.snapshot_id DESC LIMIT 1;
    NEW.prev_snapshot_id := prev.snapshot_id;
    NEW.prev_run_id := prev.run_id;
    RETURN NEW;
END;
$$;

-- Every suite's rubric may set open_run_days.
-- rubric_check_v2: what is wrong with a rubric definition (NULL when nothing): the fields its
-- suite's decision code reads are present and typed, and seed 002's hard criteria (hallucination
-- rate <= 2%, staleness recognition = 100%, lever mapping = 100% for AGT-902) are never loosened,
-- and a missed hard criterion decides fail; a judged suite (takes-quality, work-quality) has a
-- numeric scale its judges' scores must keep to; takes-quality's panel policy is never below seed
-- 000's three frontier models, nor single-family (the design's cross-family panel). Policy is
-- validated when it is written, and again when a run is admitted under it (rubric_admitted_v2).
CREATE OR REPLACE FUNCTION evalledger.rubric_check_v2(suite text, definition jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    item jsonb;
    hard jsonb;
    field text;
    problem text;
BEGIN
    IF definition ->> 'suite' IS DISTINCT FROM suite THEN
        RETURN format('definition.suite is %s, not %s', coalesce(definition ->> 'suite', 'missing'), suite);
    END IF;
    IF jsonb_typeof(definition -> 'dimensions') IS DISTINCT FROM 'array'
       OR jsonb_array_length(definition -> 'dimensions') = 0 THEN
        RETURN 'dimensions must be a non-empty array';
    END IF;
    SELECT format('dimensions[%s].key must be a non-empty string', n - 1) INTO problem
      FROM jsonb_array_elements(definition -> 'dimensions') WITH ORDINALITY x(d, n)
     WHERE jsonb_typeof(d -> 'key') IS DISTINCT FROM 'string' OR d ->> 'key' = '' ORDER BY n LIMIT 1;
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    -- The deadline of an open run of every suite (brain_eval_run_deadline_v1; 14 days when absent).
    IF definition ? 'open_run_days' AND (jsonb_typeof(definition -> 'open_run_days') IS DISTINCT FROM 'number'
       OR (definition ->> 'open_run_days')::numeric NOT BETWEEN 1 AND 366) THEN
        RETURN 'open_run_days must be a number of days from 1 to 366';
    END IF;
    CASE suite
    WHEN 'brain-eval' THEN
        IF definition ->> 'hard_failure_decision' IS DISTINCT FROM 'fail' THEN
            RETURN format('hard_failure_decision must be fail, not %s', coalesce(definition ->> 'hard_failure_decision', 'missing'));
        END IF;
        FOREACH field IN ARRAY ARRAY['hard_criteria', 'soft_criteria', 'decision_ladder'] LOOP
            IF jsonb_typeof(definition -> field) IS DISTINCT FROM 'array' THEN
                RETURN format('%s must be an array', field);
            END IF;
        END LOOP;
        IF jsonb_typeof(definition -> 'diagnosis_question_types') IS DISTINCT FROM 'array'
           OR jsonb_path_exists(definition, '$.diagnosis_question_types[*] ? (@.type() != "string")') THEN
            RETURN 'diagnosis_question_types must be an array of question types (which have a diagnosis to score)';
        END IF;
        FOR item IN SELECT c FROM jsonb_array_elements((definition -> 'hard_criteria') || (definition -> 'soft_criteria')) c LOOP
            IF jsonb_typeof(item -> 'key') IS DISTINCT FROM 'string' OR item ->> 'op' IS NULL
               OR item ->> 'op' NOT IN ('<=', '>=') OR jsonb_typeof(item -> 'threshold') IS DISTINCT FROM 'number' THEN
                RETURN format('criterion %s needs a key, an op (<= or >=) and a numeric threshold', item);
            END IF;
        END LOOP;
        FOR item IN SELECT s FROM jsonb_array_elements(definition -> 'decision_ladder') s LOOP
            IF jsonb_typeof(item -> 'min_soft_passed') IS DISTINCT FROM 'number'
               OR item ->> 'decision' IS NULL
               OR item ->> 'decision' NOT IN ('pass', 'pass_with_notes', 'conditional', 'fail') THEN
                RETURN format('decision_ladder step %s needs a numeric min_soft_passed and a decision', item);
            END IF;
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(definition -> 'decision_ladder') s
                        WHERE (s ->> 'min_soft_passed')::numeric = 0) THEN
            RETURN 'decision_ladder needs a step at min_soft_passed 0';
        END IF;
        FOR hard IN SELECT h::jsonb FROM unnest(ARRAY[
                '{"key": "hallucination_rate", "op": "<=", "threshold": 0.02}',
                '{"key": "staleness_recognition_rate", "op": ">=", "threshold": 1.0}',
                '{"key": "lever_mapping_correctness", "op": ">=", "threshold": 1.0, "brain": "AGT-902"}']) h LOOP
            IF NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements(definition -> 'hard_criteria') c
                 WHERE c ->> 'key' = hard ->> 'key' AND c ->> 'op' = hard ->> 'op'
                   AND CASE hard ->> 'op' WHEN '<=' THEN (c ->> 'threshold')::numeric <= (hard ->> 'threshold')::numeric
                                          ELSE (c ->> 'threshold')::numeric >= (hard ->> 'threshold')::numeric END
                   AND CASE WHEN hard ? 'brain' THEN NOT c ? 'applies_to' OR (c -> 'applies_to') ? (hard ->> 'brain')
                            ELSE NOT c ? 'applies_to' END) THEN
                RETURN format('hard criterion %s %s %s is required (seed 002)', hard ->> 'key', hard ->> 'op', hard ->> 'threshold');
            END IF;
        END LOOP;
        IF jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,1}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,speculation_pct_max}') IS DISTINCT FROM 'number' THEN
            RETURN 'confidence_band needs numeric high_confidence_pct [low, high] and speculation_pct_max';
        END IF;
        SELECT format('question_pass.%s must be a number', k) INTO problem
          FROM unnest(ARRAY['max_hallucinations', 'min_citation_rate', 'min_diagnosis_accuracy',
                            'min_narrative_coherence', 'max_lever_violations']) k
         WHERE jsonb_typeof(definition -> 'question_pass' -> k) IS DISTINCT FROM 'number' LIMIT 1;
        RETURN problem;
    WHEN 'takes-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,every_dim_mean_at_least}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{pass_rule,every_dim_min_at_least}') IS DISTINCT FROM 'number' THEN
            RETURN 'pass_rule needs numeric every_dim_mean_at_least and every_dim_min_at_least';
        END IF;
        IF jsonb_typeof(definition #> '{quorum,min_contributing_fraction,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{quorum,min_contributing_fraction,1}') IS DISTINCT FROM 'number'
           OR (definition #>> '{quorum,min_contributing_fraction,1}')::numeric <= 0 THEN
            RETURN 'quorum.min_contributing_fraction needs [numerator, positive denominator]';
        END IF;
        IF jsonb_typeof(definition #> '{panel,min_models}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{panel,min_families}') IS DISTINCT FROM 'number'
           OR (definition #>> '{panel,min_models}')::numeric < 3
           OR (definition #>> '{panel,min_families}')::numeric < 2
           OR (definition #>> '{panel,min_families}')::numeric > (definition #>> '{panel,min_models}')::numeric
           OR (definition #>> '{panel,min_models}')::numeric <> trunc((definition #>> '{panel,min_models}')::numeric)
           OR (definition #>> '{panel,min_families}')::numeric <> trunc((definition #>> '{panel,min_families}')::numeric) THEN
            RETURN 'panel needs whole numbers min_models >= 3 (seed 000: three frontier models) and '
                   'min_families >= 2 (a cross-family panel), no more families than models';
        END IF;
        RETURN NULL;
    WHEN 'work-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{compare,same_band}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{compare,regress_tolerance}') IS DISTINCT FROM 'number' THEN
            RETURN 'compare needs numeric same_band and regress_tolerance';
        END IF;
        RETURN NULL;
    ELSE
        RETURN format('no suite %s', suite);
    END CASE;
END;
$$;

-- The owner role registers rubrics, and the rubric trigger (its own rights) validates them.
GRANT EXECUTE ON FUNCTION rubric_check_v2(text, jsonb) TO evalledger_owner;

-- The retention functions know the closures: a closure ages with its run (its run_created_at), is
-- planned, due and purged with it, before the run its key references.
-- retention_due_v2: true when a row of an aging table is due for purge: its tier clock (the
-- database's own recording time, carried onto child rows from their parent) is past the purge
-- horizon and no legal hold covers it. Reference data and every other table: never. A released
-- hold goes with its run (run holds) or once its release is past the horizon (brain and range
-- holds); a release goes only with its hold (ON DELETE CASCADE). The horizon is purge_horizon_at_v1
-- (UTC, the statement's clock), and a brain hold covers a row of the brain's prompt whatever its
-- label (retention_held_v2 with run_brains_v1).
CREATE OR REPLACE FUNCTION evalledger.retention_due_v2(table_name text, r jsonb) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    clock timestamptz;
    brain text;
    prompt text;
    run uuid;
BEGIN
    CASE table_name
    WHEN 'brain_eval_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_under_test';
        prompt := r ->> 'system_prompt_hash';
        run := r ->> 'eval_run_id';
    WHEN 'brain_eval_question_score', 'brain_eval_harness_run', 'brain_eval_harness_answer',
         'brain_eval_judge_suggestion', 'brain_eval_review_entry', 'brain_eval_run_review',
         'brain_eval_suggestion_shown', 'brain_eval_run_closure' THEN
        clock := r ->> 'run_created_at';
        run := r ->> 'eval_run_id';
        SELECT l.brain_under_test, l.system_prompt_hash INTO brain, prompt
          FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run;
    WHEN 'brain_analysis_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain';
        prompt := r ->> 'system_prompt_hash';
    WHEN 'brain_eval_import', 'eval_work_quality_snapshots', 'eval_candidate_keys' THEN
        clock := r ->> 'created_at';
    WHEN 'eval_takes_quality_runs' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'target_id';
    WHEN 'eval_takes_quality_judge_verdicts' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'eval_run_closure' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t
         WHERE t.id = (r ->> 'takes_quality_run_id')::bigint;
    WHEN 'eval_work_quality_judge_verdicts' THEN
        clock := r ->> 'snapshot_created_at';
    WHEN 'eval_capture_failures' THEN
        clock := r ->> 'recorded_at';
    WHEN 'legal_hold' THEN
        IF r ->> 'released_at' IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint) THEN
            RETURN false;
        END IF;
        IF r ->> 'eval_run_id' IS NOT NULL THEN
            SELECT l.created_at, l.brain_under_test, l.system_prompt_hash, l.eval_run_id INTO clock, brain, prompt, run
              FROM evalledger.brain_eval_log l WHERE l.eval_run_id = (r ->> 'eval_run_id')::uuid;
        ELSE
            SELECT coalesce((r ->> 'released_at')::timestamptz, max(x.released_at)) INTO clock
              FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint;
            RETURN clock < evalledger.purge_horizon_at_v1();
        END IF;
    WHEN 'legal_hold_release' THEN
        RETURN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h WHERE h.hold_id = (r ->> 'hold_id')::bigint);
    ELSE
        RETURN false;
    END CASE;
    RETURN coalesce(clock < evalledger.purge_horizon_at_v1()
                    AND NOT evalledger.retention_held_v2(clock, evalledger.run_brains_v1(brain, prompt), run), false);
END;
$$;

-- retention_rows_v2: every row of every aging table but the captured queries (which leave by
-- whole monthly partitions) with its tier clock, the brains and run a hold may name (a brain-eval
-- row's label and every brain of its prompt), and whether a row that stays still references it (an
-- analysis of a kept run, an import of a kept run; a work-quality snapshot is never pinned by the one
-- after it): what retention_plan_v2 classifies, by the same rules as retention_due_v2 and the purge.
CREATE OR REPLACE FUNCTION evalledger.retention_rows_v2()
RETURNS TABLE (table_name text, tier_clock timestamptz, brains text[], run uuid, pinned boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.brain_under_test, l.created_at, l.import_id,
               evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash) AS brains,
               l.created_at < evalledger.purge_horizon_at_v1()
               AND NOT evalledger.retention_held_v2(l.created_at,
                                                    evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                                    l.eval_run_id) AS goes
          FROM evalledger.brain_eval_log l
    )
    SELECT 'brain_eval_log', r.created_at, r.brains, r.eval_run_id, false FROM runs r
    UNION ALL
    SELECT 'brain_eval_question_score', q.run_created_at, r.brains, q.eval_run_id, false
      FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_run', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_run t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_answer', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_answer t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_judge_suggestion', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_judge_suggestion t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_review_entry', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_review_entry t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_review', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_review t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_suggestion_shown', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_suggestion_shown t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_closure', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_closure t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_analysis_log', a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL::uuid,
           EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
                    WHERE q.brain_analysis_id = a.analysis_id AND NOT r.goes)
           OR EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h JOIN runs r USING (eval_run_id)
                       WHERE h.analysis_id = a.analysis_id AND NOT r.goes)
      FROM evalledger.brain_analysis_log a
    UNION ALL
    SELECT 'brain_eval_import', i.created_at, NULL::text[], NULL,
           EXISTS (SELECT 1 FROM runs r WHERE r.import_id = i.import_id AND NOT r.goes)
      FROM evalledger.brain_eval_import i
    UNION ALL
    SELECT 'eval_takes_quality_runs', t.created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_runs t
    UNION ALL
    SELECT 'eval_takes_quality_judge_verdicts', v.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_judge_verdicts v JOIN evalledger.eval_takes_quality_runs t ON t.id = v.run_id
    UNION ALL
    SELECT 'eval_work_quality_snapshots', s.created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshots s
    UNION ALL
    SELECT 'eval_work_quality_judge_verdicts', v.snapshot_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_judge_verdicts v
    UNION ALL
    SELECT 'eval_run_closure', c.run_created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL, false
      FROM evalledger.eval_run_closure c LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = c.takes_quality_run_id
    UNION ALL
    SELECT 'eval_candidate_keys', k.created_at, NULL, NULL, false FROM evalledger.eval_candidate_keys k
    UNION ALL
    SELECT 'eval_capture_failures', f.recorded_at, NULL, NULL, false FROM evalledger.eval_capture_failures f
$$;

-- retention_plan_v2: per aging table, how many rows are hot (recorded in the last 24 months),
-- cold (24 months to 7 years: auditors only), due for purge (past 7 years, no hold) and held past
-- the horizon, and which holds keep which rows. Captured queries count by whole monthly partition,
-- as they are purged. Counts only, so auditors may ask it of tables they cannot read. The windows
-- are hot_tier_start_v1 and purge_horizon_at_v1 (UTC, the statement's clock), the holds those of
-- retention_held_v2 (a brain hold keeps its prompt's rows).
CREATE OR REPLACE FUNCTION evalledger.retention_plan_v2()
RETURNS TABLE (table_name text, hot bigint, cold bigint, due bigint, held bigint, held_by text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH holds AS (
        SELECT h.hold_id, h.eval_run_id, h.target_id, h.held_from, h.held_to,
               CASE WHEN h.eval_run_id IS NOT NULL THEN 'run ' || h.eval_run_id
                    WHEN h.target_id IS NOT NULL THEN 'brain ' || h.target_id
                    ELSE 'range ' || to_char(h.held_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                         || '..' || to_char(h.held_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') END AS scope
          FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
    ),
    parts AS (
        SELECT c.relname::text AS part,
               (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC' AS month_start,
               (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' AS month_end,
               evalledger.capture_partition_expired_v2(c.relname) AS expired
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
    ),
    rows AS (
        SELECT r.table_name, r.tier_clock, r.brains, r.run, r.pinned,
               r.tier_clock >= evalledger.hot_tier_start_v1() AS hot,
               r.tier_clock < evalledger.purge_horizon_at_v1() AS past
          FROM evalledger.retention_rows_v2() r
        UNION ALL
        SELECT 'eval_candidates', c.created_at, NULL::text[], NULL, false,
               c.created_at >= evalledger.hot_tier_start_v1(), p.expired
          FROM evalledger.eval_candidates c
          JOIN parts p ON c.created_at >= p.month_start AND c.created_at < p.month_end
    ),
    covered AS (
        SELECT r.table_name, h.hold_id, h.scope, count(*) AS n
          FROM rows r
          JOIN holds h ON h.eval_run_id = r.run OR h.target_id = ANY (r.brains)
                       OR (r.table_name <> 'eval_candidates' AND r.tier_clock BETWEEN h.held_from AND h.held_to)
                       OR (r.table_name = 'eval_candidates' AND EXISTS (
                               SELECT 1 FROM parts p
                                WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end
                                  AND h.held_from < p.month_end AND h.held_to >= p.month_start))
         WHERE r.past
         GROUP BY r.table_name, h.hold_id, h.scope
    ),
    classified AS (
        SELECT r.table_name, r.hot, r.past, r.pinned,
               r.past AND (r.pinned OR
                   CASE WHEN r.table_name = 'eval_candidates' THEN EXISTS (
                            SELECT 1 FROM parts p JOIN holds h ON h.held_from < p.month_end AND h.held_to >= p.month_start
                             WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end)
                        ELSE evalledger.retention_held_v2(r.tier_clock, r.brains, r.run) END) AS held
          FROM rows r
    ),
    tables AS (
        SELECT t.table_name, t.n
          FROM unnest(ARRAY['brain_eval_log', 'brain_eval_question_score', 'brain_eval_harness_run',
                            'brain_eval_harness_answer', 'brain_eval_judge_suggestion', 'brain_eval_review_entry',
                            'brain_eval_run_review', 'brain_eval_suggestion_shown', 'brain_eval_run_closure',
                            'brain_analysis_log', 'brain_eval_import',
                            'eval_takes_quality_runs', 'eval_takes_quality_judge_verdicts',
                            'eval_work_quality_snapshots', 'eval_work_quality_judge_verdicts', 'eval_run_closure',
                            'eval_candidates', 'eval_candidate_keys', 'eval_capture_failures'])
               WITH ORDINALITY AS t (table_name, n)
    )
    SELECT t.table_name,
           count(c.table_name) FILTER (WHERE c.hot),
           count(c.table_name) FILTER (WHERE NOT c.hot AND NOT c.past),
           count(c.table_name) FILTER (WHERE c.past AND NOT c.held),
           count(c.table_name) FILTER (WHERE c.held),
           nullif(concat_ws('; ',
               (SELECT string_agg(format('hold %s (%s): %s', v.hold_id, v.scope, v.n), '; ' ORDER BY v.hold_id)
                  FROM covered v WHERE v.table_name = t.table_name),
               CASE WHEN count(*) FILTER (WHERE c.pinned AND c.past) > 0
                    THEN format('%s referenced by kept rows', count(*) FILTER (WHERE c.pinned AND c.past)) END), '')
      FROM tables t LEFT JOIN classified c USING (table_name)
     GROUP BY t.table_name, t.n
     ORDER BY t.n
$$;
GRANT EXECUTE ON FUNCTION retention_plan_v2() TO evalledger_retention, evalledger_auditor, evalledger_owner;

-- retention_purge_v2: the one way rows leave the ledger (seed 002: hard delete past 7 years,
-- subject to legal hold). Deletes, in foreign-key order, every row whose tier clock is past the
-- purge horizon and that no unreleased hold covers: brain-eval runs with their judge suggestions,
-- harness answers, review entries, suggestions shown, run reviews, question rows, harness runs and
-- released holds;
-- analyses and imports no row references any more; takes-quality verdicts then runs; work-quality
-- verdicts then snapshots (a snapshot a kept one builds on stays); captured-query partitions whose
-- whole month is past the horizon and that no range hold overlaps, and capture keys and failures;
-- released brain and range holds whose release is past the horizon. Each step is a row of
-- retention_purge_log (who, when, which table, how many rows, which run or partition), and the
-- function returns this transaction's rows of it. The code role's, executable only by
-- evalledger_retention: the guards (refuse_change_v3) let a DELETE through only inside it. The
-- horizon is purge_horizon_at_v1 (UTC, the statement's clock: no session TimeZone moves it); a brain
-- hold keeps what runs the brain's prompt, whatever the label (retention_held_v2, run_brains_v1); a
-- work-quality snapshot goes when it is due even if a kept one compared with it (the kept one keeps
-- its comparison and the previous run's id), so an active target's history still ages out. It runs
-- under READ COMMITTED only: it waits for the hold tables' writers, and only a fresh snapshot then
-- sees the hold that one of them committed. It waits for those writers at most 5 seconds: the owner
-- role's INSERT on the hold tables lets it LOCK them ROW EXCLUSIVE and keep its transaction open, so
-- the purge stops then, naming who holds them, instead of queueing for ever. A captured-query
-- partition whose DROP (ACCESS EXCLUSIVE on eval_candidates) would wait behind a reader's open
-- transaction, and so queue every capture and read behind it, is left to the next purge.
CREATE OR REPLACE FUNCTION evalledger.retention_purge_v2()
RETURNS TABLE (purged_table text, purged_rows bigint, purged_run uuid, purged_partition text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET lock_timeout = '5s' AS $$
DECLARE
    horizon timestamptz := evalledger.purge_horizon_at_v1();
    runs uuid[];
    tq_runs bigint[];
    snapshots bigint[];
    part record;
    n bigint;
    purged text;
BEGIN
    PERFORM evalledger.require_read_committed_v2('the retention purge');
    -- No hold is placed or released while the purge decides and deletes.
    BEGIN
        LOCK TABLE evalledger.legal_hold, evalledger.legal_hold_release IN SHARE MODE;
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(DISTINCT a.usename::text, ', ') INTO purged
          FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
           AND l.relation IN ('evalledger.legal_hold'::regclass, 'evalledger.legal_hold_release'::regclass);
        RAISE EXCEPTION 'evalledger: the purge waited 5 s for the legal holds, which % holds in an open transaction: nothing purged',
                coalesce(purged, 'another session')
            USING ERRCODE = 'lock_not_available', HINT = 'run the purge again once that transaction ends';
    END;
    INSERT INTO evalledger.retention_purge_marker (txid) VALUES (txid_current());

    -- brain-eval runs, children first
    SELECT coalesce(array_agg(l.eval_run_id), '{}') INTO runs
      FROM evalledger.brain_eval_log l
     WHERE l.created_at < horizon
       AND NOT evalledger.retention_held_v2(l.created_at, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                            l.eval_run_id);
    -- In foreign-key order; released holds of those runs go with them (their releases by ON DELETE
    -- CASCADE). Each table's rows, counted per run, into the log.
    FOREACH purged IN ARRAY ARRAY['brain_eval_judge_suggestion', 'brain_eval_harness_answer', 'brain_eval_review_entry',
                                  'brain_eval_suggestion_shown', 'brain_eval_run_review', 'brain_eval_run_closure',
                                  'brain_eval_question_score',
                                  'brain_eval_harness_run', 'legal_hold', 'brain_eval_log'] LOOP
        EXECUTE format('WITH gone AS (DELETE FROM evalledger.%I t WHERE t.eval_run_id = ANY ($1) RETURNING t.eval_run_id) '
                       'INSERT INTO evalledger.retention_purge_log (table_name, row_count, eval_run_id) '
                       'SELECT %L, count(*), g.eval_run_id FROM gone g GROUP BY g.eval_run_id', purged, purged)
            USING runs;
    END LOOP;

    -- Analyses (production and eval) and imports that nothing references any more.
    WITH gone AS (
        DELETE FROM evalledger.brain_analysis_log a
         WHERE a.created_at < horizon
           AND NOT evalledger.retention_held_v2(a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q WHERE q.brain_analysis_id = a.analysis_id)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h WHERE h.analysis_id = a.analysis_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_analysis_log', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.brain_eval_import i
         WHERE i.created_at < horizon
           AND NOT evalledger.retention_held_v2(i.created_at, NULL, NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.import_id = i.import_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_eval_import', count(*) FROM gone HAVING count(*) > 0;

    -- takes-quality: verdicts, then runs
    SELECT coalesce(array_agg(t.id), '{}') INTO tq_runs
      FROM evalledger.eval_takes_quality_runs t
     WHERE t.created_at < horizon AND NOT evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL);
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_runs t WHERE t.id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_runs', count(*) FROM gone HAVING count(*) > 0;

    -- work-quality: verdicts, then snapshots, each as it falls due: a snapshot that a kept one
    -- compared with does not pin it (the kept one names its run and keeps the comparison).
    SELECT coalesce(array_agg(s.snapshot_id), '{}') INTO snapshots
      FROM evalledger.eval_work_quality_snapshots s
     WHERE s.created_at < horizon AND NOT evalledger.retention_held_v2(s.created_at, NULL, NULL);
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshots', count(*) FROM gone HAVING count(*) > 0;

    -- Captured queries: whole monthly partitions past the horizon that no range hold overlaps
    -- (the drop guard admits them inside the capture purge's marker), then keys and failures.
    INSERT INTO evalledger.capture_purge_marker (txid) VALUES (txid_current());
    FOR part IN
        SELECT c.relname::text AS name
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
           AND evalledger.capture_partition_expired_v2(c.relname)
           AND NOT EXISTS (
               SELECT 1 FROM evalledger.legal_hold h
                WHERE h.held_from IS NOT NULL AND h.released_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
                  AND h.held_from < (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                  AND h.held_to >= (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC')
         ORDER BY c.relname
    LOOP
        -- Counted through the parent: a partition has no policy of its own, so FORCE hides its rows.
        SELECT count(*) INTO n FROM evalledger.eval_candidates c
         WHERE c.tableoid = ('evalledger.' || quote_ident(part.name))::regclass;
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
            EXECUTE format('DROP TABLE evalledger.%I', part.name);
            INSERT INTO evalledger.retention_purge_log (table_name, row_count, partition_name)
            VALUES ('eval_candidates', n, part.name);
        EXCEPTION WHEN lock_not_available THEN
            NULL;  -- a reader holds eval_candidates: the next purge drops it
        END;
        PERFORM pg_catalog.set_config('lock_timeout', '5s', true);
    END LOOP;
    DELETE FROM evalledger.capture_purge_marker m WHERE m.txid = txid_current();
    WITH gone AS (
        DELETE FROM evalledger.eval_candidate_keys k
         WHERE k.created_at < horizon AND NOT evalledger.retention_held_v2(k.created_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_candidate_keys', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.eval_capture_failures f
         WHERE f.recorded_at < horizon AND NOT evalledger.retention_held_v2(f.recorded_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_capture_failures', count(*) FROM gone HAVING count(*) > 0;

    -- Brain and range holds released more than the horizon ago.
    WITH gone AS (
        DELETE FROM evalledger.legal_hold h
         WHERE h.eval_run_id IS NULL
           AND coalesce(h.released_at, (SELECT max(x.released_at) FROM evalledger.legal_hold_release x
                                          WHERE x.hold_id = h.hold_id)) < horizon
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'legal_hold', count(*) FROM gone HAVING count(*) > 0;

    DELETE FROM evalledger.retention_purge_marker m WHERE m.txid = txid_current();
    RETURN QUERY
        SELECT p.table_name, p.row_count, p.eval_run_id, p.partition_name
          FROM evalledger.retention_purge_log p
         WHERE p.txid = txid_current()
         ORDER BY p.purge_log_id;
END;
$$;

-- The purge is the retention role's alone; the plan (counts only) also the auditor's and the owner's.
GRANT EXECUTE ON FUNCTION retention_purge_v2() TO evalledger_retention;

-- Each run as a reader should take it.
-- takes_quality_run_state_rows_v1: the rows of takes_quality_run_state_v1 (see it). SECURITY INVOKER
-- (the default), so each reader reads through its own row-level security on every server the ledger
-- supports. Inlined into the caller's query, so every operator is pg_catalog's by name (an inlined
-- function has no search_path of its own).
CREATE FUNCTION evalledger.takes_quality_run_state_rows_v1()
RETURNS TABLE (run_id bigint, target_id varchar, prompt_sha8 char(8), scope_sha8 char(8), started_at timestamptz,
               created_at timestamptz, completed_at timestamptz, deadline_at timestamptz, state text,
               verdict text, verdict_message text)
LANGUAGE sql STABLE AS $$
SELECT r.id, r.target_id, r.prompt_sha8, r.scope_sha8, r.started_at, r.created_at, r.completed_at, d.deadline_at,
       CASE WHEN c.closure_id IS NOT NULL THEN c.closure
            WHEN r.completed_at IS NOT NULL THEN 'complete'
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'abandoned'
            ELSE 'open' END AS state,
       CASE WHEN r.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'fail'
            ELSE r.verdict END AS verdict,
       CASE WHEN r.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at
            THEN evalledger.brain_eval_abandoned_v1('abandoned', evalledger.brain_eval_overdue_v1(d.deadline_at), NULL)
            ELSE r.receipt_json OPERATOR(pg_catalog.->>) 'verdictMessage' END AS verdict_message
  FROM evalledger.eval_takes_quality_runs r
  CROSS JOIN LATERAL (SELECT evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id) AS deadline_at) d
  LEFT JOIN evalledger.eval_run_closure c ON c.takes_quality_run_id OPERATOR(pg_catalog.=) r.id
$$;

GRANT EXECUTE ON FUNCTION takes_quality_run_state_rows_v1() TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- takes_quality_run_state_v1: each takes-quality run as a reader should take it, whether or not
-- anything closed it yet: open, complete, cancelled or abandoned (an open run past its deadline, by
-- the database's clock, reads abandoned, verdict fail, before the next write closes it), with the
-- verdict and message it has or will have (issue 37, item 2; brain_eval_run_state_v1's rule).
CREATE VIEW takes_quality_run_state_v1 AS
    SELECT * FROM evalledger.takes_quality_run_state_rows_v1();
COMMENT ON VIEW evalledger.takes_quality_run_state_v1 IS
    'Each takes-quality run as a reader should take it: open, complete, cancelled or abandoned (an open run past its rubric''s deadline reads abandoned, verdict fail, before anything closes it), with the verdict and message it has or will have.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.run_id IS 'The run (eval_takes_quality_runs.id).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.target_id IS 'The brain whose takes were judged (target_id), NULL when the run named none.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.prompt_sha8 IS 'The judges'' prompt fingerprint (first 8 hex).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.scope_sha8 IS 'Where the sample was drawn from (source, path, slug prefix), fingerprinted (first 8 hex).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.created_at IS 'When the database recorded the run (timestamptz): its deadline counts from here.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.completed_at IS 'When the run was completed or closed (timestamptz; NULL while open).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.deadline_at IS 'When an open run is abandoned (timestamptz): created_at plus the rubric''s open_run_days (14 by default), in 24-hour days.';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.state IS 'open, complete, cancelled (by the runner, with a reason) or abandoned (open past deadline_at, or closed so).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.verdict IS 'pass, fail or inconclusive: the stored verdict, or fail for an open run past its deadline (NULL while open).';
COMMENT ON COLUMN evalledger.takes_quality_run_state_v1.verdict_message IS 'The receipt''s verdictMessage, or the abandonment''s for an open run past its deadline (a closed run''s begins "Abandoned:").';

GRANT SELECT ON takes_quality_run_state_v1 TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_run_state_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- work_quality_run_state_rows_v1: the rows of work_quality_run_state_v1 (see it). SECURITY INVOKER
-- (the default), so each reader reads through its own row-level security on every server the ledger
-- supports. Inlined into the caller's query, so every operator is pg_catalog's by name (an inlined
-- function has no search_path of its own).
CREATE FUNCTION evalledger.work_quality_run_state_rows_v1()
RETURNS TABLE (snapshot_id bigint, name text, run_id text, origin text, at timestamptz, created_at timestamptz,
               completed_at timestamptz, deadline_at timestamptz, state text, regression boolean, note text)
LANGUAGE sql STABLE AS $$
SELECT s.snapshot_id, s.name, s.run_id, s.origin, s.at, s.created_at, s.completed_at, d.deadline_at,
       CASE WHEN c.closure_id IS NOT NULL THEN c.closure
            WHEN s.completed_at IS NOT NULL THEN 'complete'
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'abandoned'
            ELSE 'open' END AS state,
       CASE WHEN c.closure_id IS NOT NULL THEN true
            WHEN s.completed_at IS NOT NULL
            THEN pg_catalog.cardinality(evalledger.work_quality_is_regression_v1(s.comparison)) OPERATOR(pg_catalog.>) 0
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN true END AS regression,
       CASE WHEN s.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at
            THEN evalledger.brain_eval_abandoned_v1('abandoned', evalledger.brain_eval_overdue_v1(d.deadline_at), NULL)
            ELSE s.note END AS note
  FROM evalledger.eval_work_quality_snapshots s
  CROSS JOIN LATERAL (SELECT CASE WHEN s.origin OPERATOR(pg_catalog.=) 'run'
                                  THEN evalledger.brain_eval_run_deadline_v1(s.created_at, s.rubric_id) END AS deadline_at) d
  LEFT JOIN evalledger.eval_run_closure c ON c.snapshot_id OPERATOR(pg_catalog.=) s.snapshot_id
$$;

GRANT EXECUTE ON FUNCTION work_quality_run_state_rows_v1() TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_run_state_v1: each work-quality snapshot as a reader should take it, whether or not
-- anything closed it yet: open, complete, cancelled or abandoned (an open run past its deadline, by
-- the database's clock, reads abandoned, a regression, before the next write closes it), with the
-- regression and note it has or will have (issue 37, item 2; brain_eval_run_state_v1's rule).
CREATE VIEW work_quality_run_state_v1 AS
    SELECT * FROM evalledger.work_quality_run_state_rows_v1();
COMMENT ON VIEW evalledger.work_quality_run_state_v1 IS
    'Each work-quality snapshot as a reader should take it: open, complete, cancelled or abandoned (an open run past its rubric''s deadline reads abandoned, a regression, before anything closes it), with the regression and note it has or will have.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.name IS 'The target (bot or feature) the run assessed.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.run_id IS 'The assessed run''s id (--run-id).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.origin IS 'run (judged here) or import (a history file, complete when recorded).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.at IS 'When the snapshot was taken (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.created_at IS 'When the database recorded the snapshot (timestamptz): a run''s deadline counts from here.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.completed_at IS 'When the snapshot was completed or closed (timestamptz; NULL while open).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.deadline_at IS 'When an open run is abandoned (timestamptz): created_at plus the rubric''s open_run_days (14 by default), in 24-hour days; NULL for an import.';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.state IS 'open, complete, cancelled (by the runner, with a reason) or abandoned (open past deadline_at, or closed so).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.regression IS 'Whether it is a regression: IsRegression of its comparison, always for a cancelled or abandoned one (NULL while open).';
COMMENT ON COLUMN evalledger.work_quality_run_state_v1.note IS 'The note: the stored one (a closed run''s begins "Abandoned:"), or the abandonment''s for an open run past its deadline.';

GRANT SELECT ON work_quality_run_state_v1 TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_run_state_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- The takes-quality trend and the work-quality history show an open run past its deadline as
-- abandoned, and a closed one as what its closure decided.
-- takes_quality_trend_rows_v1: completed takes-quality runs newest first, each with its rubric
-- epoch (the rubric's version and the receipt's rubric_sha8: a stricter rubric is a new epoch and
-- is charted apart, never as a drop), verdict, overall score, each dimension's mean (from the
-- receipt the database wrote at completion), cost and whether the judges were live or recorded.
-- Read newest first through eval_takes_quality_runs_started_idx, so the latest p_latest runs cost
-- the same however long the history. Filters, each NULL for all: a target, the first and last
-- month started (UTC; whole months), at most p_latest runs. Readers see what their policies show.
-- An open run past its deadline is in it as abandoned, verdict fail (takes_quality_run_state_v1; a
-- closed one is stored so: issue 37, item 2), with no scores until the next write closes it.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_trend_rows_v1(
    p_target text, p_from_month date, p_to_month date, p_latest integer)
RETURNS TABLE (
    run_id          bigint,
    target_id       varchar(16),
    rubric_version  text,
    rubric_sha8     char(8),
    started_at      timestamptz,
    completed_at    timestamptz,
    verdict         text,
    overall_score   numeric,
    dimension_means jsonb,
    cost_usd        numeric,
    n_takes         integer,
    models          text[],
    judges          text)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.id, r.target_id, b.version, r.rubric_sha8, r.started_at, r.completed_at, coalesce(r.verdict, 'fail'),
           r.overall_score,
           (SELECT jsonb_object_agg(d.key, d.value -> 'mean') FROM jsonb_each(r.receipt_json -> 'scores') d),
           r.cost_usd, r.n_takes, r.models, coalesce(r.receipt_json ->> 'judges', r.judges, 'live')
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     WHERE (r.completed_at IS NOT NULL
            OR now() >= evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id))
       AND (p_target IS NULL OR r.target_id = p_target)
       AND (p_from_month IS NULL OR r.started_at >= timezone('UTC', date_trunc('month', p_from_month::timestamp)))
       AND (p_to_month IS NULL OR r.started_at < timezone('UTC', date_trunc('month', p_to_month::timestamp) + interval '1 month'))
     ORDER BY r.started_at DESC, r.id DESC
     LIMIT p_latest
$$;
GRANT EXECUTE ON FUNCTION takes_quality_trend_rows_v1(text, date, date, integer) TO evalledger_revops, evalledger_auditor;

COMMENT ON VIEW evalledger.takes_quality_trend_v1 IS
    'Every completed takes-quality run newest first (and every open one past its deadline, abandoned, verdict fail): its rubric epoch (rubric_version and rubric_sha8; chart epochs apart), verdict, overall score and dimension means on the rubric''s scale (1-10 for v1.0), cost in USD, and whether the judges were live or recorded.';

-- work_quality_history_rows_v1: the rows of the work_quality_history_v1 view (see it), a SECURITY
-- INVOKER SQL function so the reader's policies filter it on PostgreSQL 14 too. A snapshot closed
-- without completing whole, or open past its deadline (work_quality_run_state_v1: cancelled or
-- abandoned; issue 37, item 2), is a regression whose one reason is its note, "Abandoned: ...".
CREATE OR REPLACE FUNCTION evalledger.work_quality_history_rows_v1()
RETURNS TABLE (
    name               text,
    kind               text,
    persona            text,
    at                 timestamptz,
    run_id             text,
    origin             text,
    snapshot_id        bigint,
    models             text[],
    efficacy           numeric,
    completeness       numeric,
    output_quality     numeric,
    restraint          numeric,
    reliability        numeric,
    value_for_money    numeric,
    overall            numeric,
    prev_run_id        text,
    overall_delta      numeric,
    value_delta        numeric,
    verdict            text,
    regression         boolean,
    regression_reasons text[],
    cost_usd           numeric,
    tokens             bigint,
    duration_ms        bigint,
    iterations         bigint,
    model_calls        bigint,
    retries            bigint,
    judges_cost_usd    numeric,
    note               text)
LANGUAGE sql STABLE AS $$
    SELECT s.name, s.kind, s.persona, s.at, s.run_id, s.origin, s.snapshot_id, s.models,
           (s.mean_scores ->> 'efficacy')::numeric, (s.mean_scores ->> 'completeness')::numeric,
           (s.mean_scores ->> 'output_quality')::numeric, (s.mean_scores ->> 'restraint')::numeric,
           (s.mean_scores ->> 'reliability')::numeric, (s.mean_scores ->> 'value_for_money')::numeric,
           (s.mean_scores ->> 'overall')::numeric,
           s.prev_run_id, (s.comparison ->> 'overall_delta')::numeric, (s.comparison ->> 'value_delta')::numeric,
           s.comparison ->> 'verdict',
           cardinality(r.reasons) > 0, r.reasons,
           s.cost_usd, s.tokens, s.duration_ms, s.iterations, s.model_calls, s.retries, s.judges_cost_usd, w.note
      FROM evalledger.eval_work_quality_snapshots s
     CROSS JOIN LATERAL (SELECT w.state, w.note FROM evalledger.work_quality_run_state_v1 w
                          WHERE w.snapshot_id = s.snapshot_id) w
     CROSS JOIN LATERAL (SELECT CASE WHEN w.state IN ('abandoned', 'cancelled') THEN ARRAY[w.note]
                                     ELSE evalledger.work_quality_is_regression_v1(s.comparison) END AS reasons) r
     WHERE s.completed_at IS NOT NULL OR w.state = 'abandoned'
$$;
GRANT EXECUTE ON FUNCTION work_quality_history_rows_v1() TO evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION work_quality_history_rows_v1() TO evalledger_revops, evalledger_auditor;

-- takes-quality's regress: no gate passes on a run cancelled or abandoned.
-- takes_quality_regression_v1: seed 000's `regress` decided by the database, as work-quality's
-- Compare and IsRegression are: a baseline receipt against the run `regress` just made, read from
-- the ledger (its stored receipt, or, while it stays open, the receipt completion would write), so
-- the "now" side is the database's and never the caller's. Per dimension of the baseline (in the
-- run's rubric order, then the overall): baseline mean, now, delta (numeric, exact: a drop of
-- exactly the threshold is 0.5, not 0.5000000000000001) and whether it regressed, which is a drop
-- of more than the threshold (seed 000: "some dim dropped > 0.5"). The outcome the exit code
-- follows: regression (1) when any dropped; else inconclusive (2) when a side has no mean to
-- compare (an inconclusive run); else ok (0). Differences of the corpus, prompt and rubric
-- fingerprints are informational warnings (seed 000: the caller's call). The threshold is
-- takes_quality_threshold_v1's (NULL: seed 000's default). A run cancelled or abandoned (open past
-- its deadline, or closed so: takes_quality_run_state_v1; issue 37, item 2) is a regression whatever
-- its scores, its verdictMessage ("Abandoned: ...") the first warning: no gate passes on it.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_regression_v1(baseline jsonb, p_run_id bigint, threshold numeric DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t numeric := evalledger.takes_quality_threshold_v1(threshold);
    now_receipt jsonb;
    dims text[];
    compared jsonb;
    closed text;
BEGIN
    IF jsonb_typeof(baseline -> 'scores') IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'evalledger: the baseline is not a takes-quality receipt (it has no scores object)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT coalesce(r.receipt_json, evalledger.takes_quality_receipt_v4(r.id)),
           ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(b.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                  ORDER BY n),
           CASE WHEN s.state IN ('cancelled', 'abandoned') THEN format('run %s is %s: %s', r.id, s.state, s.verdict_message) END
      INTO now_receipt, dims, closed
      FROM evalledger.eval_takes_quality_runs r JOIN evalledger.rubric b USING (rubric_id)
      JOIN evalledger.takes_quality_run_state_v1 s ON s.run_id = r.id
     WHERE r.id = p_run_id;
    IF now_receipt IS NULL THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run % to compare with the baseline', p_run_id
            USING ERRCODE = 'no_data_found';
    END IF;
    WITH pairs AS (
        SELECT k.n, k.name, baseline -> 'scores' -> k.name -> 'mean' AS before,
               now_receipt -> 'scores' -> k.name -> 'mean' AS after
          FROM (SELECT row_number() OVER (ORDER BY array_position(dims, key) NULLS LAST, key COLLATE "C") AS n,
                       key AS name
                  FROM jsonb_object_keys(baseline -> 'scores') key) k
        UNION ALL
        SELECT 1e9, 'overall', baseline -> 'overall_score', now_receipt -> 'overall_score'),
    rows AS (
        SELECT p.n, p.name, p.before, p.after, d.delta, coalesce(d.delta < -t, false) AS regressed
          FROM pairs p CROSS JOIN LATERAL (
               SELECT CASE WHEN jsonb_typeof(p.before) = 'number' AND jsonb_typeof(p.after) = 'number'
                           THEN (p.after::text)::numeric - (p.before::text)::numeric END AS delta) d)
    SELECT jsonb_build_object(
               'threshold', t,
               'rows', coalesce(jsonb_agg(jsonb_build_object('dimension', name, 'baseline', before, 'now', after,
                                                             'delta', delta, 'regressed', regressed) ORDER BY n), '[]'),
               'regressed', coalesce(jsonb_agg(name ORDER BY n) FILTER (WHERE regressed), '[]'),
               'outcome', CASE WHEN bool_or(regressed) OR closed IS NOT NULL THEN 'regression'
                               WHEN bool_or(delta IS NULL) THEN 'inconclusive'
                               ELSE 'ok' END,
               'warnings', (SELECT CASE WHEN closed IS NOT NULL THEN jsonb_build_array(closed) ELSE '[]' END
                                   || coalesce(jsonb_agg(format('%s differs: %s (baseline) vs %s (now)', f.name, f.a, f.b)
                                                      ORDER BY f.n), '[]')
                              FROM (VALUES (1, 'corpus_sha8', baseline -> 'corpus' ->> 'corpus_sha8',
                                            now_receipt -> 'corpus' ->> 'corpus_sha8'),
                                           (2, 'prompt_sha8', baseline ->> 'prompt_sha8', now_receipt ->> 'prompt_sha8'),
                                           (3, 'rubric_sha8', baseline ->> 'rubric_sha8', now_receipt ->> 'rubric_sha8'))
                                   f(n, name, a, b)
                             WHERE f.a IS DISTINCT FROM f.b))
      INTO compared
      FROM rows;
    RETURN compared;
END;
$$;

-- `regress` runs as the runner, which made the run it compares.
GRANT EXECUTE ON FUNCTION takes_quality_regression_v1(jsonb, bigint, numeric) TO evalledger_runner;

-- The brain-eval trends, which 0110 left to completed runs, the same way.
-- As in the _v1 panels, each view reads a SECURITY INVOKER function, so every reader reads
-- through its own row-level security on PostgreSQL 14 too. The functions over the by-month tables
-- set their search_path (they are aggregates of bounded size: nothing to push down); the per-run
-- ones are plain SQL with every operator schema-qualified, so a BI tool's filters push down.
-- Every _v1 view stays as it is: BI tools read them.
-- brain_trend_rows_v1: per brain, its last p_last completed runs of one trigger (quarterly when
-- p_trigger is NULL: seed 002's per-brain quarterly trend), newest first, each aggregated
-- dimension a numeric column as the decision compared it. The dashboards' trend panel with their
-- filters: a brain, the first and last month started (UTC; whole months), the trigger and how many
-- runs. Read through (brain_under_test, started_at DESC) (index 1), so it costs what p_last runs
-- per brain cost. Plain SQL without SET, every operator schema-qualified (as brain_quarterly_trend_rows_v1).
-- An open run past its deadline is in it as abandoned, decided fail, with no scores, before the next
-- write closes it (brain_eval_run_state_v1; issue 37, item 2): no run is left out of a pass rate.
CREATE OR REPLACE FUNCTION evalledger.brain_trend_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_last integer)
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
    run_trigger                    text,
    quarter                        text,
    started_at                     timestamptz,
    completed_at                   timestamptz,
    model_id                       varchar(64),
    system_prompt_hash             varchar(64),
    question_catalog_version       varchar(32),
    decision                       text,
    citation_rate                  numeric,
    hallucination_rate             numeric,
    staleness_recognition_rate     numeric,
    diagnosis_accuracy_mean        numeric,
    lever_mapping_correctness      numeric,
    confidence_calibration_in_band numeric,
    narrative_coherence_mean       numeric)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id, r.run_trigger::text,
           pg_catalog.to_char(pg_catalog.timezone('UTC', r.started_at), 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           CASE WHEN r.completed_at IS NULL THEN 'fail' ELSE r.decision::text END,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'citation_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'hallucination_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'staleness_recognition_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'diagnosis_accuracy_mean')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'lever_mapping_correctness')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'confidence_calibration_in_band')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'narrative_coherence_mean')::numeric
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT l.*, pg_catalog.row_number() OVER (ORDER BY l.started_at DESC, l.eval_run_id DESC) AS recency_rank
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger
               AND (l.completed_at IS NOT NULL
                    OR pg_catalog.now() OPERATOR(pg_catalog.>=) evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id))
               AND (p_from_month IS NULL
                    OR l.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
               AND (p_to_month IS NULL
                    OR l.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                            OPERATOR(pg_catalog.+) interval '1 month'))
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT p_last) r
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION brain_trend_rows_v1(text, date, date, text, integer) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- Each panel is a view over a SECURITY INVOKER SQL function (<panel>_rows_v1): a function called
-- from a view runs as the querying role, so RevOps (hot tier) and auditors (everything) each read
-- through their own row-level security on PostgreSQL 14 too, which has no security_invoker; the
-- functions are plain STABLE SQL, so the planner inlines them and filters push down. Without a SET
-- search_path (which would stop the inlining) their bodies name everything schema-qualified,
-- comparisons included (OPERATOR(pg_catalog.=)): an exact-type operator in a schema on the
-- reader's path would otherwise be picked over pg_catalog's, and run as the reader. Only
-- completed runs count. Where the
-- server has it (15+), the views also get security_invoker = true (belt and braces).
-- brain_quarterly_trend_rows_v1: per brain, its last 8 completed quarterly runs with each aggregated dimension as a column.
-- An open run past its deadline counts as completed, abandoned, decided fail, with no scores, before
-- the next write closes it (brain_eval_run_state_v1; issue 37, item 2).
CREATE OR REPLACE FUNCTION evalledger.brain_quarterly_trend_rows_v1()
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
    quarter                        text,
    started_at                     timestamptz,
    completed_at                   timestamptz,
    model_id                       varchar(64),
    system_prompt_hash             varchar(64),
    question_catalog_version       varchar(32),
    decision                       text,
    citation_rate                  numeric,
    hallucination_rate             numeric,
    staleness_recognition_rate     numeric,
    diagnosis_accuracy_mean        numeric,
    lever_mapping_correctness      numeric,
    confidence_calibration_in_band numeric,
    narrative_coherence_mean       numeric)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id,
           to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           CASE WHEN r.completed_at IS NULL THEN 'fail' ELSE r.decision::text END,
           (r.aggregated_scores ->> 'citation_rate')::numeric,
           (r.aggregated_scores ->> 'hallucination_rate')::numeric,
           (r.aggregated_scores ->> 'staleness_recognition_rate')::numeric,
           (r.aggregated_scores ->> 'diagnosis_accuracy_mean')::numeric,
           (r.aggregated_scores ->> 'lever_mapping_correctness')::numeric,
           (r.aggregated_scores ->> 'confidence_calibration_in_band')::numeric,
           (r.aggregated_scores ->> 'narrative_coherence_mean')::numeric
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT l.*, row_number() OVER (ORDER BY l.started_at DESC, l.eval_run_id DESC) AS recency_rank
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.run_trigger OPERATOR(pg_catalog.=) 'quarterly'
               AND (l.completed_at IS NOT NULL
                    OR pg_catalog.now() OPERATOR(pg_catalog.>=) evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id))
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 8) r
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION brain_quarterly_trend_rows_v1() TO evalledger_revops, evalledger_auditor;

-- A ledger may hold several open runs of one subject already: all but the latest recorded are closed
-- as abandoned, with a reason naming the run that stays open, before the indexes that allow one are
-- built.
DO $close_extra$
DECLARE
    extra record;
BEGIN
    FOR extra IN SELECT r.id, r.created_at, k.id AS kept
                   FROM eval_takes_quality_runs r
                   JOIN LATERAL (SELECT o.id FROM eval_takes_quality_runs o
                                  WHERE coalesce(o.target_id, '') = coalesce(r.target_id, '')
                                    AND o.prompt_sha8 = r.prompt_sha8 AND o.scope_sha8 = r.scope_sha8
                                    AND o.judges = r.judges
                                    AND o.completed_at IS NULL
                                  ORDER BY o.created_at DESC, o.id DESC LIMIT 1) k ON k.id <> r.id
                  WHERE r.completed_at IS NULL
                  ORDER BY r.created_at, r.id LOOP
        INSERT INTO eval_run_closure (suite, takes_quality_run_id, closure, reason, closed_by, run_created_at)
        VALUES ('takes-quality', extra.id, 'abandoned',
                format('run %s of the same brain, prompt, sample scope and judges was open beside it when one open run at a time became the rule (migration 0114)', extra.kept),
                caller_v1(), extra.created_at);
        UPDATE eval_takes_quality_runs SET completed_at = now() WHERE id = extra.id;
    END LOOP;
    FOR extra IN SELECT s.snapshot_id AS id, s.created_at, k.run_id AS kept
                   FROM eval_work_quality_snapshots s
                   JOIN LATERAL (SELECT o.snapshot_id, o.run_id FROM eval_work_quality_snapshots o
                                  WHERE o.name = s.name AND o.judges = s.judges AND o.completed_at IS NULL
                                  ORDER BY o.created_at DESC, o.snapshot_id DESC LIMIT 1) k ON k.snapshot_id <> s.snapshot_id
                  WHERE s.completed_at IS NULL
                  ORDER BY s.created_at, s.snapshot_id LOOP
        INSERT INTO eval_run_closure (suite, snapshot_id, closure, reason, closed_by, run_created_at)
        VALUES ('work-quality', extra.id, 'abandoned',
                format('run %s of the same target and judges was open beside it when one open run at a time became the rule (migration 0114)', extra.kept),
                caller_v1(), extra.created_at);
        UPDATE eval_work_quality_snapshots SET completed_at = now() WHERE snapshot_id = extra.id;
    END LOOP;
END
$close_extra$;

-- One open run of a brain, judges' prompt, sample scope and judges at a time (issue 37, item 2):
-- eval_takes_quality_runs_17_one_open names the open run; this index holds the rule against racing
-- sessions (no target counts as one target).
CREATE UNIQUE INDEX eval_takes_quality_runs_one_open_idx
    ON eval_takes_quality_runs ((coalesce(target_id, '')), prompt_sha8, scope_sha8, judges) WHERE completed_at IS NULL;

-- One open run of a target and its judges at a time (issue 37, item 2):
-- eval_work_quality_snapshots_17_one_open names the open run; this index holds the rule against
-- racing sessions.
CREATE UNIQUE INDEX eval_work_quality_snapshots_one_open_idx
    ON eval_work_quality_snapshots (name, judges) WHERE completed_at IS NULL;

-- takes_quality_run_one_open_v1: one open takes-quality run of a subject at a time (issue 37, item
-- 2): the same brain (target_id, none counting as one), the same judges' prompt (prompt_sha8), the
-- same sample's scope (scope_sha8: source, path, slug prefix) and the same judges (live or the
-- recorded replies, which never occupy a live run's place). Another seed, panel or rubric is no new
-- subject: starting one until a sample looks good is what this refuses. Before a run is
-- recorded, the brain's open runs past their deadline (brain_eval_run_deadline_v1) are closed as
-- abandoned (eval_run_close_v1; the decision trigger records why), so nothing has to run on a
-- schedule; until then readers see them abandoned (takes_quality_run_state_v1). Then a run of the
-- same subject still open is named in the refusal, unless it is this very eval (its identity:
-- the runner's INSERT ... ON CONFLICT DO NOTHING then resumes it, as before).
-- eval_takes_quality_runs_one_open_idx holds the rule against racing sessions, which this trigger
-- cannot see.
CREATE FUNCTION evalledger.takes_quality_run_one_open_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    overdue bigint;
    open_run evalledger.eval_takes_quality_runs;
BEGIN
    FOR overdue IN SELECT r.id FROM evalledger.eval_takes_quality_runs r
                    WHERE r.target_id IS NOT DISTINCT FROM NEW.target_id AND r.completed_at IS NULL
                      AND evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id) <= now()
                    ORDER BY r.created_at, r.id LOOP
        PERFORM evalledger.eval_run_close_v1('takes-quality', overdue, NULL);
    END LOOP;
    SELECT r.* INTO open_run FROM evalledger.eval_takes_quality_runs r
     WHERE coalesce(r.target_id, '') = coalesce(NEW.target_id, '') AND r.prompt_sha8 = NEW.prompt_sha8
       AND r.scope_sha8 = NEW.scope_sha8 AND r.judges = NEW.judges AND r.completed_at IS NULL;
    IF FOUND AND (open_run.corpus_sha8, open_run.models_sha8, open_run.rubric_sha8, open_run.rerun)
                 IS DISTINCT FROM (NEW.corpus_sha8, NEW.models_sha8, NEW.rubric_sha8, NEW.rerun) THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % of %, this prompt, sample scope and % judges, is open (recorded % UTC): complete or cancel it first',
                open_run.id, coalesce(open_run.target_id, 'no target'), open_run.judges,
                to_char(open_run.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'eval_takes_quality_runs_one_open_idx',
                  HINT = format('evalledger takes-quality cancel %s --reason "..."', open_run.id);
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_takes_quality_runs_17_one_open BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_one_open_v1();

-- work_quality_snapshot_one_open_v1: one open work-quality run of a target (name) and its judges
-- (live, or the recorded replies, which never occupy a live run's place) at a time (issue 37, item
-- 2): another --run-id of the same bot or feature while one is open would let an operator judge
-- runs until one compares well. Before a snapshot is recorded (a run or an import), the
-- target's open runs past their deadline (brain_eval_run_deadline_v1) are closed as abandoned
-- (eval_run_close_v1; the decision trigger records why), so nothing has to run on a schedule; until
-- then readers see them abandoned (work_quality_run_state_v1). Then a run of the target still open is
-- named in the refusal, unless it is this very run (its identity: the runner's INSERT ... ON CONFLICT
-- DO NOTHING then resumes it, as before). eval_work_quality_snapshots_one_open_idx holds the rule
-- against racing sessions, which this trigger cannot see. An import is complete when recorded.
CREATE FUNCTION evalledger.work_quality_snapshot_one_open_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    overdue bigint;
    open_run evalledger.eval_work_quality_snapshots;
BEGIN
    FOR overdue IN SELECT s.snapshot_id FROM evalledger.eval_work_quality_snapshots s
                    WHERE s.name = NEW.name AND s.completed_at IS NULL
                      AND evalledger.brain_eval_run_deadline_v1(s.created_at, s.rubric_id) <= now()
                    ORDER BY s.created_at, s.snapshot_id LOOP
        PERFORM evalledger.eval_run_close_v1('work-quality', overdue, NULL);
    END LOOP;
    IF NEW.completed_at IS NOT NULL THEN
        RETURN NEW;
    END IF;
    SELECT s.* INTO open_run FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.judges = NEW.judges AND s.completed_at IS NULL;
    IF FOUND AND open_run.run_id IS DISTINCT FROM NEW.run_id THEN
        RAISE EXCEPTION 'evalledger: work-quality run % of % (% judges), snapshot %, is open (recorded % UTC): complete or cancel it first',
                open_run.run_id, open_run.name, open_run.judges, open_run.snapshot_id,
                to_char(open_run.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'eval_work_quality_snapshots_one_open_idx',
                  HINT = format('evalledger work-quality cancel %s --reason "..."', open_run.snapshot_id);
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_snapshots_17_one_open BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_one_open_v1();

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
