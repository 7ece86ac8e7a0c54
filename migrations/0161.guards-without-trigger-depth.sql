-- Guards that trusted trigger depth, and a notice that said too much (found by reading the ledger as a
-- careful insider; each reproduced as the role).
--
-- Any login may create a temporary table with a trigger of its own, so pg_trigger_depth() says
-- nothing about who is writing or reading:
-- - work_quality_verdict_admit_v2 took a verdict on an imported snapshot at a depth of 2 as the
--   import's own, so a runner's trigger on a temporary table added a verdict the file never held to
--   any imported snapshot, completed or cold, long after its import, and nothing the auditor runs
--   named it. A verdict on an imported snapshot is now admitted only in the transaction that
--   recorded the snapshot (its created_at is that transaction's now()) and only as one of the
--   file's own verdict entries under that entry's model, as the first repeat's first call.
-- - takes_quality_receipt_v3 and _v4 answered for any run, cold ones included, at any depth above
--   0, so a runner or RevOps read a cold run's receipt through such a trigger. They now ask
--   caller_reads_v1 at every depth and build the receipt through takes_quality_receipt_built_v3 and
--   _v4, granted to no role; the completion's decision (takes_quality_run_decide_v2), which closes
--   an open run past its deadline whatever its age, builds its receipt there.
-- A new replay run that closes the run of its request left open past the hot tier told its caller,
-- who may not read that run, when it started and what it was decided; the notice now names the run
-- (for an auditor to read) and nothing more (replay_run_admit_v1).
-- A lock anyone can take: two registrations of one prompt's spellings waited on an advisory key
-- derived from the prompt, which any login that knew the prompt could hold, stalling the owner's
-- registration; they wait on a table of their own instead, which holds no rows and which no role may
-- lock (brain_version_registration, as capture_window is the capture writers', but journalled as
-- every table is: it has a key, and never a row to journal; brain_version_admit_v2).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- takes_quality_receipt_built_v3 and _v4: the receipts, built for any run, granted to no role.
-- What a receipt says of its run, built in one place for both (it was written in each).
CREATE FUNCTION evalledger.takes_quality_receipt_identity_v1(run evalledger.eval_takes_quality_runs,
                                                             rub evalledger.rubric) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
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
        -- Optional fields (additive at schema_version 1).
        'run_id', run.id,
        'seed', run.seed,
        'rerun', coalesce(run.rerun, 0))
$$;


