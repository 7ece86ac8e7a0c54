-- ledger_recompute_brain_eval_v1: brain-eval's decision for a run, re-derived from its inputs now
-- by the functions its completion trigger (brain_eval_log_decide_v1) uses: brain_eval_decide_v1
-- for the aggregates, criteria, decision, rationale and cost, and the latest sign-off for the hours
-- and notes it copies. The one place the ledger's recompute names brain-eval's decision: when the
-- trigger moves to a new version of it, this moves with it (one line).
CREATE FUNCTION evalledger.ledger_recompute_brain_eval_v1(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.brain_eval_decide_v1(run)
           || jsonb_build_object('reviewer_hours_spent', s.reviewer_hours_spent, 'calibration_notes', s.calibration_notes)
      FROM (SELECT NULL) one
      LEFT JOIN LATERAL (SELECT v.reviewer_hours_spent, v.calibration_notes FROM evalledger.brain_eval_run_review v
                          WHERE v.eval_run_id = run.eval_run_id
                          ORDER BY v.created_at DESC, v.review_id DESC LIMIT 1) s ON true
$$;
