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
-- so in a notice that names the run (for an auditor to read) and nothing the caller may not read of
-- it (its start, its decision); a caller who reads it resumes it instead. A run closed unfinished no longer holds
-- its window's identity (replay_run_identity_key), so the same file or window can be replayed anew.
CREATE FUNCTION evalledger.replay_run_admit_v1() RETURNS trigger
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

CREATE TRIGGER replay_run_10_admit BEFORE INSERT ON replay_run
    FOR EACH ROW EXECUTE FUNCTION replay_run_admit_v1();