CREATE FUNCTION evalledger.takes_quality_receipt_built_v3(p_run_id bigint) RETURNS jsonb
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
     WHERE r.id = p_run_id;
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
        SELECT g.cycle, count(DISTINCT v.model) FILTER (WHERE v.contributes) AS n
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
        WINDOW w AS (PARTITION BY v.cycle, v.model, v.repeat_no ORDER BY v.retry_no)
    ), told AS (
        SELECT c.cycle, array_position(run.models, c.model) AS pos, c.repeat_no, c.retry_no,
               -- A started call whose answer follows is not an error: the answer says what happened.
               CASE WHEN c.call_started AND c.current
                    THEN format('cycle %s %s: no reply: the call started at %s and no answer was recorded '
                                '(estimated $%s counted)', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END,
                                to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN c.call_started AND c.restarted
                    THEN format('cycle %s %s: no reply: the runner stopped while the call was in flight '
                                '(estimated $%s counted); retried', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END,
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN NOT c.call_started AND NOT c.contributes
                    THEN format('cycle %s %s: %s%s%s', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END, c.error_kind,
                                CASE WHEN c.error_message IS NULL THEN '' ELSE ': ' || c.error_message END,
                                CASE WHEN c.current THEN '' ELSE '; retried' END) END AS line,
               CASE WHEN c.call_started AND (c.current OR c.restarted) THEN c.estimated_cost_usd ELSE 0 END
                   + c.cost_usd AS cost
          FROM calls c
    )
    SELECT coalesce(jsonb_agg(t.line ORDER BY t.cycle, t.pos, t.repeat_no, t.retry_no) FILTER (WHERE t.line IS NOT NULL), '[]'),
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

    RETURN evalledger.takes_quality_receipt_identity_v1(run, rub) || jsonb_build_object(
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
        'judges', coalesce(run.judges, CASE WHEN recorded = 0 THEN 'live' WHEN recorded = total THEN 'recorded'
                                            ELSE 'mixed' END),
        'final', pending = 0)
        -- Optional, only where each judge was asked more than once per cycle (--repeats K).
        || CASE WHEN run.repeats > 1 THEN jsonb_build_object('repeats', run.repeats) ELSE '{}'::jsonb END;
END;
$$;


CREATE FUNCTION evalledger.takes_quality_receipt_built_v4(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    closed evalledger.eval_run_closure;
    receipt jsonb;
BEGIN
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = p_run_id;
    IF closed.closure_id IS NULL THEN
        RETURN evalledger.takes_quality_receipt_built_v3(p_run_id);
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id) THEN
        receipt := evalledger.takes_quality_receipt_built_v3(p_run_id);
    ELSE
        SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
         WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
        END IF;
        SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
        receipt := evalledger.takes_quality_receipt_identity_v1(run, rub) || jsonb_build_object(
            'cycles_run', 0,
            'successes_per_cycle', '[]'::jsonb,
            'scores', '{}'::jsonb,
            'overall_score', NULL,
            'cost_usd', 0,
            'improvements', '[]'::jsonb,
            'errors', '[]'::jsonb,
            'judges', coalesce(run.judges, 'live'));
    END IF;
    RETURN receipt || jsonb_build_object(
        'verdict', 'fail',
        'verdictMessage', evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by),
        'final', true,
        'closure', closed.closure);
END;
$$;


-- takes_quality_receipt_v3 and _v4: the caller's, once it may read the run, at every depth.

CREATE OR REPLACE FUNCTION evalledger.takes_quality_receipt_v3(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r
                    WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN evalledger.takes_quality_receipt_built_v3(p_run_id);
END;
$$;


CREATE OR REPLACE FUNCTION evalledger.takes_quality_receipt_v4(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r
                    WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN evalledger.takes_quality_receipt_built_v4(p_run_id);
END;
$$;


-- takes_quality_run_decide_v2: the decision builds the receipt of the run it decides itself.

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
        SELECT format('cycle %s lacks %s', g.cycle,
                      string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k)) INTO gap
          FROM generate_series(1, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = NEW.id)) g(cycle)
          CROSS JOIN unnest(NEW.models) WITH ORDINALITY u(m, p)
          CROSS JOIN generate_series(1, NEW.repeats) k
         WHERE NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v
                            WHERE v.run_id = NEW.id AND v.cycle = g.cycle AND v.model = u.m AND v.repeat_no = k)
         GROUP BY g.cycle ORDER BY g.cycle LIMIT 1;
        IF gap IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not whole: %', NEW.id, gap
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
        END IF;
        SELECT string_agg(format('cycle %s %s (%s)', c.cycle,
                                 c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' repeat %s', c.repeat_no) END,
                                 CASE WHEN c.call_started THEN 'started, no reply' ELSE c.error_kind END),
                          ', ' ORDER BY c.cycle, array_position(NEW.models, c.model), c.repeat_no)
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
    receipt := evalledger.takes_quality_receipt_built_v4(NEW.id);
    NEW.cycles_run := (receipt ->> 'cycles_run')::int;
    NEW.verdict := receipt ->> 'verdict';
    NEW.overall_score := (receipt ->> 'overall_score')::numeric;
    NEW.cost_usd := (receipt ->> 'cost_usd')::numeric;
    NEW.receipt_json := receipt;
    RETURN NEW;
END;
$$;


-- work_quality_verdict_admit_v2: an imported snapshot's verdicts are its file's, in its own transaction.

CREATE OR REPLACE FUNCTION evalledger.work_quality_verdict_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    snap evalledger.eval_work_quality_snapshots;
    policy jsonb;
    dims text[];
    decided jsonb;
    relative jsonb;
