-- mean_stderr_v1: the mean of independent values and its standard error by the central limit
-- theorem, the sample standard deviation (n - 1 in its denominator) over sqrt(n) (scipy.stats.sem;
-- Miller 2024, "Adding Error Bars to Evals", section 2). n counts the non-NULL values; estimate is
-- NULL with none, stderr NULL with fewer than 2. docs/statistics.md, "Mean".
CREATE FUNCTION evalledger.mean_stderr_v1(
    x double precision[], OUT estimate double precision, OUT stderr double precision, OUT n bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT avg(v), stddev_samp(v) / sqrt(count(v)), count(v)
      FROM unnest(x) v
$$;
GRANT EXECUTE ON FUNCTION mean_stderr_v1(double precision[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
