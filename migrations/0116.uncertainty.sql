-- Verdicts with their uncertainty (issue 36, items 1-3): the statistics every suite shows beside
-- its verdict, computed by the database from the stored rows, one home in sql/core/ and each
-- formula in docs/statistics.md: a mean's standard error by the central limit theorem, the
-- clustered standard error, a ratio estimator's standard error clustered by item, the Wilson
-- interval with the exact bound at 0 of n and n of n, the paired difference of two runs with
-- McNemar's exact test, the minimum detectable effect and the sample size; each suite's
-- uncertainty of a run, and a view per suite for BI. Nothing decided changes: no trigger, table or
-- decision function is touched, and no role may write anything it could not before.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- normal_quantile_v1: the standard normal distribution's quantile, z such that P(Z <= z) = p
-- (scipy.stats.norm.ppf), by Wichura's algorithm AS 241 (PPND16, Applied Statistics 37, 1988),
-- good to about 1e-16 relative: a rational function of p near the middle (|p - 0.5| <= 0.425) and of
-- r = sqrt(-ln(min(p, 1 - p))) in the tails. NULL outside 0 < p < 1. docs/statistics.md, "Quantiles".
CREATE FUNCTION evalledger.normal_quantile_v1(p double precision) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    q double precision := p - 0.5;
    r double precision;
    z double precision;
BEGIN
    IF NOT (p > 0 AND p < 1) THEN
        RETURN NULL;
    END IF;
    IF abs(q) <= 0.425 THEN
        r := 0.180625 - q * q;
        RETURN q * (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r + 67265.770927008700853) * r
                        + 45921.953931549871457) * r + 13731.693765509461125) * r + 1971.5909503065514427) * r
                        + 133.14166789178437745) * r + 3.387132872796366608)
                 / (((((((r * 5226.495278852545925 + 28729.085735721942674) * r + 39307.89580009271061) * r
                        + 21213.794301586595867) * r + 5394.1960214247511077) * r + 687.1870074920579083) * r
                        + 42.313330701600911252) * r + 1.0);
    END IF;
    r := sqrt(-ln(CASE WHEN q < 0 THEN p ELSE 1 - p END));
    IF r <= 5 THEN
        r := r - 1.6;
        z := (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r + 0.24178072517745061177) * r
                  + 1.27045825245236838258) * r + 3.64784832476320460504) * r + 5.7694972214606914055) * r
                  + 4.6303378461565452959) * r + 1.42343711074968357734)
           / (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r
                  + 0.14810397642748007459) * r + 0.68976733498510000455) * r + 1.6763848301838038494) * r
                  + 2.05319162663775882187) * r + 1.0);
    ELSE
        r := r - 5;
        z := (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r
                  + 0.026532189526576123093) * r + 0.29656057182850489123) * r + 1.7848265399172913358) * r
                  + 5.4637849111641143699) * r + 6.6579046435011037772)
           / (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r
                  + 7.868691311456132591e-4) * r + 0.0148753612908506148525) * r + 0.13692988092273580531) * r
                  + 0.59983220655588793769) * r + 1.0);
    END IF;
    RETURN CASE WHEN q < 0 THEN -z ELSE z END;
END;
$$;
GRANT EXECUTE ON FUNCTION normal_quantile_v1(double precision)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

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

