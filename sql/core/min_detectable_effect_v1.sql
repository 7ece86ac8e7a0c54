-- min_detectable_effect_v1: the smallest true difference a z-test on n items (or n paired
-- differences) with standard deviation sd detects with the given power at level alpha, one- or
-- two-tailed (Miller 2024, section 5):
--   mde = (z_(1 - alpha / tails) + z_power) * sd / sqrt(n)
-- with z_p = normal_quantile_v1(p). For two tails the chance of rejecting on the wrong side is left
-- out (9.6e-7 at alpha 0.05 and 80% power; statsmodels' NormalIndPower counts it). NULL for n < 1, sd < 0,
-- tails other than 1 or 2, or alpha, power outside (0, 1). docs/statistics.md, "Power".
CREATE FUNCTION evalledger.min_detectable_effect_v1(
    sd double precision, n bigint, alpha double precision DEFAULT 0.05,
    power double precision DEFAULT 0.8, tails integer DEFAULT 2) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN n >= 1 AND sd >= 0 AND tails IN (1, 2) AND alpha > 0 AND alpha < 1 AND power > 0 AND power < 1
                THEN (evalledger.normal_quantile_v1(1 - alpha / tails) + evalledger.normal_quantile_v1(power)) * sd / sqrt(n) END
$$;
GRANT EXECUTE ON FUNCTION min_detectable_effect_v1(double precision, bigint, double precision, double precision, integer)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
