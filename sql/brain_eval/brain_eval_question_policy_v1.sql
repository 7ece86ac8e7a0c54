-- brain_eval_question_policy_v1: what a question row of a run is judged by: its run's rubric
-- (`policy`) and, for a harness run, the catalog question's own pass criteria with whether its
-- answer broke the contract (`criteria`). SECURITY DEFINER: read once past the caller's policies,
-- which would otherwise scan the caller's runs for every table joined, on every row written.
-- PL/pgSQL: the harness tables it reads come with a later migration (0003).
CREATE FUNCTION evalledger.brain_eval_question_policy_v1(run_id uuid, question text) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN (SELECT jsonb_build_object(
        'policy', r.definition,
        'criteria', (SELECT c.pass_criteria || jsonb_build_object('answer_broke_contract', a.contract_error IS NOT NULL)
                       FROM evalledger.brain_eval_harness_run h
                       JOIN evalledger.brain_eval_catalog_question c
                         ON c.catalog_version = h.catalog_version AND c.question_id = question
                       LEFT JOIN evalledger.brain_eval_harness_answer a
                         ON a.eval_run_id = h.eval_run_id AND a.question_id = question
                      WHERE h.eval_run_id = run_id))
      FROM evalledger.brain_eval_log l JOIN evalledger.rubric r USING (rubric_id)
     WHERE l.eval_run_id = run_id);
END;
$$;
