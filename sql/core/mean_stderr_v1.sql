-- mean_stderr_v1: the mean of independent values and its standard error by the central limit
-- theorem, the sample standard deviation (n - 1 in its denominator) over sqrt(n) (scipy.stats.sem;
-- Miller 2024, "Adding Error Bars to Evals", section 2). n counts the non-NULL values; estimate is
-- NULL with none, stderr NULL with fewer than 2. The values are summed in the array's order
-- (never a plan's), so the same array gives the same bits. docs/statistics.md, "Mean" and "Order of
-- summation".
CREATE FUNCTION evalledger.mean_stderr_v1(
    x double precision[], OUT estimate double precision, OUT stderr double precision, OUT n bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT avg(t.v ORDER BY t.i), stddev_samp(t.v ORDER BY t.i) / sqrt(count(t.v)), count(t.v)
      FROM unnest(x) WITH ORDINALITY AS t(v, i)
$$;
GRANT EXECUTE ON FUNCTION mean_stderr_v1(double precision[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
