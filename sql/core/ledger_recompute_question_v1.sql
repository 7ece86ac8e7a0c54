-- ledger_recompute_question_v1: a question row's question_passed, re-derived by the functions the
-- question row's trigger (brain_eval_question_score_write_v1) decides it with: what the row is
-- judged by (brain_eval_question_policy_v1) and question_passes_v1. The one place the ledger's
-- recompute names that rule.
CREATE FUNCTION evalledger.ledger_recompute_question_v1(q evalledger.brain_eval_question_score, brain text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.question_passes_v1(q, j.judged_by -> 'policy', brain, j.judged_by -> 'criteria')
      FROM (SELECT evalledger.brain_eval_question_policy_v1(q.eval_run_id, q.question_id) AS judged_by) j
$$;
