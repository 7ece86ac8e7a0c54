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
CREATE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
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
