-- work_quality_judge_scores_v1: each judge's score of each dimension in a Snapshot document
-- (aggregate.verdicts[].scores): its mean over its repeats (the verdicts of one model, --repeats K;
-- its one verdict when K is 1), the fold the snapshot's own mean_scores are decided by
-- (work_quality_decide_v1; docs/statistics.md, "Judge repeats"). One row per judge and dimension it
-- scored with a number; judge is the verdicts' model, NULL for a verdict that names none (each such
-- verdict a judge of its own). The one home of the fold for a document: work_quality_uncertainty_v1
-- and work_quality_paired_v2 read it, so an interval and a paired comparison count each judge once.
-- A judge's repeats are summed in the document's order, never a plan's (docs/statistics.md, "Order
-- of summation"). A score past float8's range is refused naming the verdict, its judge and the
-- dimension (score_float8_v1), never cast to a bare "out of range".
CREATE FUNCTION evalledger.work_quality_judge_scores_v1(doc jsonb)
RETURNS TABLE (judge text, dimension text, score float8)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT v ->> 'model', e.key,
           avg(evalledger.score_float8_v1(e.value, format('a Snapshot document, aggregate.verdicts[%s] (judge %s), dimension %s',
                                                          x.n - 1, coalesce(v ->> 'model', 'unnamed'), e.key))
               ORDER BY x.n)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc -> 'aggregate' -> 'verdicts') = 'array'
                                     THEN doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) WITH ORDINALITY x(v, n)
     CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(v -> 'scores') = 'object' THEN v -> 'scores' ELSE '{}' END) e
     WHERE jsonb_typeof(e.value) = 'number'
     GROUP BY e.key, coalesce(v ->> 'model', n::text), v ->> 'model'
$$;
GRANT EXECUTE ON FUNCTION work_quality_judge_scores_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;
