-- Replay runs: a run closed unfinished gives its window's identity up, the closing start speaks of
-- itself, and the replay decision's figures no longer follow the writer's extra_float_digits (issue 40;
-- found by reading 0155 as a careful insider).
--
-- 0155 let a new run of a request close the run the runner had left open past the hot tier. But the
-- runner starts a run with ON CONFLICT DO NOTHING, and a replay of the same file (or of a window
-- with both ends given) resolves to the same identity (replay_run_identity_key: brain version,
-- adapter, scope, rubric) as the run it closed: the insert met that key, did nothing, and the
-- runner said the window could not be read back, the stale run closed and no new run started. A run
-- closed unfinished (its summary counts what it left unrecorded) now no longer holds the identity:
-- the key becomes a unique index of the runs that do, and the same file is replayed anew.
--
-- A start under REPEATABLE READ or SERIALIZABLE that would close such a run was refused by the
-- close's decision, in words about completing a run; it is now refused by the admission, in words
-- about starting one (a decision is taken under READ COMMITTED, as every completion is). The close's
-- notice says what the closed run was decided, and no longer promises a new run it cannot promise.
--
-- replay_decision_v1 turned two float8 figures (the replayed and captured p95 latencies) into jsonb
-- numbers, whose digits follow the session's extra_float_digits, which any role may SET: a runner at
-- -15 stored them cut to one digit, and an auditor at 0 had `ledger verify --recompute` name every
-- honest run. It now runs with extra_float_digits = 1 (as 0156 did for the statistics), and so does
-- ledger_recompute_v3, so what the recompute renders of a stored float8 column never depends on the
-- reader's session either.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

ALTER FUNCTION evalledger.replay_decision_v1(evalledger.replay_run) SET extra_float_digits = 1;
ALTER FUNCTION evalledger.ledger_recompute_v3() SET extra_float_digits = 1;

-- replay_run_admit_v1: a replay run starts open, now by the database's clock, under an activated
-- replay rubric that passes today's check (rubric_admitted_v2). The database fingerprints what was
-- asked (request_sha8: the brain version, the adapter and the request as typed) and what it
-- resolved to (scope_sha8: the window or the file's digest, and the filters). A ledger window ends
-- no later than now (the runner takes its end from capture_export_bound_v2, so every row stamped
-- before it is committed and visible) and the database counts what it replays itself: the rows of
-- [since_at, until_at) of the tool and callers asked for that the caller may read, at most
-- max_rows (planned); a file's rows are counted by the runner, which read them. A run of the same
-- request still open but past what the caller reads (a runner's run left open past the hot tier:
-- it can neither read nor resume it, and the one open run per request would refuse every new one)
-- is closed first (replay_run_decide_v1; replay_decision_v1 decides it inconclusive and says why when
-- it recorded less than it planned), under READ COMMITTED as every decision is, and the caller told
-- so in a notice; a caller who reads it resumes it instead. A run closed unfinished no longer holds
-- its window's identity (replay_run_identity_key), so the same file or window can be replayed anew.
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
        RETURNING r.replay_run_id, r.created_at, r.decision, r.summary ? 'unrecorded' AS unfinished
    LOOP
        RAISE NOTICE 'evalledger: replay run % of this request, started %, was left open past the hot tier, where '
                     'no runner can resume it: %', stale.replay_run_id,
                     to_char(stale.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'),
                     CASE WHEN stale.unfinished THEN 'closed unfinished and decided inconclusive'
                          ELSE format('closed, every row it planned recorded, and decided %s', stale.decision) END;
    END LOOP;
    NEW.started_at := now();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- The identity key, a constraint until now, becomes a unique index of the runs that hold an
-- identity: the drop guard is turned off for the swap and on again (as 0104 does).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE evalledger.replay_run DROP CONSTRAINT replay_run_identity_key;
-- One run per identity (brain version, adapter, resolved window or file, rubric): the same window
-- replayed again reads its run back. A run closed unfinished (left open past the hot tier and closed
-- by a new run of its request: replay_run_admit_v1; its summary counts what it left unrecorded) no
-- longer holds it, so the same file or window can be replayed anew.
CREATE UNIQUE INDEX replay_run_identity_key ON evalledger.replay_run
    (brain_version, adapter_kind, adapter, scope_sha8, rubric_id)
    WHERE NOT coalesce(summary ? 'unrecorded', false);

RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
