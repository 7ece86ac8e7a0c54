-- snapshot compare pairs judges by their mean (issue 36, items 4 and 5): with --repeats K a judge's K
-- verdicts in a Snapshot document are one judge, its score of a dimension its mean over them, as
-- the snapshot's own mean_scores count it. work_quality_paired_v1 paired each verdict as a judge of
-- its own ("model (2)" for a model's second), so a snapshot of K > 1 compared K rows per judge. The
-- fold is one function (work_quality_judge_scores_v1), read by work_quality_paired_v1 and
-- work_quality_uncertainty_v1 (whose fold it was, unchanged). A snapshot of one repeat per judge
-- pairs and is decided exactly as before.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- work_quality_judge_scores_v1: each judge's score of each dimension in a Snapshot document
-- (aggregate.verdicts[].scores): its mean over its repeats (the verdicts of one model, --repeats K;
-- its one verdict when K is 1), the fold the snapshot's own mean_scores are decided by
-- (work_quality_decide_v1; docs/statistics.md, "Judge repeats"). One row per judge and dimension it
-- scored with a number; judge is the verdicts' model, NULL for a verdict that names none (each such
-- verdict a judge of its own). The one home of the fold for a document: work_quality_uncertainty_v1
-- and work_quality_paired_v1 read it, so an interval and a paired comparison count each judge once.
CREATE FUNCTION evalledger.work_quality_judge_scores_v1(doc jsonb)
RETURNS TABLE (judge text, dimension text, score float8)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT v ->> 'model', e.key, avg(e.value::text::float8)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc -> 'aggregate' -> 'verdicts') = 'array'
                                     THEN doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) WITH ORDINALITY x(v, n)
     CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(v -> 'scores') = 'object' THEN v -> 'scores' ELSE '{}' END) e
     WHERE jsonb_typeof(e.value) = 'number'
     GROUP BY e.key, coalesce(v ->> 'model', n::text), v ->> 'model'
$$;
GRANT EXECUTE ON FUNCTION work_quality_judge_scores_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_uncertainty_v1: beside a work-quality snapshot (never changing it or its
-- comparison), each dimension with its uncertainty (uncertainty_v1's object) over the judges whose
-- verdicts the Snapshot document holds (aggregate.verdicts[].scores): the judges' mean and
-- mean_stderr_v1's standard error ('judges'; n and clusters the judges, each its own), the 95%
-- interval cut to the active work-quality rubric's scale. One work product is judged, so the
-- interval covers the judges' disagreement on it, not other runs of the bot (docs/statistics.md,
-- "work-quality"). What `snapshot show` prints, and its optional aggregate.stderr and ci95. It reads
-- no run, only the document given and the rubric's scale, so it runs as its owner (the active
-- rubric is active_rubric_v1's, which only the writing roles' functions call).
CREATE OR REPLACE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH scale AS (
        SELECT (r.definition -> 'scale' ->> 'min')::float8 AS lo, (r.definition -> 'scale' ->> 'max')::float8 AS hi
          FROM evalledger.rubric r WHERE r.rubric_id = evalledger.active_rubric_v1('work-quality')),
    scored AS (
        -- A judge's score: its mean over its repeats (work_quality_judge_scores_v1; its one when K is 1).
        SELECT j.dimension AS key, array_agg(j.score) AS scores
          FROM evalledger.work_quality_judge_scores_v1(doc) j
         GROUP BY j.dimension)
    SELECT jsonb_object_agg(s.key, evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                                             coalesce(scale.lo, 0), coalesce(scale.hi, 1)))
      FROM scored s
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(s.scores) m
      LEFT JOIN scale ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_paired_v1: snapshot B against snapshot A (two Snapshot documents), paired by judge. One
-- work product is scored by 2 or 3 judges, so the items are the judges: aggregate.verdicts[] by
-- model, each judge once with its mean over its repeats (work_quality_judge_scores_v1: with
-- --repeats K a model's K verdicts are one judge, as the snapshot's own mean_scores count it; a
-- verdict naming no model is left out). One paired_object_v1 per dimension of the policy
-- (work_quality_policy_v1), in its order; a judge is shared in a dimension when both snapshots hold
-- its finite score there. Differences are B - A.
-- docs/statistics.md, "Paired comparisons and gates".
CREATE OR REPLACE FUNCTION evalledger.work_quality_paired_v1(a_doc jsonb, b_doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH dims AS (
        SELECT d.dim, d.n FROM jsonb_array_elements_text(evalledger.work_quality_policy_v1() -> 'dimensions')
                               WITH ORDINALITY d(dim, n)),
    scored AS (
        SELECT s.side, j.dimension AS dim, j.judge, j.score AS x
          FROM (VALUES ('a', a_doc), ('b', b_doc)) s(side, doc)
         CROSS JOIN LATERAL evalledger.work_quality_judge_scores_v1(s.doc) j
         WHERE j.judge IS NOT NULL)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(d.dim, a.items, a.vals, b.items, b.vals) ORDER BY d.n), '[]')
      FROM dims d
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_paired_v1(jsonb, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
