-- clustered_stderr_v1: the mean of values that come in clusters (items sharing a context: the
-- questions of one question_type) and its cluster-robust standard error, Miller 2024's appendix A
-- with the finite-cluster correction G / (G - 1) (CR1, as statsmodels' OLS with cov_type 'cluster'
-- and inspect-ai's clustered stderr):
--   stderr = sqrt(G / (G - 1) * sum over clusters g of (sum over i in g of (x_i - mean))^2) / n
-- x[i] belongs to clusters[i] (a NULL label is a cluster of its own); NULL values are left out.
-- With every value its own cluster it equals mean_stderr_v1's; with fewer than 2 clusters it is
-- NULL (nothing to estimate the between-cluster variance from). Every sum runs in a fixed order,
-- never a plan's: the values in the array's order, within a cluster too, and the clusters in the
-- order of their first value in the array. docs/statistics.md, "Clustered" and "Order of summation".
CREATE FUNCTION evalledger.clustered_stderr_v1(
    x double precision[], clusters text[],
    OUT estimate double precision, OUT stderr double precision, OUT n bigint, OUT cluster_count bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH v AS (SELECT t.v, coalesce(t.g, '#' || t.i::text) AS g, t.i
                 FROM unnest(x, clusters) WITH ORDINALITY AS t(v, g, i)
                WHERE t.v IS NOT NULL),
         m AS (SELECT avg(v.v ORDER BY v.i) AS mean, count(*) AS n, count(DISTINCT v.g) AS k FROM v),
         s AS (SELECT sum(c.r * c.r ORDER BY c.first) AS ss
                 FROM (SELECT sum(v.v - m.mean ORDER BY v.i) AS r, min(v.i) AS first FROM v, m GROUP BY v.g) c)
    SELECT m.mean,
           CASE WHEN m.k >= 2 THEN sqrt(m.k::double precision / (m.k - 1) * s.ss) / m.n END,
           m.n, m.k
      FROM m, s
$$;
GRANT EXECUTE ON FUNCTION clustered_stderr_v1(double precision[], text[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
