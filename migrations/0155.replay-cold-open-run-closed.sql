-- A runner's replay run left open past the hot tier (issue 40): the runner can no longer read it,
-- so it can neither resume it nor, while it stays open, start another run of the same request (one
-- open run per request): it was stuck until the run's purge, seven years on. Now a new run of the
-- same request closes such a run first (replay_run_admit_v1, with a notice that says so): it is
-- completed unfinished, which its completion admits only for a caller who cannot read the run
-- (replay_run_decide_v1; whoever reads a run resumes it and completes it whole, as before), and
-- decided inconclusive by replay_decision_v1, whose rationale counts what it recorded of its plan and
-- says why (the summary counts the rest as unrecorded). A run completed whole decides as before, so
-- every stored decision recomputes unchanged.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- replay_decision_v1: a replay run's decision, its rationale and the figures they rest on, from its
-- stored query rows and its rubric (data): fail when more than pass_rule.adapter_failed_share_at_most
-- of the queries asked failed in the adapter; else inconclusive when fewer queries were replayed in
-- their captured mode than min_replayable, or than min_replayable_share of those asked (a brain
-- that declines or answers in another mode is not measured, and does not pass by it); else fail
-- when the mean recall is below mean_recall_at_least, when any query's recall is below
-- every_recall_at_least (the lowest named, by capture id, up to ten), or when the p95 of the
-- replayed latencies is more than p95_latency_ratio_at_most times the p95 of their captured
-- latencies (percentile_cont; not compared when the captured p95 is 0 ms); else inconclusive when
-- the retention purge took captured rows of the run before they were replayed (status
-- capture_purged: missing evidence never counts as met; counted and named, the lowest ten capture
-- ids, in every rationale and in the summary as capture_purged); pass otherwise. Those rows are not
-- queries asked: the shares above are of the others. Before all of these, a run closed unfinished
-- (fewer rows recorded than it planned: only a run left open past the hot tier, closed when a new
-- run of its request started, replay_run_admit_v1) is inconclusive, the rationale counting what it
-- recorded of its plan and saying why (the summary counts the rest as unrecorded). Figures are stored unrounded; the rationale
-- shows them to three decimals. The decision trigger (replay_run_decide_v1) calls it, and so does
-- the ledger's recompute.
CREATE OR REPLACE FUNCTION evalledger.replay_decision_v1(run evalledger.replay_run) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rule jsonb;
    need numeric;
    share numeric;
    failing boolean;
    f record;
    low text;
    reasons text[] := '{}';
    decision text;
    rationale text;
    purged text;
    unrecorded bigint;
