-- paired_difference_v1: two runs over the items they share. A run is two parallel arrays, item
-- keys and values (a NULL value is no answer: the item is not shared). For each shared item
-- d_i = b_i - a_i (B the later run); the mean difference, its standard error by the central limit
-- theorem (sample standard deviation of d, n - 1 in its denominator, over sqrt(n); Miller 2024,
-- section 4) and the 95% interval mean +- z * stderr, z = normal_quantile_v1(0.975). only_a and
-- only_b list the items one run has and the other has not (never silently dropped). When every
-- shared value is 0 or 1 (pass/fail), mcnemar_p is mcnemar_exact_v1 of the discordant pairs. An
-- item key given twice in one run is refused. The differences are summed in the order of their
-- item keys, compared byte by byte (COLLATE "C"), never in the order a join yields them, so the same
-- items give the same bits whatever the arrays' order. docs/statistics.md, "Paired" and "Order of
-- summation".
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
         d AS (SELECT k, a.v AS av, b.v AS bv, b.v - a.v AS d FROM a JOIN b USING (k))
    SELECT count(*), avg(d.d ORDER BY d.k COLLATE "C"), stddev_samp(d.d ORDER BY d.k COLLATE "C") / sqrt(count(*)),
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
