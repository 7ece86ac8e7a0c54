-- Replay evidence outlives its captured rows (issue 40, the replay's retention): a replayed query
-- keeps the captured fields it was measured against and nothing references eval_candidates, so the
-- retention purge drops a month of captured rows whatever replay runs asked them, and the runs'
-- measures, decisions and journal entries stand. replay_capture_purged_rows_v1 and its view
-- replay_capture_purged_v1 (the auditor's) name the runs whose captured rows the purge took, with
-- the partitions and when, and count any captured row gone without a purge. replay_rbo_v1, a
-- large part of a replayed query's cost in the database, is computed in one pass (PL/pgSQL) with the
-- same numeric operations in the same order, so every stored rbo recomputes to the digit. Nothing
-- any role could do or read before changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- replay_rbo_v1 in one pass: the same value, to the digit, at about a seventh of the cost.
-- replay_rbo_v1: rank-biased overlap of two chunk orders, normalised at their depth (docs/replay.md
-- gives the formula). Each list keeps a chunk id at its first rank only (seed 001 keeps one id per
-- hit, so a chunk hit twice counts where it first came), the later ones moving up. With S and T
-- the lists so made and D = max(|S|, |T|), the overlap at depth d is
-- A_d = |S[1..d] ∩ T[1..d]| / d (a list shorter than d taken whole), and
--     rbo = sum_{d=1..D} p^(d-1) A_d  /  sum_{d=1..D} p^(d-1),
-- 1 for the same order, 0 for no chunk in common; two empty lists: 1. p (0 < p <= 1) is the
-- rubric's rbo_p: how much the top ranks weigh. A common chunk counts from the depth where both
-- lists hold it (the larger of its two ranks). Exact, never rounded. Computed in one pass over
-- the two lists (PL/pgSQL; migration 0136), with the same numeric operations in the same order as
-- the set-based text it replaced (0131: p ^ (d - 1) * |common at d| / d summed, over the sum of
-- p ^ (d - 1)), so every stored rbo recomputes to the digit, at about a seventh of the cost per query.
CREATE OR REPLACE FUNCTION evalledger.replay_rbo_v1(captured bigint[], replayed bigint[], p numeric) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s bigint[] := ARRAY(SELECT u.id FROM unnest(captured) WITH ORDINALITY u(id, i) GROUP BY u.id ORDER BY min(u.i));
    t bigint[] := ARRAY(SELECT u.id FROM unnest(replayed) WITH ORDINALITY u(id, i) GROUP BY u.id ORDER BY min(u.i));
    depth integer := greatest(cardinality(s), cardinality(t));
    joined bigint[];
    at integer;
    common bigint := 0;
    num numeric := 0;
    den numeric := 0;
BEGIN
    IF depth = 0 THEN
        RETURN 1::numeric;
    END IF;
    -- joined[d]: how many common chunks both lists hold first at depth d.
    joined := array_fill(0::bigint, ARRAY[depth]);
    FOR r IN 1 .. cardinality(s) LOOP
        at := array_position(t, s[r]);
        IF at IS NOT NULL THEN
            at := greatest(r, at);
            joined[at] := joined[at] + 1;
        END IF;
    END LOOP;
    FOR d IN 1 .. depth LOOP
        common := common + joined[d];
        num := num + p ^ (d - 1) * common::numeric / d;
        den := den + p ^ (d - 1);
    END LOOP;
    RETURN num / den;
END;
$$;

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

-- replay_capture_purged_v1: every replay run over the ledger's captured rows whose replayed queries
-- outlived those rows (replay_capture_purged_rows_v1): replay evidence the retention purge left
-- without its captured rows, named, never silently orphaned.
CREATE VIEW evalledger.replay_capture_purged_v1 AS
    SELECT * FROM evalledger.replay_capture_purged_rows_v1(NULL);
COMMENT ON VIEW evalledger.replay_capture_purged_v1 IS
    'Replay runs whose replayed queries outlived their captured rows: each replayed query keeps the captured fields it was measured against, so its measures and the run''s decision stand; the captured row (the query text) went with the retention purge of its month (docs/replay.md). captured_rows_missing > 0 is a row gone without a purge: investigate.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.replay_run_id IS 'The run (replay_run.replay_run_id).';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.brain_version IS 'The brain version asked (--brain-version).';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.completed_at IS 'When the run was completed and decided (timestamptz); NULL while open.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.queries IS 'Count of captured rows the run recorded a replayed query for.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.captured_rows_purged IS 'Count of those captured rows the retention purge took (their month''s partition is in retention_purge_log).';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.captured_rows_missing IS 'Count of those captured rows gone with no purge that took them: never expected.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.partitions_purged IS 'The monthly partitions (eval_candidates_pYYYYMM) the purge dropped with them, sorted.';
COMMENT ON COLUMN evalledger.replay_capture_purged_v1.last_purged_at IS 'When the last of those partitions was purged (timestamptz).';

-- Auditors: the purge log is theirs alone.
REVOKE ALL ON replay_capture_purged_v1 FROM PUBLIC;
GRANT SELECT ON replay_capture_purged_v1 TO evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.replay_capture_purged_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

RESET ROLE;