BEGIN
    SELECT r.definition -> 'pass_rule', (r.definition ->> 'min_replayable')::numeric,
           (r.definition ->> 'min_replayable_share')::numeric INTO rule, need, share
      FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT count(*) FILTER (WHERE q.status <> 'capture_purged') AS asked,
           count(*) FILTER (WHERE q.status = 'capture_purged') AS capture_purged,
           count(*) FILTER (WHERE q.status = 'replayed') AS replayed,
           count(*) FILTER (WHERE q.status = 'not_replayable') AS not_replayable,
           count(*) FILTER (WHERE q.status = 'adapter_failed') AS adapter_failed,
           avg(q.recall) AS mean_recall,
           min(q.recall) AS min_recall,
           avg(q.jaccard) AS mean_jaccard,
           avg(q.rbo) AS mean_rbo,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.latency_ms) FILTER (WHERE q.status = 'replayed') AS p95_ms,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.captured_latency_ms)
               FILTER (WHERE q.status = 'replayed') AS captured_p95_ms,
           count(*) FILTER (WHERE cardinality(q.sources_lost) > 0) AS losing_a_source
      INTO f
      FROM evalledger.replay_query q WHERE q.replay_run_id = run.replay_run_id;
    IF f.capture_purged > 0 THEN
        SELECT format('%s captured %s the run planned %s purged by retention before %s replayed (%s)',
                      count(*), CASE WHEN count(*) = 1 THEN 'row' ELSE 'rows' END,
                      CASE WHEN count(*) = 1 THEN 'was' ELSE 'were' END,
                      CASE WHEN count(*) = 1 THEN 'it was' ELSE 'they were' END,
                      string_agg('capture ' || x.capture_id, ', ' ORDER BY x.capture_id) FILTER (WHERE x.n <= 10)
                      || CASE WHEN count(*) > 10 THEN format(' and %s more', count(*) - 10) ELSE '' END)
          INTO purged
          FROM (SELECT q.capture_id, row_number() OVER (ORDER BY q.capture_id) AS n
                  FROM evalledger.replay_query q
                 WHERE q.replay_run_id = run.replay_run_id AND q.status = 'capture_purged') x;
    END IF;

    unrecorded := run.planned - f.asked - f.capture_purged;
    failing := f.asked > 0 AND f.adapter_failed::numeric / f.asked > (rule ->> 'adapter_failed_share_at_most')::numeric;
    need := greatest(need, ceil(share * f.asked));
    IF unrecorded > 0 THEN
        decision := 'inconclusive';
        rationale := format('Inconclusive: closed unfinished, %s of the %s captured rows it planned recorded (%s '
                            'replayed in their captured mode): the run was left open past the hot tier, where no '
                            'runner can resume it, and a new run of the same request closed it.',
                            f.asked + f.capture_purged, run.planned, f.replayed);
    ELSIF NOT failing AND f.replayed < need THEN
        decision := 'inconclusive';
        rationale := format('Inconclusive: %s of %s queries replayed in their captured mode, at least %s needed '
                            '(%s not replayable, %s adapter failures).',
                            f.replayed, f.asked, need, f.not_replayable, f.adapter_failed);
        IF purged IS NOT NULL THEN
            rationale := rationale || format(' %s.', purged);
        END IF;
    ELSE
        IF f.mean_recall < (rule ->> 'mean_recall_at_least')::numeric THEN
            reasons := reasons || format('mean recall %s below %s', round(f.mean_recall, 3),
                                         rule ->> 'mean_recall_at_least');
        END IF;
        SELECT format('%s %s below %s: %s', count(*), CASE WHEN count(*) = 1 THEN 'query' ELSE 'queries' END,
                      rule ->> 'every_recall_at_least',
                      string_agg(format('capture %s (recall %s)', x.capture_id, round(x.recall, 3)), ', '
                                 ORDER BY x.recall, x.capture_id) FILTER (WHERE x.n <= 10)
                      || CASE WHEN count(*) > 10 THEN format(' and %s more', count(*) - 10) ELSE '' END)
          INTO low
          FROM (SELECT q.capture_id, q.recall, row_number() OVER (ORDER BY q.recall, q.capture_id) AS n
                  FROM evalledger.replay_query q
                 WHERE q.replay_run_id = run.replay_run_id AND q.status = 'replayed'
                   AND q.recall < (rule ->> 'every_recall_at_least')::numeric) x
        HAVING count(*) > 0;
        IF low IS NOT NULL THEN
            reasons := reasons || low;
        END IF;
        IF f.captured_p95_ms > 0
           AND f.p95_ms::numeric / f.captured_p95_ms::numeric > (rule ->> 'p95_latency_ratio_at_most')::numeric THEN
            reasons := reasons || format('p95 latency %sx the captured, above %sx',
                                         round(f.p95_ms::numeric / f.captured_p95_ms::numeric, 3),
                                         rule ->> 'p95_latency_ratio_at_most');
        END IF;
        IF failing THEN
            reasons := reasons || format('%s of %s queries failed in the adapter, above a share of %s',
                                         f.adapter_failed, f.asked, rule ->> 'adapter_failed_share_at_most');
        END IF;
        IF cardinality(reasons) > 0 THEN
            decision := 'fail';
            rationale := 'Fail: ' || array_to_string(reasons, '; ') || '.';
            IF purged IS NOT NULL THEN
                rationale := rationale || format(' %s.', purged);
            END IF;
        ELSIF purged IS NOT NULL THEN
            decision := 'inconclusive';
            rationale := format('Inconclusive: %s, and missing evidence never counts as met; the %s replayed '
                                'queries alone would pass (mean recall %s, lowest %s).',
                                purged, f.replayed, round(f.mean_recall, 3), round(f.min_recall, 3));
        ELSE
            decision := 'pass';
            rationale := format('Pass: mean recall %s over %s replayed queries, lowest %s; p95 latency %s.',
                                round(f.mean_recall, 3), f.replayed, round(f.min_recall, 3),
                                CASE WHEN f.captured_p95_ms > 0
                                     THEN round(f.p95_ms::numeric / f.captured_p95_ms::numeric, 3) || 'x the captured'
                                     ELSE 'not compared (captured p95 0 ms)' END);
        END IF;
        IF f.not_replayable + f.adapter_failed > 0 THEN
            rationale := rationale || format(' %s not replayable, %s adapter failures.', f.not_replayable,
                                             f.adapter_failed);
        END IF;
    END IF;
    RETURN jsonb_build_object(
        'decision', decision, 'rationale', rationale, 'asked', f.asked, 'replayed', f.replayed,
        'not_replayable', f.not_replayable, 'adapter_failed', f.adapter_failed,
        'mean_recall', f.mean_recall, 'min_recall', f.min_recall, 'mean_jaccard', f.mean_jaccard,
        'mean_rbo', f.mean_rbo, 'p95_latency_ms', f.p95_ms, 'captured_p95_latency_ms', f.captured_p95_ms,
        'p95_latency_ratio', CASE WHEN f.captured_p95_ms > 0 THEN f.p95_ms::numeric / f.captured_p95_ms::numeric END,
        'queries_losing_a_source', f.losing_a_source)
        || CASE WHEN f.capture_purged > 0 THEN jsonb_build_object('capture_purged', f.capture_purged)
                ELSE '{}'::jsonb END
        || CASE WHEN unrecorded > 0 THEN jsonb_build_object('unrecorded', unrecorded) ELSE '{}'::jsonb END;
