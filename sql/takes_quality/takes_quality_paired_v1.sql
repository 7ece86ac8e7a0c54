-- takes_quality_paired_v1: a run's receipt against a baseline receipt, paired by judge. The sample is
-- judged as a whole (seed 000), so the items are the judges: a judge is shared when both receipts
-- hold its score in a dimension's per_model (the contributing judges of each deciding cycle). One
-- paired_object_v1 per dimension of the baseline (in the rubric's order dims, then by name), then
-- "overall": each judge's mean over the baseline's dimensions (a judge lacking one has none).
-- Differences are now - baseline. A judge's overall sums its dimensions by name, byte by byte
-- (COLLATE "C"), never in a plan's order. docs/statistics.md, "Paired comparisons and gates" and
-- "Order of summation". A score past float8's range is refused naming the receipt, the judge and
-- the dimension (score_float8_v1), never cast to a bare "out of range".
CREATE FUNCTION evalledger.takes_quality_paired_v1(baseline jsonb, now_receipt jsonb, dims text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH keys AS (
        SELECT k.name, row_number() OVER (ORDER BY array_position(dims, k.name) NULLS LAST, k.name COLLATE "C") AS n
          FROM jsonb_object_keys(CASE WHEN jsonb_typeof(baseline -> 'scores') = 'object'
                                      THEN baseline -> 'scores' ELSE '{}' END) k(name)),
    scored AS (
        SELECT s.side, k.name, m.key AS model,
               evalledger.score_float8_v1(m.value, format('the %s, judge %s, dimension %s',
                                                          CASE s.side WHEN 'a' THEN 'baseline receipt' ELSE 'run''s receipt' END,
                                                          m.key, k.name)) AS v
          FROM keys k
         CROSS JOIN (VALUES ('a', baseline), ('b', now_receipt)) s(side, doc)
         CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(s.doc -> 'scores' -> k.name -> 'per_model') = 'object'
                                            THEN s.doc -> 'scores' -> k.name -> 'per_model' ELSE '{}' END) m
         WHERE jsonb_typeof(m.value) = 'number'),
    judged AS (
        SELECT side, name, model, v FROM scored
        UNION ALL
        SELECT side, 'overall', model, avg(v ORDER BY name COLLATE "C") FROM scored
         GROUP BY side, model HAVING count(*) = (SELECT count(*) FROM keys)),
    rows AS (SELECT name, n FROM keys UNION ALL SELECT 'overall', (SELECT count(*) FROM keys) + 1)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(r.name, a.items, a.vals, b.items, b.vals) ORDER BY r.n), '[]')
      FROM rows r
      LEFT JOIN LATERAL (SELECT array_agg(j.model ORDER BY j.model) AS items, array_agg(j.v ORDER BY j.model) AS vals
                           FROM judged j WHERE j.name = r.name AND j.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(j.model ORDER BY j.model) AS items, array_agg(j.v ORDER BY j.model) AS vals
                           FROM judged j WHERE j.name = r.name AND j.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION takes_quality_paired_v1(jsonb, jsonb, text[]) TO evalledger_runner, evalledger_revops, evalledger_auditor;
