-- A replay run still open when the retention purge takes captured rows of its window (issue 40):
-- before a capture partition goes, the purge records, for every open replay run over it, each
-- captured row of the month the run planned and has not replayed, as a replay_query row of outcome
-- and status capture_purged (its captured fields copied as for any ledger row, so the evidence it
-- would have been measured against is kept). The run is then whole and completes; its decision
-- never passes on rows it never asked: replay_decision_v1 decides inconclusive (fail when what was
-- replayed fails anyway), counting and naming those rows in the rationale and the summary
-- (capture_purged). Only the purge writes that outcome (its marker); a runner's insert that waited
-- for the purge's lock and finds its captured row gone and recorded by the purge is skipped, at
-- read committed, as a row recorded already. The shares of the rubric are of the queries asked; a
-- run without such rows decides and reads exactly as before. The admission asks whether the
-- caller reads the run and the captured row once, not twice (a tenth of its cost per replayed
-- query), refusing exactly what it refused.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The new outcome and status: the constraints swapped under their names (the drop guard off for
-- the swap, as 0131 does, and on again).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE replay_query
    DROP CONSTRAINT replay_query_outcome_known,
    ADD CONSTRAINT replay_query_outcome_known CHECK (outcome IN ('answered', 'declined', 'adapter_failed', 'capture_purged')),
    DROP CONSTRAINT replay_query_status_known,
    ADD CONSTRAINT replay_query_status_known CHECK (status IN ('replayed', 'not_replayable', 'adapter_failed', 'capture_purged'));

RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- replay_query_admit_v1: one replayed query of an open replay run the caller may read. For a ledger
-- window the captured fields are the database's: copied from the captured row (capture_id at
-- capture_created_at), which must be one of the run's window, tool and callers; supplied, they are
-- refused. For a file the runner supplies them as the file has them. The runner says what the
-- adapter did (outcome); the database decides the status: an answer in the captured mode is
-- replayed (vector_enabled as captured: a row captured keyword-only is replayed keyword-only), an
-- answer in another mode or a decline is not replayable, and a failure is an adapter failure; a
-- replayed query's recall, jaccard, rbo (with the rubric's rbo_p), sources gained and lost and
-- latency ratio (NULL when the captured latency was 0) are computed here, unrounded, and refused
-- when supplied. The tier clock is the run's recording time. Outcome capture_purged is the
-- retention purge's alone (its marker, capture_purging_v1): a captured row of an open run's window
-- the run has not replayed, recorded with its captured fields just before the purge drops its
-- month, so the run can still be completed and decided, never passing on it (replay_decision_v1);
-- a run completed meanwhile needs no such row (skipped). A runner's row whose captured row the
-- purge took while the runner waited for it is skipped when the purge recorded that row already.
CREATE OR REPLACE FUNCTION evalledger.replay_query_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.replay_run;
    cap evalledger.eval_candidates;
    purged boolean := NEW.outcome = 'capture_purged';
    readable boolean;
