-- Statistics that do not depend on the reader's plan (issue 36): every float8 sum the statistics
-- functions make runs in a fixed order, never in the order a plan yields the rows. A float8 sum
-- rounds at each addition, so its last bits depend on the order of its terms; the functions summed in
-- whatever order their scan, join or grouping gave (a sequential scan in insert order, an index in key
-- order, a hash grouping in hash order), and that order differs between the completion (the runner,
-- storing brain_eval_run_uncertainty), a later reader (the auditor under row-level security, another
-- server version) and the recompute: the same stored rows could give 0.8311409617565029 once and
-- ...028 the next time, and `ledger verify --recompute` could name an honest run. Now:
--   mean_stderr_v1, clustered_stderr_v1, ratio_stderr_v1 sum in the arrays' order (the clusters in
--     the order of their first value); paired_difference_v1 sums the differences by item key, byte
--     by byte (COLLATE "C"), not in the join's order;
--   brain_eval_uncertainty_v1 hands them the question rows by question_id (COLLATE "C");
--   takes_quality_uncertainty_v1 sums a judge's calls by cycle, repeat and retry, its dimensions by
--     key, the judges by model; takes_quality_paired_v1 a judge's overall by dimension;
--     work_quality_judge_scores_v1 a judge's repeats in the document's order;
--     work_quality_uncertainty_v1 the judges by model; plan_v1 the runs from the latest back; the
--     judge-repeat views (takes_quality_repeat_variance_v1, work_quality_repeat_variance_v1) a group's
--     repeats by repeat and retry, the groups by run (or snapshot) and model, the items by run.
-- Nothing else changes: the same rows in that order give what they gave (docs/statistics.md, "Order
-- of summation"). And the runs completed before migration 0148 made brain_eval_run_uncertainty get
-- their stored uncertainty here, by the functions as they sum now (0148 left them to this migration:
-- stored by the functions it had, the recompute could have named them).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- mean_stderr_v1: the mean of independent values and its standard error by the central limit
-- theorem, the sample standard deviation (n - 1 in its denominator) over sqrt(n) (scipy.stats.sem;
-- Miller 2024, "Adding Error Bars to Evals", section 2). n counts the non-NULL values; estimate is
-- NULL with none, stderr NULL with fewer than 2. The values are summed in the array's order
-- (never a plan's), so the same array gives the same bits. docs/statistics.md, "Mean" and "Order of
-- summation".
CREATE OR REPLACE FUNCTION evalledger.mean_stderr_v1(
    x double precision[], OUT estimate double precision, OUT stderr double precision, OUT n bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT avg(t.v ORDER BY t.i), stddev_samp(t.v ORDER BY t.i) / sqrt(count(t.v)), count(t.v)
      FROM unnest(x) WITH ORDINALITY AS t(v, i)
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
-- NULL (nothing to estimate the between-cluster variance from). Every sum runs in a fixed order,
-- never a plan's: the values in the array's order, within a cluster too, and the clusters in the
-- order of their first value in the array. docs/statistics.md, "Clustered" and "Order of summation".
CREATE OR REPLACE FUNCTION evalledger.clustered_stderr_v1(
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
CREATE OR REPLACE FUNCTION evalledger.ratio_stderr_v1(
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
CREATE OR REPLACE FUNCTION evalledger.paired_difference_v1(
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

-- work_quality_judge_scores_v1: each judge's score of each dimension in a Snapshot document
-- (aggregate.verdicts[].scores): its mean over its repeats (the verdicts of one model, --repeats K;
-- its one verdict when K is 1), the fold the snapshot's own mean_scores are decided by
-- (work_quality_decide_v1; docs/statistics.md, "Judge repeats"). One row per judge and dimension it
-- scored with a number; judge is the verdicts' model, NULL for a verdict that names none (each such
-- verdict a judge of its own). The one home of the fold for a document: work_quality_uncertainty_v1
-- and work_quality_paired_v1 read it, so an interval and a paired comparison count each judge once.
-- A judge's repeats are summed in the document's order, never a plan's (docs/statistics.md, "Order
-- of summation").
CREATE OR REPLACE FUNCTION evalledger.work_quality_judge_scores_v1(doc jsonb)
RETURNS TABLE (judge text, dimension text, score float8)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT v ->> 'model', e.key, avg(e.value::text::float8 ORDER BY x.n)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc -> 'aggregate' -> 'verdicts') = 'array'
                                     THEN doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) WITH ORDINALITY x(v, n)
     CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(v -> 'scores') = 'object' THEN v -> 'scores' ELSE '{}' END) e
     WHERE jsonb_typeof(e.value) = 'number'
     GROUP BY e.key, coalesce(v ->> 'model', n::text), v ->> 'model'
$$;
GRANT EXECUTE ON FUNCTION work_quality_judge_scores_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

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
-- with nothing to measure is null, as in aggregated_scores. The question rows go to the statistics
-- functions in the order of their question_id, byte by byte (COLLATE "C"), never in the order a plan
-- reads them: the same rows give the same bits to the completion, the auditor and the recompute
-- (docs/statistics.md, "Order of summation").
CREATE OR REPLACE FUNCTION evalledger.brain_eval_uncertainty_v1(run_id uuid) RETURNS jsonb
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
        SELECT array_agg(q.item ORDER BY q.item COLLATE "C") AS items,
               array_agg(q.kind ORDER BY q.item COLLATE "C") AS kinds,
               array_agg(q.citation ORDER BY q.item COLLATE "C") AS citation,
               array_agg(q.bad ORDER BY q.item COLLATE "C") AS bad,
               array_agg(q.claims ORDER BY q.item COLLATE "C") AS claims,
               array_agg(q.stale ORDER BY q.item COLLATE "C") AS stale,
               array_agg(q.diagnosis ORDER BY q.item COLLATE "C") AS diagnosis,
               array_agg(q.levers ORDER BY q.item COLLATE "C") AS levers,
               array_agg(q.in_band ORDER BY q.item COLLATE "C") AS in_band,
               array_agg(q.coherence ORDER BY q.item COLLATE "C") AS coherence
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
                   (SELECT sum(b.b ORDER BY b.i) FROM unnest(a.bad) WITH ORDINALITY b(b, i)), r.n, 0, 1)
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
-- cycles and repeats it contributed to, pooled with weights n - 1; null when no judge contributed
-- twice; with --repeats K a judge's score in the deciding cycle is its mean over its repeats) and
-- "calls": the contributing calls that variance saw. The interval covers the judges' disagreement
-- on this one sample; it does not cover which takes were sampled, nor judges outside the panel.
-- NULL for a run without verdicts. Every float8 sum runs in a fixed order, never a plan's: a judge's
-- calls by cycle, repeat and retry, a judge's dimensions by key, the judges by model, keys and models
-- byte by byte (COLLATE "C"; docs/statistics.md, "Order of summation").
CREATE OR REPLACE FUNCTION evalledger.takes_quality_uncertainty_v1(p_run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH run AS (
        SELECT r.definition AS policy, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v
                                         WHERE v.run_id = p_run_id) AS last_cycle
          FROM evalledger.eval_takes_quality_runs t JOIN evalledger.rubric r ON r.rubric_id = t.rubric_id
         WHERE t.id = p_run_id),
    dim AS (
        SELECT d ->> 'key' AS key FROM run, jsonb_array_elements(run.policy -> 'dimensions') d),
    calls AS (
        SELECT v.cycle, v.model, v.repeat_no, v.retry_no, d.key, (v.scores ->> d.key)::float8 AS score
          FROM evalledger.eval_takes_quality_judge_verdicts v CROSS JOIN dim d
         WHERE v.run_id = p_run_id AND v.contributes),
    spread AS (
        -- Each judge's variance over its cycles, pooled: sum((n_m - 1) s_m^2) / sum(n_m - 1).
        SELECT j.key, sum((j.n - 1) * j.var ORDER BY j.model COLLATE "C") / nullif(sum(j.n - 1), 0) AS between_call_variance,
               sum(j.n) AS calls
          FROM (SELECT c.key, c.model, count(*) AS n,
                       coalesce(var_samp(c.score ORDER BY c.cycle, c.repeat_no, c.retry_no), 0) AS var
                  FROM calls c GROUP BY c.key, c.model) j
         GROUP BY j.key),
    deciding AS (
        -- A judge's score: its mean over its repeats in the cycle (its one score when K is 1).
        SELECT j.key, array_agg(j.score ORDER BY j.model COLLATE "C") AS scores
          FROM (SELECT c.key, c.model, avg(c.score ORDER BY c.repeat_no, c.retry_no) AS score
                  FROM calls c, run WHERE c.cycle = run.last_cycle
                 GROUP BY c.key, c.model) j
         GROUP BY j.key
        UNION ALL
        SELECT 'overall', array_agg(o.score ORDER BY o.model COLLATE "C")
          FROM (SELECT c.model, avg(c.score ORDER BY c.key COLLATE "C", c.repeat_no, c.retry_no) AS score
                  FROM calls c, run WHERE c.cycle = run.last_cycle
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

-- takes_quality_paired_v1: a run's receipt against a baseline receipt, paired by judge. The sample is
-- judged as a whole (seed 000), so the items are the judges: a judge is shared when both receipts
-- hold its score in a dimension's per_model (the contributing judges of each deciding cycle). One
-- paired_object_v1 per dimension of the baseline (in the rubric's order dims, then by name), then
-- "overall": each judge's mean over the baseline's dimensions (a judge lacking one has none).
-- Differences are now - baseline. A judge's overall sums its dimensions by name, byte by byte
-- (COLLATE "C"), never in a plan's order. docs/statistics.md, "Paired comparisons and gates" and
-- "Order of summation".
CREATE OR REPLACE FUNCTION evalledger.takes_quality_paired_v1(baseline jsonb, now_receipt jsonb, dims text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH keys AS (
        SELECT k.name, row_number() OVER (ORDER BY array_position(dims, k.name) NULLS LAST, k.name COLLATE "C") AS n
          FROM jsonb_object_keys(CASE WHEN jsonb_typeof(baseline -> 'scores') = 'object'
                                      THEN baseline -> 'scores' ELSE '{}' END) k(name)),
    scored AS (
        SELECT s.side, k.name, m.key AS model, (m.value::text)::float8 AS v
          FROM keys k
         CROSS JOIN (VALUES ('a', baseline), ('b', now_receipt)) s(side, doc)
         CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(s.doc -> 'scores' -> k.name -> 'per_model') = 'object'
                                            THEN s.doc -> 'scores' -> k.name -> 'per_model' ELSE '{}' END) m
         WHERE jsonb_typeof(m.value) = 'number'),
    judged AS (
        SELECT side, name, model, v FROM scored
        UNION ALL
        SELECT side, 'overall', model, avg(v ORDER BY name COLLATE "C") FROM scored
         GROUP BY side, model HAVING count(*) = (SELECT count(*) FROM keys)),
    rows AS (SELECT name, n FROM keys UNION ALL SELECT 'overall', (SELECT count(*) FROM keys) + 1)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(r.name, a.items, a.vals, b.items, b.vals) ORDER BY r.n), '[]')
      FROM rows r
      LEFT JOIN LATERAL (SELECT array_agg(j.model ORDER BY j.model) AS items, array_agg(j.v ORDER BY j.model) AS vals
                           FROM judged j WHERE j.name = r.name AND j.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(j.model ORDER BY j.model) AS items, array_agg(j.v ORDER BY j.model) AS vals
                           FROM judged j WHERE j.name = r.name AND j.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION takes_quality_paired_v1(jsonb, jsonb, text[]) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_uncertainty_v1: beside a work-quality snapshot (never changing it or its
-- comparison), each dimension with its uncertainty (uncertainty_v1's object) over the judges whose
-- verdicts the Snapshot document holds (aggregate.verdicts[].scores): the judges' mean and
-- mean_stderr_v1's standard error ('judges'; n and clusters the judges, each its own), the 95%
-- interval cut to the active work-quality rubric's scale. One work product is judged, so the
-- interval covers the judges' disagreement on it, not other runs of the bot (docs/statistics.md,
-- "work-quality"). What `snapshot show` prints, and its optional aggregate.stderr and ci95. It reads
-- no run, only the document given and the rubric's scale, so it runs as its owner (the active
-- rubric is active_rubric_v1's, which only the writing roles' functions call). The judges' scores
-- are summed in the order of their models, byte by byte (COLLATE "C"; a judge naming none after
-- them, by its score), never a plan's (docs/statistics.md, "Order of summation").
CREATE OR REPLACE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH scale AS (
        SELECT (r.definition -> 'scale' ->> 'min')::float8 AS lo, (r.definition -> 'scale' ->> 'max')::float8 AS hi
          FROM evalledger.rubric r WHERE r.rubric_id = evalledger.active_rubric_v1('work-quality')),
    scored AS (
        -- A judge's score: its mean over its repeats (work_quality_judge_scores_v1; its one when K is 1).
        SELECT j.dimension AS key, array_agg(j.score ORDER BY j.judge COLLATE "C", j.score) AS scores
          FROM evalledger.work_quality_judge_scores_v1(doc) j
         GROUP BY j.dimension)
    SELECT jsonb_object_agg(s.key, evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                                             coalesce(scale.lo, 0), coalesce(scale.hi, 1)))
      FROM scored s
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(s.scores) m
      LEFT JOIN scale ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- plan_v1: before a run, what its sample can detect (issue 36, item 6; docs/statistics.md,
-- "Planning"). For each suite's subject (a brain; a takes-quality rubric epoch; a work-quality
-- target) and each measure it is judged on, from the last p_runs completed runs of that subject in
-- the suite's intervals view (brain_eval_intervals_v1, takes_quality_intervals_v1,
-- work_quality_intervals_v1, read under the reader's own row-level security):
--   sd          the spread of one unit (a question, a claim, a judge's score): each run's n * stderr^2
--               (the variance of one unit, with the clustering's design effect where the stderr is
--               clustered), pooled over the runs with weights n - 1; NULL when no run measured one
--   n           the units of the latest run (what the next run is expected to have)
--   mde         min_detectable_effect_v1(sqrt(2) * sd, n): the smallest drop between two runs of n
--               units each that a two-tailed test at 5% detects with 80% power (the two runs' means
--               are independent samples, so the difference's unit spread is sqrt(2) * sd); NULL when
--               the history shows no spread (sd NULL or 0: nothing to plan from)
--   threshold   the drop the suite's gate calls a regression, read from the database's own policy:
--               takes-quality's regress threshold (takes_quality_threshold_v1, seed 000's 0.5, on each
--               dimension and the overall), work-quality's rubric regress_tolerance (on overall and
--               value_for_money, seed 003); brain-eval's rubric gates on criteria, not on a drop: NULL
--   detectable  mde <= threshold (NULL without either)
--   effect, needed_n  the drop asked about (p_effect) and sample_size_v1(sqrt(2) * sd, p_effect):
--               the units a run needs to detect it
-- p_suite NULL plans every suite. Nothing is decided or stored. The runs' variances are summed from
-- the latest run back, never in a plan's order (docs/statistics.md, "Order of summation").
CREATE OR REPLACE FUNCTION evalledger.plan_v1(p_suite text DEFAULT NULL, p_runs integer DEFAULT 20,
                                   p_effect double precision DEFAULT NULL)
