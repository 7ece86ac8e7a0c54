-- sample_size_v1: the fewest items (or paired differences) for which min_detectable_effect_v1 is
-- at most effect: n = ceil(((z_(1 - alpha / tails) + z_power) * sd / effect)^2), at least 1.
-- NULL for effect <= 0, sd < 0, tails other than 1 or 2, or alpha, power outside (0, 1).
-- docs/statistics.md, "Power".
CREATE FUNCTION evalledger.sample_size_v1(
    sd double precision, effect double precision, alpha double precision DEFAULT 0.05,
    power double precision DEFAULT 0.8, tails integer DEFAULT 2) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN effect > 0 AND sd >= 0 AND tails IN (1, 2) AND alpha > 0 AND alpha < 1 AND power > 0 AND power < 1
                THEN greatest(1, ceil(power((evalledger.normal_quantile_v1(1 - alpha / tails)
                                   + evalledger.normal_quantile_v1(power)) * sd / effect, 2)))::bigint END
$$;
GRANT EXECUTE ON FUNCTION sample_size_v1(double precision, double precision, double precision, double precision, integer)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