-- clustered_stderr_v1: the mean of values that come in clusters (items sharing a context: the
-- questions of one question_type) and its cluster-robust standard error, Miller 2024's appendix A
-- with the finite-cluster correction G / (G - 1) (CR1, as statsmodels' OLS with cov_type 'cluster'
-- and inspect-ai's clustered stderr):
--   stderr = sqrt(G / (G - 1) * sum over clusters g of (sum over i in g of (x_i - mean))^2) / n
-- x[i] belongs to clusters[i] (a NULL label is a cluster of its own); NULL values are left out.
-- With every value its own cluster it equals mean_stderr_v1's; with fewer than 2 clusters it is
-- NULL (nothing to estimate the between-cluster variance from). docs/statistics.md, "Clustered".
CREATE FUNCTION evalledger.clustered_stderr_v1(
    x double precision[], clusters text[],
    OUT estimate double precision, OUT stderr double precision, OUT n bigint, OUT cluster_count bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH v AS (SELECT t.v, coalesce(t.g, '#' || t.i::text) AS g
                 FROM unnest(x, clusters) WITH ORDINALITY AS t(v, g, i)
                WHERE t.v IS NOT NULL),
         m AS (SELECT avg(v.v) AS mean, count(*) AS n, count(DISTINCT v.g) AS k FROM v),
         s AS (SELECT sum(c.r * c.r) AS ss
                 FROM (SELECT sum(v.v - m.mean) AS r FROM v, m GROUP BY v.g) c)
    SELECT m.mean,
           CASE WHEN m.k >= 2 THEN sqrt(m.k::double precision / (m.k - 1) * s.ss) / m.n END,
           m.n, m.k
      FROM m, s
$$;
GRANT EXECUTE ON FUNCTION clustered_stderr_v1(double precision[], text[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- ratio_stderr_v1: a ratio estimator R = sum(num) / sum(den) (hallucinations over claims, each
-- question giving its own num and den) and its standard error clustered by item, by linearisation:
-- each item's residual is num_i - R * den_i, and with G clusters (the items themselves when every
-- label differs)
--   stderr = sqrt(G / (G - 1) * sum over clusters g of (sum over i in g of (num_i - R den_i))^2) / sum(den)
-- which is clustered_stderr_v1 of the unit-level 0/1 outcomes (every claim a value, clustered by its
-- item) written with the items' sums. n is sum(den) (the claims), cluster_count the clusters with
-- a unit (an item without claims adds nothing, so it is no cluster: G counts the others). NULL
-- estimate when sum(den) is 0; NULL stderr with fewer than 2 clusters. Pairs with a NULL are left
-- out. docs/statistics.md, "Ratio".
CREATE FUNCTION evalledger.ratio_stderr_v1(
    num double precision[], den double precision[], clusters text[],
    OUT estimate double precision, OUT stderr double precision, OUT n double precision, OUT cluster_count bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH v AS (SELECT t.y, t.x, coalesce(t.g, '#' || t.i::text) AS g
                 FROM unnest(num, den, clusters) WITH ORDINALITY AS t(y, x, g, i)
                WHERE t.y IS NOT NULL AND t.x IS NOT NULL),
         m AS (SELECT sum(v.y) / nullif(sum(v.x), 0) AS r, sum(v.x) AS total, count(DISTINCT v.g) FILTER (WHERE v.x <> 0) AS k FROM v),
         s AS (SELECT sum(c.e * c.e) AS ss
                 FROM (SELECT sum(v.y - m.r * v.x) AS e FROM v, m GROUP BY v.g) c)
    SELECT m.r,
           CASE WHEN m.k >= 2 AND m.r IS NOT NULL THEN sqrt(m.k::double precision / (m.k - 1) * s.ss) / m.total END,
           m.total, m.k
      FROM m, s
$$;
GRANT EXECUTE ON FUNCTION ratio_stderr_v1(double precision[], double precision[], text[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

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

-- mcnemar_exact_v1: McNemar's exact test for paired pass/fail, its two-sided p-value from the
-- discordant pairs alone (b: passed in A, failed in B; c: the reverse). Under no change each
-- discordant pair goes either way with probability 1/2:
--   p = min(1, 2 * P(X <= min(b, c))),  X ~ Binomial(b + c, 1/2)
-- (statsmodels' mcnemar(exact=True)); 1 when there is no discordant pair. The binomial terms are
-- summed in logarithms, so thousands of pairs do not overflow (a p-value below e^-745 is 0). NULL for a negative
-- count. docs/statistics.md, "Paired".
CREATE FUNCTION evalledger.mcnemar_exact_v1(b bigint, c bigint) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n bigint := b + c;
    m bigint := least(b, c);
    log_term double precision := 0;   -- ln C(n, k), from k = 0
    logs double precision[] := ARRAY[0::double precision];
    top double precision;
    total double precision := 0;
    k bigint;
BEGIN
    IF b < 0 OR c < 0 THEN
        RETURN NULL;
    END IF;
    IF n = 0 THEN
        RETURN 1;
    END IF;
    FOR k IN 1 .. m LOOP
        log_term := log_term + ln((n - k + 1)::double precision) - ln(k::double precision);
        logs := logs || log_term;
    END LOOP;
    -- C(n, k) grows with k up to n / 2, and m <= n / 2: the last term is the largest.
    top := logs[m + 1];
    FOR k IN 0 .. m LOOP
        IF logs[k + 1] - top > -745 THEN
            total := total + exp(logs[k + 1] - top);
        END IF;
    END LOOP;
    -- Below e^-745 a double is 0 (PostgreSQL's exp() refuses to underflow).
    RETURN CASE WHEN top - n * ln(2.0::double precision) + ln(total) < -745 THEN 0
                ELSE least(1.0, 2 * exp(top - n * ln(2.0::double precision) + ln(total))) END;
END;
$$;
GRANT EXECUTE ON FUNCTION mcnemar_exact_v1(bigint, bigint)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- paired_difference_v1: two runs over the items they share. A run is two parallel arrays, item
-- keys and values (a NULL value is no answer: the item is not shared). For each shared item
-- d_i = b_i - a_i (B the later run); the mean difference, its standard error by the central limit
-- theorem (sample standard deviation of d, n - 1 in its denominator, over sqrt(n); Miller 2024,
-- section 4) and the 95% interval mean +- z * stderr, z = normal_quantile_v1(0.975). only_a and
-- only_b list the items one run has and the other has not (never silently dropped). When every
-- shared value is 0 or 1 (pass/fail), mcnemar_p is mcnemar_exact_v1 of the discordant pairs. An
-- item key given twice in one run is refused. docs/statistics.md, "Paired".
CREATE FUNCTION evalledger.paired_difference_v1(
    a_items text[], a_values double precision[], b_items text[], b_values double precision[],
    OUT shared bigint, OUT only_a text[], OUT only_b text[], OUT mean_difference double precision,
    OUT stderr double precision, OUT ci_lo double precision, OUT ci_hi double precision,
    OUT mcnemar_p double precision)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    z double precision := evalledger.normal_quantile_v1(0.975);
BEGIN
    IF cardinality(a_items) IS DISTINCT FROM cardinality(a_values)
       OR cardinality(b_items) IS DISTINCT FROM cardinality(b_values) THEN
        RAISE EXCEPTION 'evalledger: paired_difference_v1 needs as many values as items in each run'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (SELECT count(*) <> count(DISTINCT k) FROM unnest(a_items) k)
       OR (SELECT count(*) <> count(DISTINCT k) FROM unnest(b_items) k) THEN
        RAISE EXCEPTION 'evalledger: paired_difference_v1 got an item twice in one run'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    WITH a AS (SELECT t.k, t.v FROM unnest(a_items, a_values) t(k, v) WHERE t.k IS NOT NULL AND t.v IS NOT NULL),
         b AS (SELECT t.k, t.v FROM unnest(b_items, b_values) t(k, v) WHERE t.k IS NOT NULL AND t.v IS NOT NULL),
         d AS (SELECT a.v AS av, b.v AS bv, b.v - a.v AS d FROM a JOIN b USING (k))
    SELECT count(*), avg(d.d), stddev_samp(d.d) / sqrt(count(*)),
           CASE WHEN bool_and(d.av IN (0, 1) AND d.bv IN (0, 1))
                THEN evalledger.mcnemar_exact_v1(count(*) FILTER (WHERE d.av = 1 AND d.bv = 0),
                                                 count(*) FILTER (WHERE d.av = 0 AND d.bv = 1)) END
      INTO shared, mean_difference, stderr, mcnemar_p
      FROM d;
    only_a := ARRAY(SELECT t.k FROM unnest(a_items, a_values) t(k, v) WHERE t.v IS NOT NULL
                     EXCEPT SELECT t.k FROM unnest(b_items, b_values) t(k, v) WHERE t.v IS NOT NULL ORDER BY 1);
    only_b := ARRAY(SELECT t.k FROM unnest(b_items, b_values) t(k, v) WHERE t.v IS NOT NULL
                     EXCEPT SELECT t.k FROM unnest(a_items, a_values) t(k, v) WHERE t.v IS NOT NULL ORDER BY 1);
    ci_lo := mean_difference - z * stderr;
    ci_hi := mean_difference + z * stderr;
END;
$$;
GRANT EXECUTE ON FUNCTION paired_difference_v1(text[], double precision[], text[], double precision[])
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

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
CREATE FUNCTION evalledger.uncertainty_v1(
    estimate double precision, stderr double precision, n double precision, clusters bigint, method text,
    successes double precision, trials double precision, lo_limit double precision, hi_limit double precision)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
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

-- brain_eval_uncertainty_v1: beside a run's decision (never changing it), each of the seven
-- aggregates of brain_eval_scores_v1 with its uncertainty (uncertainty_v1's object), computed from
-- the run's question rows as the reader may read them. The unit of sampling is the question,
-- clustered by question_type (docs/statistics.md, "brain-eval"):
--   citation_rate, diagnosis_accuracy_mean, narrative_coherence_mean: the mean over the questions
--     that have the score, clustered_stderr_v1 by question_type ('clustered'), or the plain
--     mean_stderr_v1 when the questions are all of one type ('mean');
--   staleness_recognition_rate, lever_mapping_correctness, confidence_calibration_in_band: the
--     proportion of questions, as a mean of 0/1 the same way, with wilson_interval_v1's exact bound
--     when every question passed or failed;
--   hallucination_rate: the claims' ratio sum(hallucinations_detected) / sum(total_claims),
--     ratio_stderr_v1 clustered by question ('ratio'; n the claims, clusters the questions), with
--     the exact bound over the claims at 0 of n and n of n.
-- Intervals are cut to the scale (0-1; 1-5 for narrative coherence). An aggregate measured under a
-- hard criterion of the run's rubric also carries "criterion": {"op", "threshold", "bound"}, bound
-- being the interval's side that matters (the upper bound for <=, the lower for >=). An aggregate
-- with nothing to measure is null, as in aggregated_scores.
CREATE FUNCTION evalledger.brain_eval_uncertainty_v1(run_id uuid) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH run AS (
        SELECT r.definition AS policy
          FROM evalledger.brain_eval_log l JOIN evalledger.rubric r ON r.rubric_id = l.rubric_id
         WHERE l.eval_run_id = run_id),
    q AS (
        SELECT s.question_id::text AS item, s.question_type::text AS kind, s.citation_rate::float8 AS citation,
               s.hallucinations_detected::float8 AS bad, s.total_claims::float8 AS claims,
               CASE WHEN s.uses_stale_fixture THEN s.staleness_correctly_recognized::int::float8 END AS stale,
               s.diagnosis_accuracy_score::float8 AS diagnosis,
               (s.lever_mapping_violations = 0)::int::float8 AS levers,
               evalledger.confidence_in_band_v1(s.confidence_distribution, run.policy -> 'confidence_band')::int::float8 AS in_band,
               s.narrative_coherence_rating::float8 AS coherence
          FROM evalledger.brain_eval_question_score s, run
         WHERE s.eval_run_id = run_id),
    a AS (
        SELECT array_agg(q.item) AS items, array_agg(q.kind) AS kinds, array_agg(q.citation) AS citation,
               array_agg(q.bad) AS bad, array_agg(q.claims) AS claims, array_agg(q.stale) AS stale,
               array_agg(q.diagnosis) AS diagnosis, array_agg(q.levers) AS levers,
               array_agg(q.in_band) AS in_band, array_agg(q.coherence) AS coherence
          FROM q),
    -- One row per aggregate: its key, estimate, standard error, n, clusters, method, successes of
    -- trials (proportions), the scale.
    measured AS (
        SELECT k.key, k.vals, k.lo_limit, k.hi_limit, k.proportion,
               coalesce(c.stderr, m.stderr) AS stderr, c.estimate, c.n, c.cluster_count,
               CASE WHEN c.cluster_count >= 2 THEN 'clustered' ELSE 'mean' END AS method
          FROM a CROSS JOIN LATERAL (VALUES
                   ('citation_rate', a.citation, 0.0::float8, 1.0::float8, false),
                   ('staleness_recognition_rate', a.stale, 0, 1, true),
                   ('diagnosis_accuracy_mean', a.diagnosis, 0, 1, false),
                   ('lever_mapping_correctness', a.levers, 0, 1, true),
                   ('confidence_calibration_in_band', a.in_band, 0, 1, true),
                   ('narrative_coherence_mean', a.coherence, 1, 5, false)) k(key, vals, lo_limit, hi_limit, proportion)
         CROSS JOIN LATERAL evalledger.clustered_stderr_v1(k.vals, a.kinds) c
         CROSS JOIN LATERAL evalledger.mean_stderr_v1(k.vals) m),
    objects AS (
        SELECT m.key, evalledger.uncertainty_v1(
                   m.estimate, m.stderr, m.n, m.cluster_count, m.method,
                   CASE WHEN m.proportion THEN m.estimate * m.n END, CASE WHEN m.proportion THEN m.n END,
                   m.lo_limit, m.hi_limit) AS u
          FROM measured m
        UNION ALL
        SELECT 'hallucination_rate', evalledger.uncertainty_v1(
                   r.estimate, r.stderr, r.n, r.cluster_count, 'ratio',
                   (SELECT sum(b) FROM unnest(a.bad) b), r.n, 0, 1)
          FROM a CROSS JOIN LATERAL evalledger.ratio_stderr_v1(a.bad, a.claims, a.items) r)
    SELECT jsonb_object_agg(o.key,
               CASE WHEN o.u IS NOT NULL AND h.criterion IS NOT NULL
                    THEN o.u || jsonb_build_object('criterion', jsonb_build_object(
                             'op', h.criterion -> 'op', 'threshold', h.criterion -> 'threshold',
                             'bound', o.u -> 'ci95' -> (CASE WHEN h.criterion ->> 'op' = '<=' THEN 1 ELSE 0 END)))
                    ELSE o.u END)
      FROM objects o
      LEFT JOIN LATERAL (SELECT c AS criterion FROM run, jsonb_array_elements(run.policy -> 'hard_criteria') c
                          WHERE c ->> 'key' = o.key LIMIT 1) h ON true
$$;
GRANT EXECUTE ON FUNCTION brain_eval_uncertainty_v1(uuid)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- takes_quality_uncertainty_v1: beside a takes-quality verdict (never changing it), each rubric
-- dimension and the overall score with its uncertainty (uncertainty_v1's object), from the judge
-- verdict rows as the reader may read them (docs/statistics.md, "takes-quality"). The sample is
-- judged as a whole, so the unit is the judge's call: in the deciding cycle (the last, as the
-- receipt's), the contributing judges' scores of a dimension give its mean and mean_stderr_v1's
-- standard error ('judges'; n and clusters the judges, each its own), the interval cut to the
-- rubric's scale; the overall, the mean of the dimension means, is each judge's mean over the
-- dimensions the same way. Across cycles each dimension also carries "between_call_variance": the
-- variance of one judge's scores of it from call to call (each judge's sample variance over the
-- cycles it contributed to, pooled with weights n - 1; null when no judge contributed twice) and
-- "calls": the contributing calls that variance saw. The interval covers the judges' disagreement
-- on this one sample; it does not cover which takes were sampled, nor judges outside the panel.
-- NULL for a run without verdicts.
CREATE FUNCTION evalledger.takes_quality_uncertainty_v1(p_run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH run AS (
        SELECT r.definition AS policy, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v
                                         WHERE v.run_id = p_run_id) AS last_cycle
          FROM evalledger.eval_takes_quality_runs t JOIN evalledger.rubric r ON r.rubric_id = t.rubric_id
         WHERE t.id = p_run_id),
    dim AS (
        SELECT d ->> 'key' AS key FROM run, jsonb_array_elements(run.policy -> 'dimensions') d),
    calls AS (
        SELECT v.cycle, v.model, d.key, (v.scores ->> d.key)::float8 AS score
          FROM evalledger.eval_takes_quality_judge_verdicts v CROSS JOIN dim d
         WHERE v.run_id = p_run_id AND v.contributes),
    spread AS (
        -- Each judge's variance over its cycles, pooled: sum((n_m - 1) s_m^2) / sum(n_m - 1).
        SELECT j.key, sum((j.n - 1) * j.var) / nullif(sum(j.n - 1), 0) AS between_call_variance, sum(j.n) AS calls
          FROM (SELECT c.key, c.model, count(*) AS n, coalesce(var_samp(c.score), 0) AS var
                  FROM calls c GROUP BY c.key, c.model) j
         GROUP BY j.key),
    deciding AS (
        SELECT c.key, array_agg(c.score ORDER BY c.model) AS scores
          FROM calls c, run WHERE c.cycle = run.last_cycle GROUP BY c.key
        UNION ALL
        SELECT 'overall', array_agg(o.score ORDER BY o.model)
          FROM (SELECT c.model, avg(c.score) AS score FROM calls c, run WHERE c.cycle = run.last_cycle
                 GROUP BY c.model) o)
    SELECT jsonb_object_agg(d.key,
               evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                         (run.policy -> 'scale' ->> 'min')::float8, (run.policy -> 'scale' ->> 'max')::float8)
               || CASE WHEN d.key = 'overall' THEN '{}'::jsonb
                       ELSE jsonb_build_object('between_call_variance', s.between_call_variance, 'calls', coalesce(s.calls, 0)) END)
      FROM deciding d
      CROSS JOIN run
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(d.scores) m
      LEFT JOIN spread s ON s.key = d.key
     WHERE m.estimate IS NOT NULL
$$;
GRANT EXECUTE ON FUNCTION takes_quality_uncertainty_v1(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- takes_quality_receipt_uncertainty_v1: a takes-quality receipt with each dimension's optional
-- "stderr" and "ci95" (additive at schema_version 1, seed 000) from takes_quality_uncertainty_v1:
-- what `takes-quality show` prints. The stored receipt_json (what the completion trigger wrote,
-- what `run` prints and writes, and what the ledger re-derives) is left as it was.
CREATE FUNCTION evalledger.takes_quality_receipt_uncertainty_v1(p_run_id bigint, receipt jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN receipt IS NULL OR jsonb_typeof(receipt -> 'scores') IS DISTINCT FROM 'object' THEN receipt
                ELSE jsonb_set(receipt, '{scores}', coalesce((
                    SELECT jsonb_object_agg(s.key,
                               CASE WHEN jsonb_typeof(s.value) = 'object' AND u.u -> s.key IS NOT NULL
                                    THEN s.value || jsonb_build_object('stderr', u.u -> s.key -> 'stderr',
                                                                       'ci95', u.u -> s.key -> 'ci95')
                                    ELSE s.value END)
                      FROM jsonb_each(receipt -> 'scores') s,
                           (SELECT evalledger.takes_quality_uncertainty_v1(p_run_id) AS u) u), receipt -> 'scores')) END
$$;
GRANT EXECUTE ON FUNCTION takes_quality_receipt_uncertainty_v1(bigint, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_uncertainty_v1: beside a work-quality snapshot (never changing it or its
-- comparison), each dimension with its uncertainty (uncertainty_v1's object) over the judges whose
-- verdicts the Snapshot document holds (aggregate.verdicts[].scores): the judges' mean and
-- mean_stderr_v1's standard error ('judges'; n and clusters the judges, each its own), the 95%
-- interval cut to the active work-quality rubric's scale. One work product is judged, so the
-- interval covers the judges' disagreement on it, not other runs of the bot (docs/statistics.md,
-- "work-quality"). What `snapshot show` prints, and its optional aggregate.stderr and ci95. It reads
-- no run, only the document given and the rubric's scale, so it runs as its owner (the active
-- rubric is active_rubric_v1's, which only the writing roles' functions call).
CREATE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH scale AS (
        SELECT (r.definition -> 'scale' ->> 'min')::float8 AS lo, (r.definition -> 'scale' ->> 'max')::float8 AS hi
          FROM evalledger.rubric r WHERE r.rubric_id = evalledger.active_rubric_v1('work-quality')),
    scored AS (
        SELECT e.key, array_agg(e.value::text::float8) AS scores
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc -> 'aggregate' -> 'verdicts') = 'array'
                                         THEN doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) v
         CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(v -> 'scores') = 'object' THEN v -> 'scores' ELSE '{}' END) e
         WHERE jsonb_typeof(e.value) = 'number'
         GROUP BY e.key)
    SELECT jsonb_object_agg(s.key, evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                                             coalesce(scale.lo, 0), coalesce(scale.hi, 1)))
      FROM scored s
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(s.scores) m
      LEFT JOIN scale ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- brain_eval_intervals_v1: per completed run, one row per aggregate of seed 002 with its
-- uncertainty beside the decision (brain_eval_uncertainty_v1; docs/statistics.md, "brain-eval"):
-- the estimate, its standard error, the 95% interval, what n and the clusters count, the method,
-- and for an aggregate under a hard criterion the bound that matters. An aggregate with nothing to
-- measure has no row. Read under each reader's own row-level security (a reviewer: its own runs).
CREATE VIEW evalledger.brain_eval_intervals_v1 AS
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.question_catalog_version,
           l.started_at, l.completed_at, l.decision::text AS decision, u.key AS aggregate,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS n, (u.value ->> 'clusters')::bigint AS clusters, u.value ->> 'method' AS method,
           u.value -> 'criterion' ->> 'op' AS criterion_op,
           (u.value -> 'criterion' ->> 'threshold')::float8 AS criterion_threshold,
           (u.value -> 'criterion' ->> 'bound')::float8 AS criterion_bound
      FROM evalledger.brain_eval_log l
     CROSS JOIN LATERAL jsonb_each(evalledger.brain_eval_uncertainty_v1(l.eval_run_id)) u
     WHERE l.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.brain_eval_intervals_v1 IS
    'Per completed brain-eval run and aggregate, the estimate with its standard error and 95% interval (the question clustered by question_type; hallucinations the claims clustered by question), beside the decision, which uses the estimates only (docs/statistics.md).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.started_at IS 'When the run started (timestamptz; UTC in the ledger).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.decision IS 'The decision the database computed: pass, pass_with_notes, conditional or fail (unchanged by the interval).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.aggregate IS 'The aggregate, a key of aggregated_scores: citation_rate, hallucination_rate, staleness_recognition_rate, diagnosis_accuracy_mean, lever_mapping_correctness, confidence_calibration_in_band or narrative_coherence_mean.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.estimate IS 'The aggregate as aggregated_scores has it, in its own scale: 0-1 for the rates and diagnosis accuracy, 1-5 for narrative coherence.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.stderr IS 'Its standard error, in the estimate''s scale (0-1 or 1-5); NULL when it cannot be estimated.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, in the estimate''s scale (0-1 or 1-5), cut to the scale.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, in the estimate''s scale (0-1 or 1-5), cut to the scale.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.n IS 'Count: the questions measured (the claims, for hallucination_rate).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.clusters IS 'Count: the question types among them (the questions with claims, for hallucination_rate).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.method IS 'How the interval was computed: clustered, mean, ratio, wilson or exact (docs/statistics.md).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.criterion_op IS 'For an aggregate under a hard criterion of the run''s rubric: <= or >= (NULL otherwise).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.criterion_threshold IS 'The hard criterion''s threshold, 0-1 (NULL when none).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.criterion_bound IS 'The interval''s side that matters for the hard criterion, 0-1: the upper bound for <=, the lower for >= (NULL when none).';

REVOKE ALL ON brain_eval_intervals_v1 FROM PUBLIC;
GRANT SELECT ON brain_eval_intervals_v1 TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.brain_eval_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- takes_quality_intervals_v1: per completed takes-quality run, one row per rubric dimension and
-- the overall with its uncertainty over the deciding cycle's judges (takes_quality_uncertainty_v1;
-- docs/statistics.md, "takes-quality"), beside the verdict, which uses the means only. Read by
-- RevOps and auditors under their own row-level security.
CREATE VIEW evalledger.takes_quality_intervals_v1 AS
    SELECT r.id AS run_id, b.version AS rubric_version, r.started_at, r.completed_at, r.verdict, u.key AS dimension,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS judges, (u.value ->> 'between_call_variance')::float8 AS between_call_variance,
           (u.value ->> 'calls')::bigint AS calls
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     CROSS JOIN LATERAL jsonb_each(evalledger.takes_quality_uncertainty_v1(r.id)) u
     WHERE r.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.takes_quality_intervals_v1 IS
    'Per completed takes-quality run, each rubric dimension and the overall with its standard error and 95% interval over the deciding cycle''s judges, and the variance of a judge''s score between calls; covers the judges'' disagreement on this sample, not the sampling of takes (docs/statistics.md).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.run_id IS 'The run (eval_takes_quality_runs.id).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.rubric_version IS 'The rubric epoch the run was judged by, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.verdict IS 'The verdict the database computed: pass, fail or inconclusive (unchanged by the interval).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.dimension IS 'A rubric dimension (accuracy, attribution, ...) or overall (the mean of the dimension means).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.estimate IS 'The mean of the contributing judges'' scores, on the rubric''s scale (1-10), exact.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.stderr IS 'Its standard error over the judges, on the rubric''s scale (1-10); NULL with one judge.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.judges IS 'Count: the judges that contributed in the deciding cycle.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.between_call_variance IS 'The variance of one judge''s score between calls, over the cycles (the rubric''s scale squared); NULL for the overall and when no judge contributed twice.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.calls IS 'Count: the contributing calls across cycles that the between-call variance saw (NULL for the overall).';

REVOKE ALL ON takes_quality_intervals_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_intervals_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- work_quality_intervals_v1: per completed work-quality snapshot, one row per dimension with its
-- uncertainty over the judges (work_quality_uncertainty_v1 of the stored Snapshot document;
-- docs/statistics.md, "work-quality"), beside the comparison, which uses the means only. Read by
-- RevOps and auditors under their own row-level security.
CREATE VIEW evalledger.work_quality_intervals_v1 AS
    SELECT s.snapshot_id, s.name, s.run_id, s.at, s.completed_at, u.key AS dimension,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS judges
      FROM evalledger.eval_work_quality_snapshots s
     CROSS JOIN LATERAL jsonb_each(evalledger.work_quality_uncertainty_v1(s.snapshot_json)) u
     WHERE s.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.work_quality_intervals_v1 IS
    'Per completed work-quality snapshot and dimension, the judges'' mean with its standard error and 95% interval; covers the judges'' disagreement on this work product, not other runs of the bot (docs/statistics.md).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.name IS 'The target (a bot or feature) the snapshot is of.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.completed_at IS 'When the snapshot was completed (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.dimension IS 'A dimension of the rubric: efficacy, completeness, output_quality, restraint, reliability, value_for_money or overall.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.estimate IS 'The judges'' mean score, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.stderr IS 'Its standard error over the judges, on the rubric''s scale (0-1); NULL with one judge.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.judges IS 'Count: the judges whose scores the snapshot holds for the dimension.';

REVOKE ALL ON work_quality_intervals_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_intervals_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- brain_eval_uncertainty_v1 runs with its reader's rights and counts the questions in band as the
-- decision does (issue 36).
GRANT EXECUTE ON FUNCTION confidence_in_band_v1(jsonb, jsonb)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
