-- replay_jaccard_v1: the Jaccard index of the captured and the replayed slug sets, |C ∩ R| / |C ∪ R|
-- (duplicates counted once, order ignored); two empty sets are the same set: 1. Exact, never rounded.
CREATE FUNCTION evalledger.replay_jaccard_v1(captured text[], replayed text[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT DISTINCT s FROM unnest(captured) s),
         r AS (SELECT DISTINCT s FROM unnest(replayed) s),
         u AS (SELECT s FROM c UNION SELECT s FROM r)
    SELECT CASE WHEN (SELECT count(*) FROM u) = 0 THEN 1::numeric
                ELSE (SELECT count(*) FROM c JOIN r USING (s))::numeric / (SELECT count(*) FROM u) END
$$;

-- Production beside eval (production_beside_eval_rows_v1) computes it as its reader: RevOps and auditors.
GRANT EXECUTE ON FUNCTION replay_jaccard_v1(text[], text[]) TO evalledger_revops, evalledger_auditor;
