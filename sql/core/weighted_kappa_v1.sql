-- weighted_kappa_v1: Cohen's weighted kappa with linear weights over three ordered categories 0,
-- 1, 2 (cells laid out as cohen_kappa_v1's): a disagreement of one step weighs 1/2, of two steps
-- 1, so for the scale 0 / 0.5 / 1 the weight is the difference of the two values. kappa_w =
-- 1 - Do / De, Do the observed mean weight of the items, De the mean weight expected by chance
-- from each rater's own shares. NULL with no items, and when De = 0 (no disagreement is possible
-- by chance: both raters used one same category). Exact, rounded to 4 places at the end.
CREATE FUNCTION evalledger.weighted_kappa_v1(cells bigint[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT i, j, coalesce(cells[3 * i + j + 1], 0)::numeric AS n, abs(i - j) / 2.0 AS w
                 FROM generate_series(0, 2) i CROSS JOIN generate_series(0, 2) j),
         t AS (SELECT sum(n) AS total, sum(w * n) AS observed FROM c),
         a AS (SELECT i, sum(n) AS n FROM c GROUP BY i),
         b AS (SELECT j, sum(n) AS n FROM c GROUP BY j),
         e AS (SELECT sum(c.w * a.n * b.n) AS expected FROM c JOIN a USING (i) JOIN b USING (j)),
         p AS (SELECT t.observed / t.total AS d_o, e.expected / (t.total * t.total) AS d_e FROM t, e WHERE t.total > 0)
    SELECT round(1 - p.d_o / p.d_e, 4) FROM p WHERE p.d_e > 0
$$;
GRANT EXECUTE ON FUNCTION weighted_kappa_v1(bigint[]) TO evalledger_revops, evalledger_auditor;
