-- work_quality_paired_v1: snapshot B against snapshot A (two Snapshot documents), paired by judge. One
-- work product is scored by 2 or 3 judges, so the items are the judges: aggregate.verdicts[] by
-- model (a model's second verdict in one snapshot is "model (2)"). One paired_object_v1 per
-- dimension of the policy (work_quality_policy_v1), in its order; a judge is shared in a dimension
-- when both snapshots hold its finite score there. Differences are B - A.
-- docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.work_quality_paired_v1(a_doc jsonb, b_doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH dims AS (
        SELECT d.dim, d.n FROM jsonb_array_elements_text(evalledger.work_quality_policy_v1() -> 'dimensions')
                               WITH ORDINALITY d(dim, n)),
    verdicts AS (
        SELECT s.side, v.verdict,
               CASE WHEN row_number() OVER (PARTITION BY s.side, v.verdict ->> 'model' ORDER BY v.n) = 1
                    THEN v.verdict ->> 'model'
                    ELSE format('%s (%s)', v.verdict ->> 'model',
                                row_number() OVER (PARTITION BY s.side, v.verdict ->> 'model' ORDER BY v.n)) END AS judge
          FROM (VALUES ('a', a_doc), ('b', b_doc)) s(side, doc)
         CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(s.doc -> 'aggregate' -> 'verdicts') = 'array'
                                                      THEN s.doc -> 'aggregate' -> 'verdicts' ELSE '[]' END)
                            WITH ORDINALITY v(verdict, n)),
    scored AS (
        SELECT v.side, d.dim, v.judge, (v.verdict -> 'scores' ->> d.dim)::float8 AS x
          FROM verdicts v CROSS JOIN dims d
         WHERE jsonb_typeof(v.verdict -> 'scores' -> d.dim) = 'number' AND v.judge IS NOT NULL)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(d.dim, a.items, a.vals, b.items, b.vals) ORDER BY d.n), '[]')
      FROM dims d
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_paired_v1(jsonb, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;
