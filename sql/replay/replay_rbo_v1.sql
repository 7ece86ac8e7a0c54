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
CREATE FUNCTION evalledger.replay_rbo_v1(captured bigint[], replayed bigint[], p numeric) RETURNS numeric
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

-- Production beside eval (production_beside_eval_rows_v1) computes it as its reader: RevOps and auditors.
GRANT EXECUTE ON FUNCTION replay_rbo_v1(bigint[], bigint[], numeric) TO evalledger_revops, evalledger_auditor;
