-- brain_eval_reference_v2: a question's reference answer for the run's reviewer, once shown to them
-- (brain_eval_show_reference_v2) by a transaction that committed before this one: the catalog
-- question's expected findings, its other pass criteria, and when it was first shown. NULL before
-- then, in the revealing transaction itself, and for anyone but the run's reviewer (whose catalog
-- grants leave out pass_criteria and the catalog document, so this is the reviewer's one way to them).
-- Over v1: the hot tier counted from the statement's start (hot_tier_start_v1).
CREATE FUNCTION evalledger.brain_eval_reference_v2(run_id uuid, question text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object('expected_findings', coalesce(c.pass_criteria -> 'expected_findings', '[]'),
                              'pass_criteria', c.pass_criteria - 'expected_findings',
                              'shown_at', to_char(s.shown_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC')
      FROM evalledger.brain_eval_reference_shown s
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = s.eval_run_id
      JOIN evalledger.brain_eval_harness_run h ON h.eval_run_id = s.eval_run_id
      JOIN evalledger.brain_eval_catalog_question c
        ON c.catalog_version = h.catalog_version AND c.question_id = s.question_id
     WHERE s.eval_run_id = run_id AND s.question_id = question
       AND s.shown_txid IS DISTINCT FROM txid_current_if_assigned()
       AND l.reviewer_user_id = evalledger.reviewer_id_of_v1(evalledger.caller_v1())
       AND l.created_at >= evalledger.hot_tier_start_v1();
$$;

-- The reviewer asks to see suggestions, and the reference answer after its numbers are saved,
-- through these functions alone (blind review).
GRANT EXECUTE ON FUNCTION brain_eval_reference_v2(uuid, text) TO evalledger_reviewer;
