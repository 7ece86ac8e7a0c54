-- replay_recall_v1: recall of the captured slugs in the replayed ones at the captured count: of
-- the k distinct slugs production retrieved, the share found among the first k slugs the replay
-- retrieved (k = how many production retrieved). Nothing captured is nothing lost: 1. Exact, never
-- rounded (numeric division).
CREATE FUNCTION evalledger.replay_recall_v1(captured text[], replayed text[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT DISTINCT s FROM unnest(captured) s),
         k AS (SELECT count(*) AS n FROM c),
         top AS (SELECT DISTINCT s FROM unnest(replayed) WITH ORDINALITY u(s, i) WHERE i <= (SELECT n FROM k))
    SELECT CASE WHEN (SELECT n FROM k) = 0 THEN 1::numeric
                ELSE (SELECT count(*) FROM c JOIN top USING (s))::numeric / (SELECT n FROM k) END
$$;

-- Production beside eval (production_beside_eval_rows_v1) computes it as its reader: RevOps and auditors.
GRANT EXECUTE ON FUNCTION replay_recall_v1(text[], text[]) TO evalledger_revops, evalledger_auditor;
