-- work_quality_uncertainty_v2: work_quality_uncertainty_v1's object for a Snapshot document, its 95%
-- intervals cut to the scale of the rubric given (a stored snapshot's own rubric_id: the one its
-- verdicts were admitted under), not whichever rubric is active when it is asked. So what a
-- snapshot's completion stored and what the recompute derives again use the same scale, whatever was
-- activated since (eval_work_quality_snapshot_uncertainty, ledger_recompute_v3). Each dimension over
-- the judges whose verdicts the document holds: the judges' mean (their mean over repeats,
-- work_quality_judge_scores_v1) and mean_stderr_v1's standard error ('judges'; n and clusters the
-- judges). The judges' scores are summed in the order of their models, byte by byte (COLLATE "C"; a
-- judge naming none after them, by its score), never a plan's (docs/statistics.md, "Order of
-- summation"). SECURITY DEFINER: it reads the rubric's scale and nothing else.
CREATE FUNCTION evalledger.work_quality_uncertainty_v2(doc jsonb, p_rubric_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH scale AS (
        SELECT (r.definition -> 'scale' ->> 'min')::float8 AS lo, (r.definition -> 'scale' ->> 'max')::float8 AS hi
          FROM evalledger.rubric r WHERE r.rubric_id = p_rubric_id),
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
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v2(jsonb, bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;