END;
$$;

-- replay_run_decide_v1: at completion (which complete_once_v1 admits first), every captured row the
-- run planned must have its replayed row; the database then writes what it decided from them and
-- the run's rubric (replay_decision_v1): the decision, its rationale and the summary it rests on.
-- One completion needs no whole run: one its caller cannot read (a run left open past the hot tier,
-- closed by the admission of a new run of the same request, replay_run_admit_v1: no runner could
-- ever finish it), which replay_decision_v1 decides inconclusive. Whoever can read a run (and so
-- resume it) completes it whole.
CREATE OR REPLACE FUNCTION evalledger.replay_run_decide_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    asked bigint;
    decided jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('replay run');
    asked := (SELECT count(*) FROM evalledger.replay_query q WHERE q.replay_run_id = NEW.replay_run_id);
    IF asked < NEW.planned AND evalledger.caller_reads_v1(NEW.created_at, NULL) THEN
        RAISE EXCEPTION 'evalledger: replay run % is not whole: % of % captured rows replayed',
                NEW.replay_run_id, asked, NEW.planned
            USING ERRCODE = 'check_violation', CONSTRAINT = 'replay_run_complete_run_is_whole',
                  HINT = 'running the same replay again asks only the rows not replayed yet';
    END IF;
    decided := evalledger.replay_decision_v1(NEW);
    NEW.decision := decided ->> 'decision';
    NEW.rationale := decided ->> 'rationale';
    NEW.summary := decided;
    RETURN NEW;
END;
$$;

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
-- is closed first, unfinished (replay_run_decide_v1; replay_decision_v1 decides it inconclusive and
-- says why), and the caller told so in a notice; a caller who reads it resumes it instead.
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
    FOR stale IN
        UPDATE evalledger.replay_run r SET completed_at = now()
         WHERE r.request_sha8 = NEW.request_sha8 AND r.completed_at IS NULL
           AND NOT evalledger.caller_reads_v1(r.created_at, NULL)
        RETURNING r.replay_run_id, r.created_at
    LOOP
        RAISE NOTICE 'evalledger: replay run % of this request, started %, was left open past the hot tier, where '
                     'no runner can resume it: closed unfinished and decided inconclusive; a new run starts',
                     stale.replay_run_id, to_char(stale.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"');
    END LOOP;
    NEW.scope_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.source, evalledger.journal_timestamp_v1(NEW.since_at),
                          evalledger.journal_timestamp_v1(NEW.until_at), NEW.tool, NEW.remote, NEW.max_rows,
                          NEW.file_sha256)::text, 'UTF8')), 'hex'), 8);
    NEW.started_at := now();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

RESET ROLE;
