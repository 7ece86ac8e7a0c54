-- ratio_stderr_v1: a ratio estimator R = sum(num) / sum(den) (hallucinations over claims, each
-- question giving its own num and den) and its standard error clustered by item, by linearisation:
-- each item's residual is num_i - R * den_i, and with G clusters (the items themselves when every
-- label differs)
--   stderr = sqrt(G / (G - 1) * sum over clusters g of (sum over i in g of (num_i - R den_i))^2) / sum(den)
-- which is clustered_stderr_v1 of the unit-level 0/1 outcomes (every claim a value, clustered by its
-- item) written with the items' sums. n is sum(den) (the claims), cluster_count the clusters with
-- a unit (an item without claims adds nothing, so it is no cluster: G counts the others). NULL
-- estimate when sum(den) is 0; NULL stderr with fewer than 2 clusters. Pairs with a NULL are left
-- out. Every sum runs in a fixed order, never a plan's: the pairs in the arrays' order, within a
-- cluster too, and the clusters in the order of their first pair. docs/statistics.md, "Ratio" and
-- "Order of summation".
CREATE FUNCTION evalledger.ratio_stderr_v1(
    num double precision[], den double precision[], clusters text[],
    OUT estimate double precision, OUT stderr double precision, OUT n double precision, OUT cluster_count bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH v AS (SELECT t.y, t.x, coalesce(t.g, '#' || t.i::text) AS g, t.i
                 FROM unnest(num, den, clusters) WITH ORDINALITY AS t(y, x, g, i)
                WHERE t.y IS NOT NULL AND t.x IS NOT NULL),
         m AS (SELECT sum(v.y ORDER BY v.i) / nullif(sum(v.x ORDER BY v.i), 0) AS r, sum(v.x ORDER BY v.i) AS total,
                      count(DISTINCT v.g) FILTER (WHERE v.x <> 0) AS k FROM v),
         s AS (SELECT sum(c.e * c.e ORDER BY c.first) AS ss
                 FROM (SELECT sum(v.y - m.r * v.x ORDER BY v.i) AS e, min(v.i) AS first FROM v, m GROUP BY v.g) c)
    SELECT m.r,
           CASE WHEN m.k >= 2 AND m.r IS NOT NULL THEN sqrt(m.k::double precision / (m.k - 1) * s.ss) / m.total END,
           m.total, m.k
      FROM m, s
$$;
GRANT EXECUTE ON FUNCTION ratio_stderr_v1(double precision[], double precision[], text[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
