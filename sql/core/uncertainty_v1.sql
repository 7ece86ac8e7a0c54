-- uncertainty_v1: the `uncertainty` object shown beside a verdict, for one aggregate:
--   {"estimate", "stderr", "ci95": [lo, hi], "n", "clusters", "method"}
-- from an estimate and its standard error (mean_stderr_v1, clustered_stderr_v1, ratio_stderr_v1)
-- and, for a proportion, its successes of trials. The 95% interval is estimate +- z * stderr,
-- z = normal_quantile_v1(0.975), cut to the scale [lo_limit, hi_limit]; for a proportion where
-- every trial passed or failed (the standard error is 0 there, and says nothing) it is
-- wilson_interval_v1's exact bound, and where no standard error could be estimated (fewer than
-- 2 clusters) its Wilson interval; otherwise, without a standard error, ci95 is null. method is
-- the one given, or 'exact' / 'wilson' when the interval came from wilson_interval_v1. NULL when
-- there is no estimate (nothing to measure). docs/statistics.md, "The uncertainty object".
-- Its numbers are float8 turned into jsonb, whose digits follow the session's extra_float_digits
-- (at 0 or below, fewer than it takes to read back the same value): pinned to 1, the shortest exact
-- digits, so no caller's setting changes what a completion stores or what a recompute compares.
CREATE FUNCTION evalledger.uncertainty_v1(
    estimate double precision, stderr double precision, n double precision, clusters bigint, method text,
    successes double precision, trials double precision, lo_limit double precision, hi_limit double precision)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
    SELECT jsonb_build_object(
               'estimate', estimate, 'stderr', stderr,
               'ci95', CASE WHEN w.method IS NOT NULL THEN jsonb_build_array(w.lo, w.hi)
                            WHEN stderr IS NOT NULL
                            THEN jsonb_build_array(greatest(lo_limit, estimate - z.z * stderr),
                                                   least(hi_limit, estimate + z.z * stderr)) END,
               'n', n, 'clusters', clusters, 'method', coalesce(w.method, uncertainty_v1.method))
      FROM (SELECT evalledger.normal_quantile_v1(0.975) AS z) z
      LEFT JOIN LATERAL evalledger.wilson_interval_v1(successes::bigint, trials::bigint) w
             ON successes IS NOT NULL AND (successes IN (0, trials) OR stderr IS NULL)
     WHERE estimate IS NOT NULL
$$;
GRANT EXECUTE ON FUNCTION uncertainty_v1(double precision, double precision, double precision, bigint, text,
                                         double precision, double precision, double precision, double precision)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