BEGIN
    SELECT * INTO snap FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.snapshot_id FOR SHARE;
    IF snap.snapshot_id IS NULL
       OR (snap.origin = 'import' AND (snap.created_at <> now() OR NEW.repeat_no <> 1 OR NEW.retry_no <> 0 OR NOT EXISTS (
              SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(snap.snapshot_json #> '{aggregate,verdicts}') = 'array'
                                                      THEN snap.snapshot_json #> '{aggregate,verdicts}' END) v
               WHERE v = NEW.response_json AND v ->> 'model' = NEW.model)))
       OR (snap.origin = 'run' AND (snap.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(snap.created_at, NULL))) THEN
        RAISE EXCEPTION 'evalledger: no open work-quality run % takes verdicts', NEW.snapshot_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'snapshot_id',
                  HINT = 'an imported snapshot''s verdicts come from its file only';
    END IF;
    IF snap.origin = 'run' AND NOT NEW.model = ANY (snap.models) THEN
        RAISE EXCEPTION 'evalledger: model % is not on the panel of snapshot %', NEW.model, NEW.snapshot_id
            USING ERRCODE = 'check_violation', COLUMN = 'model';
    END IF;
    PERFORM evalledger.refuse_supplied_v1('eval_work_quality_judge_verdicts', jsonb_build_object(
        'scores', NEW.scores, 'narrative', NEW.narrative, 'relative_vs_prev', NEW.relative_vs_prev,
        'relative_narrative', NEW.relative_narrative, 'confidence', NEW.confidence));

    -- The family is the provider: the spec's part before the first ':' (ours) or '/' (the seed's).
    NEW.family := substring(NEW.model FROM '^([^:/]*)');
    NEW.same_family := CASE WHEN snap.origin = 'import'
                            THEN coalesce((NEW.response_json ->> 'same_family_as_bot')::boolean, false)
                            ELSE coalesce(NEW.family = snap.bot_family, false) END;
    NEW.created_at := now();

    -- What only the runner can see: the call failed, or the budget did not allow it.
    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;
    NEW.error_message := NULL;

    -- The contribution rule every judged suite shares (all dimensions, numbers, on the scale); a
    -- judge replies flat (the seed's schema), a snapshot file nests them under "scores".
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = snap.rubric_id;
    decided := evalledger.judge_scores_v2(NEW.response_json, policy);
    IF decided ? 'error_kind' THEN
        NEW.contributes := false;
        NEW.error_kind := decided ->> 'error_kind';
        NEW.error_message := decided ->> 'error_message';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'narrative') IS DISTINCT FROM 'string'
       OR btrim(NEW.response_json ->> 'narrative') = '' THEN
        NEW.contributes := false;
        NEW.error_kind := 'off_contract';
        NEW.error_message := 'no narrative';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'confidence') IS DISTINCT FROM 'number'
       OR (NEW.response_json ->> 'confidence')::numeric NOT BETWEEN 0 AND 1 THEN
        NEW.contributes := false;
        NEW.error_kind := 'off_contract';
        NEW.error_message := format('confidence = %s (expected a number from 0 to 1)',
                                    coalesce((NEW.response_json -> 'confidence')::text, 'missing'));
        RETURN NEW;
    END IF;

    NEW.scores := decided -> 'scores';
    NEW.narrative := NEW.response_json ->> 'narrative';
    NEW.confidence := trim_scale((NEW.response_json ->> 'confidence')::numeric);
    IF snap.prev_run_id IS NOT NULL THEN
        -- better/same/worse per dimension, spelled as the seed normalises it; "n/a" and anything
        -- else is left out, and an empty judgement is none.
        dims := ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
                       ORDER BY n);
        relative := CASE WHEN jsonb_typeof(NEW.response_json -> 'relative_vs_prev') = 'object'
                         THEN NEW.response_json -> 'relative_vs_prev' ELSE '{}' END;
        NEW.relative_vs_prev := (
            SELECT jsonb_object_agg(d, lower(btrim(relative ->> d)))
              FROM unnest(dims) d
             WHERE jsonb_typeof(relative -> d) = 'string'
               AND lower(btrim(relative ->> d)) IN ('better', 'same', 'worse'));
        IF jsonb_typeof(NEW.response_json -> 'relative_narrative') = 'string' THEN
            NEW.relative_narrative := NEW.response_json ->> 'relative_narrative';
        END IF;
    END IF;
    NEW.contributes := true;
    RETURN NEW;
