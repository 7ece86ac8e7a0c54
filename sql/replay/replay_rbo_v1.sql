-- replay_rbo_v1: rank-biased overlap of two chunk orders, normalised at their depth (docs/replay.md
-- gives the formula). Each list keeps a chunk id at its first rank only (seed 001 keeps one id per
-- hit, so a chunk hit twice counts where it first came), the later ones moving up. With S and T
-- the lists so made and D = max(|S|, |T|), the overlap at depth d is
-- A_d = |S[1..d] ∩ T[1..d]| / d (a list shorter than d taken whole), and
--     rbo = sum_{d=1..D} p^(d-1) A_d  /  sum_{d=1..D} p^(d-1),
-- 1 for the same order, 0 for no chunk in common; two empty lists: 1. p (0 < p <= 1) is the
-- rubric's rbo_p: how much the top ranks weigh. A common chunk counts from the depth where both
-- lists hold it (the larger of its two ranks). Exact, never rounded.
CREATE FUNCTION evalledger.replay_rbo_v1(captured bigint[], replayed bigint[], p numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH s AS (SELECT id, row_number() OVER (ORDER BY min(i)) AS rank
                 FROM unnest(captured) WITH ORDINALITY u(id, i) GROUP BY id),
         t AS (SELECT id, row_number() OVER (ORDER BY min(i)) AS rank
                 FROM unnest(replayed) WITH ORDINALITY u(id, i) GROUP BY id),
         depth AS (SELECT greatest((SELECT count(*) FROM s), (SELECT count(*) FROM t)) AS d),
         common AS (SELECT greatest(s.rank, t.rank) AS at FROM s JOIN t USING (id))
    SELECT CASE WHEN depth.d = 0 THEN 1::numeric
                ELSE (SELECT sum(p ^ (k - 1) * (SELECT count(*) FROM common WHERE common.at <= k)::numeric / k)
                           / sum(p ^ (k - 1))
                        FROM generate_series(1::bigint, depth.d) k) END
      FROM depth
$$;

-- Production beside eval (production_beside_eval_rows_v1) computes it as its reader: RevOps and auditors.
GRANT EXECUTE ON FUNCTION replay_rbo_v1(bigint[], bigint[], numeric) TO evalledger_revops, evalledger_auditor;