RETURNS TABLE (suite text, subject text, measure text, runs bigint, n bigint, sd double precision,
               mde double precision, threshold double precision, detectable boolean,
               effect double precision, needed_n bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH brain_runs AS (
        SELECT r.eval_run_id
          FROM (SELECT l.eval_run_id, row_number() OVER (PARTITION BY l.brain_under_test
                                                         ORDER BY l.completed_at DESC, l.eval_run_id DESC) AS k
                  FROM evalledger.brain_eval_log l
                 WHERE l.completed_at IS NOT NULL AND p_suite IS DISTINCT FROM 'takes-quality'
                   AND p_suite IS DISTINCT FROM 'work-quality') r
         WHERE r.k <= p_runs),
    takes_runs AS (
        SELECT r.id
          FROM (SELECT t.id, row_number() OVER (PARTITION BY t.rubric_id ORDER BY t.completed_at DESC, t.id DESC) AS k
                  FROM evalledger.eval_takes_quality_runs t
                 WHERE t.completed_at IS NOT NULL AND p_suite IS DISTINCT FROM 'brain-eval'
                   AND p_suite IS DISTINCT FROM 'work-quality') r
         WHERE r.k <= p_runs),
    work_runs AS (
        SELECT r.snapshot_id
          FROM (SELECT s.snapshot_id, row_number() OVER (PARTITION BY s.name
                                                         ORDER BY s.completed_at DESC, s.snapshot_id DESC) AS k
                  FROM evalledger.eval_work_quality_snapshots s
                 WHERE s.completed_at IS NOT NULL AND p_suite IS DISTINCT FROM 'brain-eval'
                   AND p_suite IS DISTINCT FROM 'takes-quality') r
         WHERE r.k <= p_runs),
    units AS (
        SELECT 'brain-eval'::text AS suite, i.brain_under_test::text AS subject, i.aggregate AS measure,
               i.completed_at, i.eval_run_id::text AS run, i.stderr, i.n, NULL::float8 AS threshold
          FROM evalledger.brain_eval_intervals_v1 i
         WHERE i.eval_run_id IN (SELECT eval_run_id FROM brain_runs)
        UNION ALL
        SELECT 'takes-quality', i.rubric_version, i.dimension, i.completed_at, lpad(i.run_id::text, 20, '0'),
               i.stderr, i.judges, evalledger.takes_quality_threshold_v1()::float8
          FROM evalledger.takes_quality_intervals_v1 i
         WHERE i.run_id IN (SELECT id FROM takes_runs)
        UNION ALL
        SELECT 'work-quality', i.name, i.dimension, i.completed_at, lpad(i.snapshot_id::text, 20, '0'), i.stderr,
               i.judges, CASE WHEN i.dimension IN ('overall', 'value_for_money')
                              THEN (evalledger.work_quality_policy_v1() ->> 'regress_tolerance')::float8 END
          FROM evalledger.work_quality_intervals_v1 i
         WHERE i.snapshot_id IN (SELECT snapshot_id FROM work_runs)),
    pooled AS (
        SELECT u.suite, u.subject, u.measure, count(*) AS runs,
               sum((u.n - 1) * u.n * u.stderr * u.stderr ORDER BY u.completed_at DESC, u.run COLLATE "C" DESC)
                   FILTER (WHERE u.n >= 2 AND u.stderr IS NOT NULL)
                   / nullif(sum(u.n - 1) FILTER (WHERE u.n >= 2 AND u.stderr IS NOT NULL), 0) AS variance,
               (array_agg(u.n ORDER BY u.completed_at DESC, u.run DESC))[1] AS n,
               max(u.threshold) AS threshold
          FROM units u
         GROUP BY u.suite, u.subject, u.measure),
    planned AS (
        SELECT p.*, evalledger.min_detectable_effect_v1(sqrt(2 * nullif(p.variance, 0)), p.n) AS mde,
               evalledger.sample_size_v1(sqrt(2 * nullif(p.variance, 0)), p_effect) AS needed_n
          FROM pooled p)
    SELECT p.suite, p.subject, p.measure, p.runs, p.n, sqrt(p.variance), p.mde, p.threshold,
           p.mde <= p.threshold, p_effect, p.needed_n
      FROM planned p
     ORDER BY p.suite, p.subject, p.measure
$$;
GRANT EXECUTE ON FUNCTION plan_v1(text, integer, double precision) TO evalledger_revops, evalledger_auditor;

-- takes_quality_repeat_variance_v1: judge noise told from item variance (docs/statistics.md, "Judge
-- repeats"), per rubric version and dimension over the completed takes-quality runs the reader may
-- read. The item is a run's sample of takes; a group is one judge's contributing repeats of the item
-- in one cycle (--repeats K). judge_variance (within an item, between repeats) pools the groups'
-- sample variances with weights n - 1: sum((n_g - 1) s_g^2) / sum(n_g - 1), NULL when no group has
-- two repeats. item_variance (between items) is the sample variance of the items' means (each the
-- mean of all its contributing scores of the dimension), NULL with fewer than two items. When
-- item_variance is not larger than judge_variance / (judges x repeats), the runs' differences are
-- within the judges' own noise. flaky_items counts the runs with a straddle (takes_quality_flaky_v1).
-- Every float8 sum runs in a fixed order, never a plan's: a group's repeats by repeat and retry, the
-- groups and an item's scores by run, model (byte by byte), cycle, repeat and retry, the items by
-- run (docs/statistics.md, "Order of summation").
CREATE OR REPLACE VIEW evalledger.takes_quality_repeat_variance_v1 AS
    WITH scored AS (
        SELECT r.id AS run_id, b.version AS rubric_version, d ->> 'key' AS dimension, v.model, v.cycle,
               v.repeat_no, v.retry_no, (v.scores ->> (d ->> 'key'))::float8 AS score
          FROM evalledger.eval_takes_quality_runs r
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') d
          JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = r.id AND v.contributes
         WHERE r.completed_at IS NOT NULL),
    groups AS (
        SELECT s.rubric_version, s.dimension, s.run_id, s.model, s.cycle, count(*) AS n,
               coalesce(var_samp(s.score ORDER BY s.repeat_no, s.retry_no), 0) AS var
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.run_id, s.model, s.cycle),
    within AS (
        SELECT g.rubric_version, g.dimension,
               sum((g.n - 1) * g.var ORDER BY g.run_id, g.model COLLATE "C", g.cycle) / nullif(sum(g.n - 1), 0)
                   AS judge_variance,
               sum(g.n) AS calls, max(g.n) AS max_repeats
          FROM groups g GROUP BY g.rubric_version, g.dimension),
    items AS (
        SELECT s.rubric_version, s.dimension, s.run_id,
               avg(s.score ORDER BY s.model COLLATE "C", s.cycle, s.repeat_no, s.retry_no) AS item_mean
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.run_id),
    between_items AS (
        SELECT i.rubric_version, i.dimension, count(*) AS items, var_samp(i.item_mean ORDER BY i.run_id) AS item_variance
          FROM items i GROUP BY i.rubric_version, i.dimension)
    SELECT w.rubric_version, w.dimension, bi.items, w.calls, w.max_repeats, w.judge_variance, bi.item_variance,
           (SELECT count(DISTINCT f.run_id) FROM evalledger.takes_quality_flaky_v1 f
             WHERE f.rubric_version = w.rubric_version AND f.dimension = w.dimension) AS flaky_items
      FROM within w JOIN between_items bi USING (rubric_version, dimension);
COMMENT ON VIEW evalledger.takes_quality_repeat_variance_v1 IS
    'Per rubric version and dimension over completed takes-quality runs: the judges'' noise (the variance between one judge''s repeats of one item, pooled) beside the variance between items (the runs'' means), and how many items are flaky (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.rubric_version IS 'The rubric epoch, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.dimension IS 'A rubric dimension (accuracy, attribution, ...).';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.items IS 'Count: the completed runs (items) with a contributing score of the dimension.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.calls IS 'Count: the contributing judge calls (repeats and cycles) behind the row.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.max_repeats IS 'Count: the most contributing repeats one judge gave one item in one cycle (1: no repeats, judge_variance NULL).';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.judge_variance IS 'Within-item variance between repeats of one judge in one cycle, pooled with weights n - 1 (the rubric''s scale squared); NULL when no judge was asked twice.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.item_variance IS 'Between-item variance: the sample variance of the runs'' mean scores (the rubric''s scale squared); NULL with fewer than two runs.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.flaky_items IS 'Count: the runs with a judge whose repeats straddle a rubric threshold on this dimension (takes_quality_flaky_v1).';

REVOKE ALL ON takes_quality_repeat_variance_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_repeat_variance_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_repeat_variance_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- work_quality_repeat_variance_v1: judge noise told from item variance (docs/statistics.md, "Judge
-- repeats"), per rubric version and dimension over the completed work-quality snapshots judged by
-- a panel (not imports) that the reader may read. The item is a snapshot's work product; a group is
-- one judge's contributing repeats of it (--repeats K). judge_variance (within an item, between
-- repeats) pools the groups' sample variances with weights n - 1, NULL when no judge was asked twice;
-- item_variance (between items) is the sample variance of the snapshots' means (each the mean of all
-- its contributing scores of the dimension), NULL with fewer than two snapshots. flaky_items counts
-- the snapshots with a straddle (work_quality_flaky_v1). Every float8 sum runs in a fixed order,
-- never a plan's: a group's repeats by repeat and retry, the groups and a snapshot's scores by
-- snapshot, model (byte by byte), repeat and retry, the snapshots by id (docs/statistics.md, "Order
-- of summation").
CREATE OR REPLACE VIEW evalledger.work_quality_repeat_variance_v1 AS
    WITH scored AS (
        SELECT s.snapshot_id, b.version AS rubric_version, d ->> 'key' AS dimension, v.model,
               v.repeat_no, v.retry_no, (v.scores ->> (d ->> 'key'))::float8 AS score
          FROM evalledger.eval_work_quality_snapshots s
          JOIN evalledger.rubric b ON b.rubric_id = s.rubric_id
         CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') d
          JOIN evalledger.eval_work_quality_judge_verdicts v ON v.snapshot_id = s.snapshot_id AND v.contributes
         WHERE s.completed_at IS NOT NULL AND s.origin = 'run'),
    groups AS (
        SELECT s.rubric_version, s.dimension, s.snapshot_id, s.model, count(*) AS n,
               coalesce(var_samp(s.score ORDER BY s.repeat_no, s.retry_no), 0) AS var
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.snapshot_id, s.model),
    within AS (
        SELECT g.rubric_version, g.dimension,
               sum((g.n - 1) * g.var ORDER BY g.snapshot_id, g.model COLLATE "C") / nullif(sum(g.n - 1), 0)
                   AS judge_variance,
               sum(g.n) AS calls, max(g.n) AS max_repeats
          FROM groups g GROUP BY g.rubric_version, g.dimension),
    items AS (
        SELECT s.rubric_version, s.dimension, s.snapshot_id,
               avg(s.score ORDER BY s.model COLLATE "C", s.repeat_no, s.retry_no) AS item_mean
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.snapshot_id),
    between_items AS (
        SELECT i.rubric_version, i.dimension, count(*) AS items, var_samp(i.item_mean ORDER BY i.snapshot_id) AS item_variance
          FROM items i GROUP BY i.rubric_version, i.dimension)
    SELECT w.rubric_version, w.dimension, bi.items, w.calls, w.max_repeats, w.judge_variance, bi.item_variance,
           (SELECT count(DISTINCT f.snapshot_id) FROM evalledger.work_quality_flaky_v1 f
             WHERE f.rubric_version = w.rubric_version AND f.dimension = w.dimension) AS flaky_items
      FROM within w JOIN between_items bi USING (rubric_version, dimension);
COMMENT ON VIEW evalledger.work_quality_repeat_variance_v1 IS
    'Per rubric version and dimension over completed work-quality snapshots judged by a panel: the judges'' noise (the variance between one judge''s repeats of one work product, pooled) beside the variance between snapshots, and how many are flaky (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.rubric_version IS 'The rubric epoch, e.g. v1.0.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.dimension IS 'A rubric dimension (efficacy, completeness, ..., overall).';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.items IS 'Count: the completed snapshots (items) with a contributing score of the dimension.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.calls IS 'Count: the contributing judge calls (repeats) behind the row.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.max_repeats IS 'Count: the most contributing repeats one judge gave one snapshot (1: no repeats, judge_variance NULL).';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.judge_variance IS 'Within-item variance between repeats of one judge, pooled with weights n - 1 (the rubric''s scale squared); NULL when no judge was asked twice.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.item_variance IS 'Between-item variance: the sample variance of the snapshots'' mean scores (the rubric''s scale squared); NULL with fewer than two snapshots.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.flaky_items IS 'Count: the snapshots with a judge whose repeats straddle the regression line on this dimension (work_quality_flaky_v1).';

REVOKE ALL ON work_quality_repeat_variance_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_repeat_variance_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_repeat_variance_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- Every run completed before brain_eval_run_uncertainty was made and without its row: its
-- uncertainty, computed now by the function its completion would have called, from its question
-- rows and rubric as stored (journalled as INSERTs).
INSERT INTO brain_eval_run_uncertainty (eval_run_id, uncertainty, reviewer_user_id, run_created_at)
SELECT l.eval_run_id, coalesce(brain_eval_uncertainty_v1(l.eval_run_id), '{}'::jsonb), l.reviewer_user_id, l.created_at
  FROM brain_eval_log l
 WHERE l.completed_at IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM brain_eval_run_uncertainty u WHERE u.eval_run_id = l.eval_run_id)
 ORDER BY l.created_at, l.eval_run_id;

RESET ROLE;