END;
$$;


-- replay_run_admit_v1: the closing notice names the run and nothing the caller may not read of it.

CREATE OR REPLACE FUNCTION evalledger.replay_run_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    readable_from timestamptz;
    stale record;
BEGIN
    PERFORM evalledger.require_open_v1('replay run', NEW.completed_at, 'replayed queries');
    PERFORM evalledger.refuse_supplied_v1(
        'replay_run',
        jsonb_build_object('decision', NEW.decision, 'rationale', NEW.rationale, 'summary', NEW.summary,
                           'started_at', NEW.started_at, 'request_sha8', NEW.request_sha8,
                           'scope_sha8', NEW.scope_sha8,
                           'planned', CASE WHEN NEW.source = 'ledger' THEN NEW.planned END));
    NEW.rubric_id := evalledger.rubric_admitted_v2('replay', NEW.rubric_id);
    IF NEW.source = 'ledger' THEN
        IF NEW.until_at > clock_timestamp() THEN
            RAISE EXCEPTION 'evalledger: a replay window ends no later than now, not at %', NEW.until_at
                USING ERRCODE = 'check_violation', COLUMN = 'until_at', CONSTRAINT = 'replay_run_until_not_in_future',
                      HINT = 'take the end of the window from capture_export_bound_v2(), as export does';
        END IF;
        -- What the caller may read of the window, by its tier (caller_reads_v1 asked once, not per row:
        -- everything for an auditor, the hot tier for the runner, nothing else), so the count is one
        -- range of the export index however many rows the window holds.
        readable_from := CASE WHEN evalledger.caller_reads_v1('-infinity', NULL) THEN '-infinity'::timestamptz
                              WHEN evalledger.caller_reads_v1('infinity', NULL) THEN evalledger.hot_tier_start_v1()
                              ELSE 'infinity'::timestamptz END;
        NEW.planned := (SELECT count(*) FROM (
            SELECT 1 FROM evalledger.eval_candidates c
             WHERE c.created_at >= greatest(coalesce(NEW.since_at, '-infinity'), readable_from)
               AND c.created_at < NEW.until_at
               AND (NEW.tool IS NULL OR c.tool_name = NEW.tool) AND (NEW.remote IS NULL OR c.remote = NEW.remote)
             LIMIT NEW.max_rows) w);
    ELSIF NEW.planned IS NULL OR NEW.planned < 0 THEN
        RAISE EXCEPTION 'evalledger: a replay of a file names how many rows it replays (planned)'
            USING ERRCODE = 'not_null_violation', COLUMN = 'planned';
    END IF;
    NEW.request_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.brain_version, NEW.adapter_kind, NEW.adapter, NEW.source, NEW.request)::text,
        'UTF8')), 'hex'), 8);
    NEW.scope_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.source, evalledger.journal_timestamp_v1(NEW.since_at),
                          evalledger.journal_timestamp_v1(NEW.until_at), NEW.tool, NEW.remote, NEW.max_rows,
                          NEW.file_sha256)::text, 'UTF8')), 'hex'), 8);
    -- A run of this request left open past what the caller reads is closed before the new one
    -- starts: a decision (replay_run_decide_v1), so taken under READ COMMITTED only, as every
    -- completion is, and refused here in words about starting rather than deep in the close.
    IF current_setting('transaction_isolation') <> 'read committed' AND EXISTS (
        SELECT 1 FROM evalledger.replay_run r
         WHERE r.request_sha8 = NEW.request_sha8 AND r.completed_at IS NULL
           AND NOT evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: a run of this replay request was left open past the hot tier, and a new run '
                        'closes it first, a decision taken under READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'start the run in a READ COMMITTED transaction, as the runner does';
    END IF;
    FOR stale IN
        UPDATE evalledger.replay_run r SET completed_at = now()
         WHERE r.request_sha8 = NEW.request_sha8 AND r.completed_at IS NULL
           AND NOT evalledger.caller_reads_v1(r.created_at, NULL)
        RETURNING r.replay_run_id
    LOOP
        RAISE NOTICE 'evalledger: replay run % of this request was left open past the hot tier, where no runner can '
                     'resume it: the database closed it and decided it on what it recorded (an auditor reads the '
                     'decision)', stale.replay_run_id;
    END LOOP;
    NEW.started_at := now();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- brain_version_admit_v2: registrations wait on a lock of their own, which no login can take, not on
-- an advisory key any login that knows the prompt could hold.
-- The lock of brain versions' registrations (brain_version_admit_v2): a registration takes it
-- EXCLUSIVE, so two registrations at once (two brains registering two spellings of one prompt)
-- wait for each other and the second, under READ COMMITTED, sees the first. It never holds a row.
-- Only the code role's functions lock it: the auditor and the owner role may read it (as every
-- journalled table: verify reads them all), which takes ACCESS SHARE, the one mode that does not
-- conflict with EXCLUSIVE, and no role holds a privilege that takes another. So no login can stall a
-- registration, as any login that knew a prompt could hold the advisory key once taken on it, and a
-- registration waits for nothing else (a lock on every brain's target row would have waited for
-- every open transaction that had written a run, a hold or any row naming a brain).
CREATE TABLE brain_version_registration (
    nothing boolean,
    CONSTRAINT brain_version_registration_pkey PRIMARY KEY (nothing),
    CONSTRAINT brain_version_registration_holds_no_rows CHECK (false)
);

