-- retention_purge_v2: the one way rows leave the ledger (seed 002: hard delete past 7 years,
-- subject to legal hold). Deletes, in foreign-key order, every row whose tier clock is past the
-- purge horizon and that no unreleased hold covers: brain-eval runs with their judge suggestions,
-- harness answers, review entries, suggestions shown, run reviews, question rows, harness runs and
-- released holds;
-- analyses and imports no row references any more; takes-quality verdicts, stored uncertainty then runs; work-quality
-- verdicts, stored uncertainty then snapshots (a snapshot a kept one builds on stays); replay queries then runs;
-- captured-query partitions whose
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
CREATE FUNCTION evalledger.retention_purge_v2()
RETURNS TABLE (purged_table text, purged_rows bigint, purged_run uuid, purged_partition text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET lock_timeout = '5s' AS $$
DECLARE
    horizon timestamptz := evalledger.purge_horizon_at_v1();
    runs uuid[];
    tq_runs bigint[];
    snapshots bigint[];
    replays bigint[];
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
                                  'brain_eval_run_uncertainty', 'brain_eval_trend', 'brain_eval_question_score',
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

    -- takes-quality: verdicts, the stored uncertainty, then runs
    SELECT coalesce(array_agg(t.id), '{}') INTO tq_runs
      FROM evalledger.eval_takes_quality_runs t
     WHERE t.created_at < horizon AND NOT evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL);
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_run_uncertainty u WHERE u.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_run_uncertainty', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_runs t WHERE t.id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_runs', count(*) FROM gone HAVING count(*) > 0;

    -- work-quality: verdicts, the stored uncertainty, then snapshots, each as it falls due: a snapshot that a kept one
    -- compared with does not pin it (the kept one names its run and keeps the comparison).
    SELECT coalesce(array_agg(s.snapshot_id), '{}') INTO snapshots
      FROM evalledger.eval_work_quality_snapshots s
     WHERE s.created_at < horizon AND NOT evalledger.retention_held_v2(s.created_at, NULL, NULL);
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshot_uncertainty u
                   WHERE u.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshot_uncertainty', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshots', count(*) FROM gone HAVING count(*) > 0;

    -- replay: each run with its queries as the run falls due (their tier clock is the run's
    -- recording time; a hold on the brain version's label, or a range holding that time, keeps both).
    SELECT coalesce(array_agg(r.replay_run_id), '{}') INTO replays
      FROM evalledger.replay_run r
     WHERE r.created_at < horizon AND NOT evalledger.retention_held_v2(r.created_at, ARRAY[r.brain_version], NULL);
    WITH gone AS (DELETE FROM evalledger.replay_query q WHERE q.replay_run_id = ANY (replays) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'replay_query', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.replay_run r WHERE r.replay_run_id = ANY (replays) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'replay_run', count(*) FROM gone HAVING count(*) > 0;

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
