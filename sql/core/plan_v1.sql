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
CREATE FUNCTION evalledger.plan_v1(p_suite text DEFAULT NULL, p_runs integer DEFAULT 20,
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
