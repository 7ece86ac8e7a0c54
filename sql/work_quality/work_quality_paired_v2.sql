-- work_quality_paired_v2: snapshot B against snapshot A (two Snapshot documents), paired by judge,
-- over the dimensions of the policy given (work_quality_policy_v2 of a rubric). One work product is
-- scored by 2 or 3 judges, so the items are the judges: aggregate.verdicts[] by model, each judge
-- once with its mean over its repeats (work_quality_judge_scores_v1: with --repeats K a model's K
-- verdicts are one judge, as the snapshot's own mean_scores count it; a verdict naming no model is
-- left out). One paired_object_v1 per dimension of the policy, in its order; a judge is shared in a
-- dimension when both snapshots hold its finite score there. Differences are B - A. A gate decision
-- pairs under the rubric it is decided under (gate_decide_v2; work_quality_paired_v1, which read the
-- active rubric's, is dropped). docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.work_quality_paired_v2(a_doc jsonb, b_doc jsonb, policy jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH dims AS (
        SELECT d.dim, d.n FROM jsonb_array_elements_text(policy -> 'dimensions') WITH ORDINALITY d(dim, n)),
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
GRANT EXECUTE ON FUNCTION work_quality_paired_v2(jsonb, jsonb, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;
