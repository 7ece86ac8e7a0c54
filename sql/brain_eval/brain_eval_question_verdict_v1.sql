-- A question row: who may change what (the write trigger), then its verdict (the judge trigger,
-- a definer: no application role holds EXECUTE on the thresholds it reads).
-- brain_eval_question_verdict_v1: a question row's question_passed, by what the row is judged by
-- (`judged_by`, as brain_eval_question_policy_v2 gives it: its run's rubric, the run's brains, the
-- catalog question's own thresholds; its caller reads that once for its other checks too) and
-- question_passes_v2. The one rule both the write path
-- (brain_eval_question_score_judge_v1) and the ledger's recompute (ledger_recompute_v3) decide a
-- question row by, so a verdict is re-derived by the very SQL that decided it. No role may call it:
-- given a row of one's own making it would answer whether those numbers pass, an oracle for the
-- thresholds that a reviewer must not read before scoring (docs/guards.md section 22).
CREATE FUNCTION evalledger.brain_eval_question_verdict_v1(q evalledger.brain_eval_question_score, judged_by jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.question_passes_v2(q, judged_by -> 'policy',
                                         ARRAY(SELECT jsonb_array_elements_text(judged_by -> 'brains')),
                                         judged_by -> 'criteria')
$$;