BEGIN
    -- FOR SHARE, as takes_quality_verdict_admit_v2: a completion waits for this row, or this row for
    -- the completion (and then sees it), so no query lands after the decision.
    SELECT * INTO run FROM evalledger.replay_run r WHERE r.replay_run_id = NEW.replay_run_id FOR SHARE;
    IF purged THEN
        IF NOT evalledger.capture_purging_v1() OR run.source IS DISTINCT FROM 'ledger' THEN
            RAISE EXCEPTION 'evalledger: only the retention purge records a captured row it takes (outcome capture_purged)'
                USING ERRCODE = 'insufficient_privilege', COLUMN = 'outcome';
        END IF;
        IF run.completed_at IS NOT NULL THEN
            RETURN NULL;  -- completed whole meanwhile: nothing of it is missing
        END IF;
    END IF;
    -- Whether the caller may read the run and (a ledger window's) captured row, asked once: what a
    -- caller reads of a clock it reads of every later one (a tier is a lower bound), so the older of
    -- the two answers for both; only when it does not is each asked again, for its own refusal.
    readable := purged OR evalledger.caller_reads_v1(
        least(run.created_at, CASE WHEN run.source = 'ledger' THEN NEW.capture_created_at END), NULL);
    IF run.replay_run_id IS NULL OR run.completed_at IS NOT NULL
       OR NOT (readable OR evalledger.caller_reads_v1(run.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no open replay run % takes replayed queries', NEW.replay_run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'replay_run_id';
    END IF;
    PERFORM evalledger.refuse_supplied_v1(
        'replay_query',
        jsonb_build_object('status', NEW.status, 'recall', NEW.recall, 'jaccard', NEW.jaccard, 'rbo', NEW.rbo,
                           'sources_gained', NEW.sources_gained, 'sources_lost', NEW.sources_lost,
                           'latency_ratio', NEW.latency_ratio));
    IF run.source = 'ledger' THEN
        PERFORM evalledger.refuse_supplied_v1(
            'replay_query',
            jsonb_build_object('tool_name', NEW.tool_name, 'captured_slugs', NEW.captured_slugs,
                               'captured_chunk_ids', NEW.captured_chunk_ids,
                               'captured_source_ids', NEW.captured_source_ids,
                               'captured_vector_enabled', NEW.captured_vector_enabled,
                               'captured_expand_enabled', NEW.captured_expand_enabled,
                               'captured_detail', NEW.captured_detail,
                               'captured_latency_ms', NEW.captured_latency_ms));
        SELECT * INTO cap FROM evalledger.eval_candidates c
         WHERE c.created_at = NEW.capture_created_at AND c.id = NEW.capture_id
           AND (run.since_at IS NULL OR c.created_at >= run.since_at) AND c.created_at < run.until_at
           AND (run.tool IS NULL OR c.tool_name = run.tool) AND (run.remote IS NULL OR c.remote = run.remote)
           AND (readable OR evalledger.caller_reads_v1(c.created_at, NULL));
        IF cap.id IS NULL THEN
            -- The purge took it while this insert waited for its lock, and recorded it for the run.
            IF EXISTS (SELECT 1 FROM evalledger.replay_query q
                        WHERE q.replay_run_id = NEW.replay_run_id AND q.capture_id = NEW.capture_id
                          AND q.status = 'capture_purged') THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION 'evalledger: captured row % (at %) is not one of replay run %''s window',
                    NEW.capture_id, NEW.capture_created_at, NEW.replay_run_id
                USING ERRCODE = 'foreign_key_violation', COLUMN = 'capture_id';
        END IF;
        NEW.tool_name := cap.tool_name;
        NEW.captured_slugs := cap.retrieved_slugs;
        NEW.captured_chunk_ids := cap.retrieved_chunk_ids;
        NEW.captured_source_ids := cap.source_ids;
        NEW.captured_vector_enabled := cap.vector_enabled;
        NEW.captured_expand_enabled := cap.expand_enabled;
        NEW.captured_detail := cap.detail;
        NEW.captured_latency_ms := cap.latency_ms;
    END IF;

    NEW.status := CASE WHEN purged THEN 'capture_purged'
                       WHEN NEW.outcome = 'adapter_failed' THEN 'adapter_failed'
                       WHEN NEW.outcome = 'answered' AND NEW.vector_enabled = NEW.captured_vector_enabled THEN 'replayed'
                       ELSE 'not_replayable' END;
    IF NEW.outcome = 'answered' AND NEW.status = 'not_replayable' THEN
        NEW.error := coalesce(NEW.error, format('answered with vector_enabled %s, captured %s: another mode, not counted',
                                                NEW.vector_enabled::text, NEW.captured_vector_enabled::text));
    END IF;
    IF NEW.status = 'replayed' THEN
        NEW.recall := evalledger.replay_recall_v1(NEW.captured_slugs, NEW.retrieved_slugs);
        NEW.jaccard := evalledger.replay_jaccard_v1(NEW.captured_slugs, NEW.retrieved_slugs);
        NEW.rbo := evalledger.replay_rbo_v1(NEW.captured_chunk_ids, NEW.retrieved_chunk_ids,
                                            (SELECT (r.definition ->> 'rbo_p')::numeric FROM evalledger.rubric r
                                              WHERE r.rubric_id = run.rubric_id));
        NEW.sources_gained := ARRAY(SELECT DISTINCT s COLLATE "C" FROM unnest(NEW.source_ids) s
                                     WHERE s <> ALL (NEW.captured_source_ids) ORDER BY 1);
        NEW.sources_lost := ARRAY(SELECT DISTINCT s COLLATE "C" FROM unnest(NEW.captured_source_ids) s
                                   WHERE s <> ALL (NEW.source_ids) ORDER BY 1);
        NEW.latency_ratio := CASE WHEN NEW.captured_latency_ms > 0
                                  THEN NEW.latency_ms::numeric / NEW.captured_latency_ms::numeric END;
    END IF;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

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
-- queries asked: the shares above are of the others. Figures are stored unrounded; the rationale
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

    failing := f.asked > 0 AND f.adapter_failed::numeric / f.asked > (rule ->> 'adapter_failed_share_at_most')::numeric;
    need := greatest(need, ceil(share * f.asked));
    IF NOT failing AND f.replayed < need THEN
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
                ELSE '{}'::jsonb END;
END;
$$;

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
-- transaction, and so queue every capture and read behind it, is left to the next purge. Before a
-- partition goes, every replay run still open over it gets a capture_purged row for each captured
-- row of the month it planned and has not replayed (never a pass: replay_decision_v1).
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
                                  'brain_eval_run_uncertainty', 'brain_eval_question_score',
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

    -- Gate decisions, each by its own clock as it falls due, never while the takes-quality run it decided
    -- about stays (retention_gate_pinned_v1); before the runs, so a hold of the run's brain still reaches it.
    WITH gone AS (
        DELETE FROM evalledger.eval_gate_decision g
         WHERE g.created_at < horizon
           AND NOT evalledger.retention_held_v2(
                   g.created_at,
                   ARRAY(SELECT t.target_id::text FROM evalledger.eval_takes_quality_runs t WHERE t.id = g.run_id), NULL)
           AND NOT evalledger.retention_gate_pinned_v1(g.run_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_gate_decision', count(*) FROM gone HAVING count(*) > 0;

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
            -- Open replay runs first: with no reader of the captured rows left (the DROP's lock, taken
            -- now), each captured row of this month a run planned and has not replayed is recorded
            -- for it as purged (replay_query_admit_v1 copies its captured fields), so the run is
            -- still completed whole, and decided without passing on it (replay_decision_v1). What a
            -- run planned is the newest `planned` rows of its window (the rows its role could read,
            -- at most max_rows: newest first, as the runner asks them), less those purged before.
            LOCK TABLE evalledger.eval_candidates IN ACCESS EXCLUSIVE MODE;
            INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, outcome, error)
            SELECT r.replay_run_id, w.id, w.created_at, 'capture_purged',
                   format('captured row purged by retention (%s) before the run replayed it', part.name)
              FROM evalledger.replay_run r
             CROSS JOIN LATERAL (
                    SELECT c.id, c.created_at, c.tableoid FROM evalledger.eval_candidates c
                     WHERE (r.since_at IS NULL OR c.created_at >= r.since_at) AND c.created_at < r.until_at
                       AND (r.tool IS NULL OR c.tool_name = r.tool) AND (r.remote IS NULL OR c.remote = r.remote)
                     ORDER BY c.created_at DESC, c.id DESC
                     LIMIT greatest(r.planned - (SELECT count(*) FROM evalledger.replay_query p
                                                  WHERE p.replay_run_id = r.replay_run_id
                                                    AND p.status = 'capture_purged'), 0)) w
             WHERE r.source = 'ledger' AND r.completed_at IS NULL
               AND w.tableoid = ('evalledger.' || quote_ident(part.name))::regclass
               AND NOT EXISTS (SELECT 1 FROM evalledger.replay_query q
                                WHERE q.replay_run_id = r.replay_run_id AND q.capture_id = w.id)
             ORDER BY r.replay_run_id, w.created_at, w.id;
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

RESET ROLE;
