-- work_quality_policy_v2: the comparison policy as data, from the work-quality rubric given:
-- {"same_band": 0.05, "regress_tolerance": 0.08, "dimensions": [...]}; NULL for no such rubric. A
-- gate decision's own rubric (eval_gate_decision.work_quality_rubric_id: the one active when it was
-- decided) gives the policy it is decided and re-decided under, whatever was activated since
-- (gate_decide_v2, ledger_recompute_v3); work_quality_policy_v1 is this of the active rubric.
-- SECURITY DEFINER so every reader gets the same policy whatever it may read.
CREATE FUNCTION evalledger.work_quality_policy_v2(p_rubric_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT (r.definition -> 'compare')
           || jsonb_build_object('dimensions',
                  (SELECT jsonb_agg(d -> 'key' ORDER BY n)
                     FROM jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)))
      FROM evalledger.rubric r
     WHERE r.rubric_id = p_rubric_id AND r.suite = 'work-quality'
$$;

GRANT EXECUTE ON FUNCTION work_quality_policy_v2(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
