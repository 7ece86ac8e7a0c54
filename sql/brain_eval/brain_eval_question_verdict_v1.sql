-- brain_eval_question_verdict_v1: a question row's question_passed, by what the row is judged by
-- (brain_eval_question_policy_v2: its run's rubric, the run's brains, the catalog question's own
-- thresholds) and question_passes_v2. The one rule both the write path
-- (brain_eval_question_score_judge_v1) and the ledger's recompute (ledger_recompute_v3) decide a
-- question row by, so a verdict is re-derived by the very SQL that decided it. No role may call it:
-- given a row of one's own making it would answer whether those numbers pass, an oracle for the
-- thresholds that a reviewer must not read before scoring (docs/guards.md section 22).
CREATE FUNCTION evalledger.brain_eval_question_verdict_v1(q evalledger.brain_eval_question_score) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.question_passes_v2(q, j.judged_by -> 'policy',
                                         ARRAY(SELECT jsonb_array_elements_text(j.judged_by -> 'brains')),
                                         j.judged_by -> 'criteria')
      FROM (SELECT evalledger.brain_eval_question_policy_v2(q.eval_run_id, q.question_id) AS judged_by) j
$$;
