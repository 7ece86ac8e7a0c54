-- replay_capture_purged_rows_v1: the replay runs over the ledger's captured rows whose replayed
-- queries outlived those rows. A replayed query keeps every captured field it was measured against
-- (replay_query's captured_* columns, copied at insert), so when the retention purge drops the
-- captured rows' monthly partition the replay stays whole evidence: nothing references the
-- captured rows (no foreign key a DROP would fail on or cascade through), and its measures, the
-- run's decision and their journal entries are unchanged. What it no longer has is the captured
-- row itself (the query text): this says so, per run, instead of leaving a capture id that points
-- at nothing. Per run (of source 'ledger') with at least one such query: how many queries it
-- recorded, how many of their captured rows the purge took (the partition of the row's month is
-- in retention_purge_log), the partitions and when the last of them was purged, and how many are
-- gone without a purge that took them (never expected: a row leaves only through the purge). A
-- filter, NULL for all: a run. The auditor's (the purge log is the auditor's alone).
CREATE FUNCTION evalledger.replay_capture_purged_rows_v1(p_replay_run_id bigint)
RETURNS TABLE (
    replay_run_id          bigint,
    brain_version          text,
    completed_at           timestamptz,
    queries                bigint,
    captured_rows_purged   bigint,
    captured_rows_missing  bigint,
    partitions_purged      text[],
    last_purged_at         timestamptz)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.replay_run_id, r.brain_version, r.completed_at, count(*),
           count(*) FILTER (WHERE NOT g.kept AND g.purged_at IS NOT NULL),
           count(*) FILTER (WHERE NOT g.kept AND g.purged_at IS NULL),
           coalesce(array_agg(DISTINCT g.part ORDER BY g.part) FILTER (WHERE NOT g.kept AND g.purged_at IS NOT NULL),
                    '{}'),
           max(g.purged_at) FILTER (WHERE NOT g.kept)
      FROM evalledger.replay_run r
      JOIN evalledger.replay_query q ON q.replay_run_id = r.replay_run_id
     CROSS JOIN LATERAL (
            SELECT EXISTS (SELECT 1 FROM evalledger.eval_candidates c
                            WHERE c.created_at = q.capture_created_at AND c.id = q.capture_id) AS kept,
                   'eval_candidates_p' || to_char(q.capture_created_at AT TIME ZONE 'UTC', 'YYYYMM') AS part) k
     CROSS JOIN LATERAL (
            SELECT k.kept, k.part,
                   CASE WHEN NOT k.kept THEN
                       (SELECT max(p.purged_at) FROM evalledger.retention_purge_log p
                         WHERE p.table_name = 'eval_candidates' AND p.partition_name = k.part) END AS purged_at) g
     WHERE r.source = 'ledger'
       AND (p_replay_run_id IS NULL OR r.replay_run_id = p_replay_run_id)
     GROUP BY r.replay_run_id, r.brain_version, r.completed_at
    HAVING count(*) FILTER (WHERE NOT g.kept) > 0
     ORDER BY r.replay_run_id DESC
$$;

-- Auditors: the purge log is theirs alone.
GRANT EXECUTE ON FUNCTION replay_capture_purged_rows_v1(bigint) TO evalledger_auditor;
