-- retention_plan_v2: per aging table, how many rows are hot (recorded in the last 24 months),
-- cold (24 months to 7 years: auditors only), due for purge (past 7 years, no hold) and held past
-- the horizon, and which holds keep which rows. Captured queries count by whole monthly partition,
-- as they are purged. Counts only, so auditors may ask it of tables they cannot read. The windows
-- are hot_tier_start_v1 and purge_horizon_at_v1 (UTC, the statement's clock), the holds those of
-- retention_held_v2 (a brain hold keeps its prompt's rows).
CREATE FUNCTION evalledger.retention_plan_v2()
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
                            'brain_eval_run_uncertainty', 'brain_eval_trend',
                            'brain_analysis_log', 'brain_eval_import',
                            'eval_takes_quality_runs', 'eval_takes_quality_judge_verdicts',
                            'eval_takes_quality_run_uncertainty',
                            'eval_work_quality_snapshots', 'eval_work_quality_judge_verdicts',
                            'eval_work_quality_snapshot_uncertainty', 'eval_run_closure',
                            'replay_run', 'replay_query',
                            'eval_candidates', 'eval_candidate_keys', 'eval_capture_failures',
                            'eval_gate_decision'])
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
                    THEN format(CASE WHEN t.table_name = 'eval_gate_decision' THEN '%s decided about kept runs'
                                     ELSE '%s referenced by kept rows' END,
                                count(*) FILTER (WHERE c.pinned AND c.past)) END), '')
      FROM tables t LEFT JOIN classified c USING (table_name)
     GROUP BY t.table_name, t.n
     ORDER BY t.n
$$;
GRANT EXECUTE ON FUNCTION retention_plan_v2() TO evalledger_retention, evalledger_auditor, evalledger_owner;
