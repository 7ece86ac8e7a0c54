-- brain_eval_question_policy_v2: what a question row of a run is judged by: its run's rubric
-- (`policy`), the run's brains (`brains`: its label and every brain of its prompt), how many claims
-- the stored answer holds (`answer_claims`, the bound of the reviewer's counts) and, for a harness
-- run, the catalog question's own pass thresholds with whether its answer broke the contract
-- (`criteria`; never its expected findings, which a reviewer reads only once its numbers are saved,
-- recorded: brain_eval_show_reference_v2). SECURITY DEFINER (read once past the caller's policies, which would otherwise scan
-- the caller's runs for every table joined), so it answers only about a run its caller may read
-- (caller_reads_v1): NULL for any other, as for a run that does not exist. Its parameters are named
-- with the function's name: brain_analysis_log has a column `question` too.
CREATE FUNCTION evalledger.brain_eval_question_policy_v2(run_id uuid, question text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'policy', r.definition,
        'brains', to_jsonb(evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash)),
        'answer_claims', (SELECT jsonb_array_length(a.claims)
                            FROM evalledger.brain_eval_question_score q
                            JOIN evalledger.brain_analysis_log a ON a.analysis_id = q.brain_analysis_id
                           WHERE q.eval_run_id = brain_eval_question_policy_v2.run_id AND q.question_id = brain_eval_question_policy_v2.question),
        'criteria', (SELECT (c.pass_criteria - 'expected_findings'::text) || jsonb_build_object('answer_broke_contract', a.contract_error IS NOT NULL)
                       FROM evalledger.brain_eval_harness_run h
                       JOIN evalledger.brain_eval_catalog_question c
                         ON c.catalog_version = h.catalog_version AND c.question_id = brain_eval_question_policy_v2.question
                       LEFT JOIN evalledger.brain_eval_harness_answer a
                         ON a.eval_run_id = h.eval_run_id AND a.question_id = brain_eval_question_policy_v2.question
                      WHERE h.eval_run_id = brain_eval_question_policy_v2.run_id))
      FROM evalledger.brain_eval_log l JOIN evalledger.rubric r USING (rubric_id)
     WHERE l.eval_run_id = brain_eval_question_policy_v2.run_id AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id);
$$;
