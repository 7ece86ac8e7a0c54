-- The recompute re-derives each suite's runs by the versions its triggers decide by.
-- ledger_recompute_brain_eval_v2: brain-eval's decision for a run, re-derived from its inputs now
-- by the functions its completion trigger (brain_eval_log_decide_v2) uses: brain_eval_decide_v2
-- for the aggregates, criteria, decision, rationale and cost, and the latest sign-off for the hours
-- and notes it copies. v1 named brain_eval_decide_v1, which the trigger stopped calling (issue 17):
-- it re-derived a run whose hard criterion applies to its prompt's brain but not its label by the
-- label. The one place the ledger's recompute names brain-eval's decision.
CREATE FUNCTION evalledger.ledger_recompute_brain_eval_v2(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.brain_eval_decide_v2(run)
           || jsonb_build_object('reviewer_hours_spent', s.reviewer_hours_spent, 'calibration_notes', s.calibration_notes)
      FROM (SELECT NULL) one
      LEFT JOIN LATERAL (SELECT v.reviewer_hours_spent, v.calibration_notes FROM evalledger.brain_eval_run_review v
                          WHERE v.eval_run_id = run.eval_run_id
                          ORDER BY v.created_at DESC, v.review_id DESC LIMIT 1) s ON true
$$;
