-- wilson_interval_v1: a confidence interval for a proportion of successes in independent trials.
-- Between the extremes, the Wilson score interval (statsmodels' proportion_confint, method
-- 'wilson'), z the normal quantile at 1 - (1 - confidence) / 2:
--   centre = (x + z^2 / 2) / (n + z^2),  half = z / (n + z^2) * sqrt(x (n - x) / n + z^2 / 4)
-- When every trial failed (x = 0) or passed (x = n) the side at 0 or 1 cannot be wrong, so the whole
-- 1 - confidence goes to the other side: the exact (Clopper-Pearson) one-sided bound,
-- 1 - (1 - confidence)^(1/n) above 0 of n, (1 - confidence)^(1/n) below n of n (the rule of three,
-- 3 / n, approximates the first at 95%). method says which: 'wilson' or 'exact'. NULL without
-- trials or with x outside 0..n. docs/statistics.md, "Proportion".
CREATE FUNCTION evalledger.wilson_interval_v1(
    successes bigint, trials bigint, confidence double precision DEFAULT 0.95,
    OUT lo double precision, OUT hi double precision, OUT method text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN successes = 0 THEN 0
                WHEN successes = trials THEN power(1 - confidence, 1.0 / nullif(trials, 0))
                ELSE (successes + z * z / 2) / (trials + z * z) - z / (trials + z * z) * sqrt(successes * (trials - successes)::double precision / nullif(trials, 0) + z * z / 4) END,
           CASE WHEN successes = 0 THEN 1 - power(1 - confidence, 1.0 / nullif(trials, 0))
                WHEN successes = trials THEN 1
                ELSE (successes + z * z / 2) / (trials + z * z) + z / (trials + z * z) * sqrt(successes * (trials - successes)::double precision / nullif(trials, 0) + z * z / 4) END,
           CASE WHEN successes IN (0, trials) THEN 'exact' ELSE 'wilson' END
      FROM (SELECT evalledger.normal_quantile_v1(1 - (1 - confidence) / 2) AS z) q
     WHERE trials > 0 AND successes BETWEEN 0 AND trials AND confidence > 0 AND confidence < 1
$$;
GRANT EXECUTE ON FUNCTION wilson_interval_v1(bigint, bigint, double precision)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
