-- gate_scores_in_range_v1: a gate's sides hold no judge's score past float8's range. A gate
-- (eval_gate_decision_admit_v1) reads the judges' scores of the documents the runner names as float8
-- (work_quality_paired_v2 by work_quality_judge_scores_v1, takes_quality_paired_v1), where a number
-- past its range (1e400, or 1e-400, which would round to zero) was refused by a bare cast error naming
-- neither the document, the judge nor the dimension. Before the gate is decided, each score that gate
-- reads is read by score_float8_v1, in document order (the baseline first), and the first past the
-- range is refused in one line naming the side and its ref, the verdict or judge and the dimension:
-- work-quality, every number of aggregate.verdicts[].scores of both Snapshot documents; takes-quality,
-- every number of scores.<dimension>.per_model of the baseline receipt (the other side is the run's
-- receipt, the database's own). Nothing is stored: the insert fails whole.
CREATE FUNCTION evalledger.gate_scores_in_range_v1(
    p_suite text, baseline jsonb, baseline_ref text, current_doc jsonb, current_ref text)
RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF p_suite = 'work-quality' THEN
        PERFORM evalledger.score_float8_v1(e.value, format('the %s document (%s), aggregate.verdicts[%s] (judge %s), dimension %s',
                                                           s.side, s.ref, x.n - 1, coalesce(x.v ->> 'model', 'unnamed'), e.key))
           FROM (VALUES (1, 'baseline', baseline_ref, baseline), (2, 'current', current_ref, current_doc)) s(k, side, ref, doc)
          CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(s.doc -> 'aggregate' -> 'verdicts') = 'array'
                                                       THEN s.doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) WITH ORDINALITY x(v, n)
          CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(x.v -> 'scores') = 'object' THEN x.v -> 'scores' ELSE '{}' END) e
          WHERE jsonb_typeof(e.value) = 'number';
    ELSIF p_suite = 'takes-quality' THEN
        PERFORM evalledger.score_float8_v1(m.value, format('the baseline receipt (%s), judge %s, dimension %s',
                                                           baseline_ref, m.key, d.key))
           FROM jsonb_each(CASE WHEN jsonb_typeof(baseline -> 'scores') = 'object' THEN baseline -> 'scores' ELSE '{}' END) d
          CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(d.value -> 'per_model') = 'object'
                                             THEN d.value -> 'per_model' ELSE '{}' END) m
          WHERE jsonb_typeof(m.value) = 'number';
    END IF;
END;
$$;
