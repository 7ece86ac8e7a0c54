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
-- Its numbers are float8 turned into jsonb, whose digits follow the session's extra_float_digits
-- (at 0 or below, fewer than it takes to read back the same value): pinned to 1, the shortest exact
-- digits, so no caller's setting changes what a completion stores or what a recompute compares.
CREATE FUNCTION evalledger.takes_quality_uncertainty_v1(p_run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
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
