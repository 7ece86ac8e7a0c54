-- No lock a role may take stalls a writer for longer than a timeout (issue 37, item 4). Creating a
-- capture partition takes ACCESS EXCLUSIVE on eval_candidates: a reader's open transaction made
-- capture_ensure_partitions_v2 wait, and every later read and capture queued behind it. It now waits
-- at most 100 ms each time (a month ahead is left to a later writer; this month's is tried again
-- after a pause that lets the queue through). The purge queued behind the owner role's ROW EXCLUSIVE
-- on legal_hold (its INSERT grant allows that LOCK) for as long as that transaction stayed open: it
-- now waits 5 seconds and stops naming the holder, and leaves a partition whose DROP would wait
-- behind a reader to the next purge. Both functions change in place (same signatures and grants):
-- no role may do or read anything it could not before.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- capture_ensure_partitions_v2: create the monthly (UTC) partitions of eval_candidates from this month to months_ahead months on (capture_make_partition_v2 each); returns how many it made.
-- Creating a partition takes ACCESS EXCLUSIVE on eval_candidates, and a lock that waits queues every
-- later reader and writer behind it: one reader's open transaction would stall every capture and
-- read. So it waits at most lock_timeout for it, each time: a month ahead that cannot be made now is
-- left to a later writer (it stops there); this month's, which the writer's rows need, is tried again
-- after a pause that lets the queue through, and after 50 tries refused naming who holds the table.
CREATE OR REPLACE FUNCTION evalledger.capture_ensure_partitions_v2(months_ahead integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '100ms' AS $$
DECLARE
    this_month date := date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')::date;
    month date;
    made integer := 0;
    tries integer;
    holders text;
BEGIN
    IF months_ahead IS NULL OR months_ahead NOT BETWEEN 0 AND 24 THEN
        RAISE EXCEPTION 'evalledger: months_ahead must be between 0 and 24, not %', months_ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Two writers starting at once would otherwise both try to create the same partition. SHARE UPDATE
    -- EXCLUSIVE conflicts with itself, not with the writers' ROW EXCLUSIVE; it is a lock on a table of
    -- the code role's, so no login can hold it to stall the writers (an advisory key anyone could).
    -- Waiting for it stalls no one else, so it is waited for as long as the other maker takes.
    PERFORM pg_catalog.set_config('lock_timeout', '0', true);
    LOCK TABLE evalledger.capture_window IN SHARE UPDATE EXCLUSIVE MODE;
    PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
    FOR month IN
        SELECT generate_series(this_month, this_month + make_interval(months => months_ahead), interval '1 month')::date
    LOOP
        tries := 0;
        LOOP
            BEGIN
                IF evalledger.capture_make_partition_v2(month) THEN
                    made := made + 1;
                END IF;
                EXIT;
            EXCEPTION WHEN lock_not_available THEN
                IF month > this_month THEN
                    RETURN made;
                END IF;
                tries := tries + 1;
                IF tries >= 50 THEN
                    SELECT string_agg(DISTINCT a.usename::text, ', ') INTO holders
                      FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
                     WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
                       AND l.relation = 'evalledger.eval_candidates'::regclass;
                    RAISE EXCEPTION 'evalledger: the capture partition of % is not made: % holds eval_candidates in an open transaction',
                            to_char(month, 'YYYY-MM'), coalesce(holders, 'another session')
                        USING ERRCODE = 'lock_not_available';
                END IF;
                PERFORM pg_catalog.pg_sleep(0.1);
            END;
        END LOOP;
    END LOOP;
    RETURN made;
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
                                  'brain_eval_suggestion_shown', 'brain_eval_run_review', 'brain_eval_question_score',
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

RESET ROLE;