CREATE POLICY brain_version_registration_auditor ON brain_version_registration FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_version_registration TO evalledger_auditor;

CREATE OR REPLACE FUNCTION evalledger.brain_version_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    normal varchar;
    other varchar;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_version', jsonb_build_object(
        'version', NEW.version, 'system_prompt_hash', NEW.system_prompt_hash));
    -- Locking the target serialises two versions of one brain added at once.
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.target_id AND t.kind = 'brain' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: % is not a registered brain', NEW.target_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'target_id',
                  CONSTRAINT = 'brain_version_target_fkey';
    END IF;
    NEW.version := coalesce((SELECT max(v.version) FROM evalledger.brain_version v
                              WHERE v.target_id = NEW.target_id), 0) + 1;
    NEW.system_prompt_hash := encode(sha256(convert_to(NEW.system_prompt, 'UTF8')), 'hex');
    normal := evalledger.prompt_normal_hash_v1(NEW.system_prompt);
    PERFORM evalledger.require_read_committed_v2('a brain version''s registration (one prompt per spelling)');
    LOCK TABLE evalledger.brain_version_registration IN EXCLUSIVE MODE;
    SELECT v.target_id INTO other FROM evalledger.brain_version v
     WHERE evalledger.prompt_normal_hash_v1(v.system_prompt) = normal
       AND v.target_id <> NEW.target_id AND v.system_prompt_hash <> NEW.system_prompt_hash
     ORDER BY v.target_id LIMIT 1;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: %''s system prompt is %''s spelt differently (the same once normalised)',
                NEW.target_id, other
            USING ERRCODE = 'check_violation', COLUMN = 'system_prompt',
                  CONSTRAINT = 'brain_version_one_spelling_per_prompt',
                  HINT = format('register %s''s exact text to share the prompt, or a prompt of its own', other);
    END IF;
    NEW.levers := ARRAY(SELECT DISTINCT l FROM unnest(NEW.levers) AS l ORDER BY l);
    PERFORM evalledger.brain_prompt_claim_v1(NEW.target_id, NEW.system_prompt_hash, 'version');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- The new table sealed and journalled as every table is (it never holds a row to journal).
CALL seal_tables_v2();
CALL journal_attach_v2();
