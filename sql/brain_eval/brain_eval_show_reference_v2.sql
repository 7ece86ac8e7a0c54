-- brain_eval_show_reference_v2: the run's reviewer, once its own numbers for a question are saved
-- (question_needs_v2 names none of the reviewer's fields), asks to see the question's reference
-- answer: the catalog question's expected findings and pass criteria. Recorded once
-- (brain_eval_reference_shown) with the asking transaction's id and the question's last trail entry
-- then (entries_before: every later change to the reviewer's values has a higher entry_id); the
-- reference reads only in a later transaction, once this one committed the record
-- (brain_eval_reference_v2), so a rolled-back reveal showed nothing. The question row is locked
-- first, so no entry of it is in flight while the mark is taken. NULL, recording nothing, for a run
-- recorded outside the harness (it has no catalog question). Returns when it was first shown.
-- SECURITY DEFINER: the table takes rows from here only. Over v1: the hot tier counted from the
-- statement's start (hot_tier_start_v1), so a transaction held open across the boundary keeps no
-- old window; the question's needs by the prompt's brains (question_needs_v2), as completion asks.
CREATE FUNCTION evalledger.brain_eval_show_reference_v2(run_id uuid, question text) RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    scored evalledger.brain_eval_question_score;
    missing text[];
    first_shown timestamptz;
BEGIN
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id
       OR run.created_at < evalledger.hot_tier_start_v1() THEN
        RAISE EXCEPTION 'evalledger: no question % in run % that you review', question, run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT q.* INTO scored FROM evalledger.brain_eval_question_score q
     WHERE q.eval_run_id = run_id AND q.question_id = question
       FOR UPDATE;
    IF scored.question_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no question % in run % that you review', question, run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_run h WHERE h.eval_run_id = run_id) THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(f) INTO missing
      FROM unnest(evalledger.question_needs_v2(scored, (SELECT r.definition FROM evalledger.rubric r
                                                      WHERE r.rubric_id = run.rubric_id),
                                               evalledger.run_brains_v1(run.brain_under_test, run.system_prompt_hash))) AS f
     WHERE f IN ('hallucinations_detected', 'total_claims', 'staleness_correctly_recognized',
                 'diagnosis_accuracy_score', 'narrative_coherence_rating');
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: the reference answer of question % shows once your numbers for it are saved '
                        '(blind review): still needed: %', question, array_to_string(missing, ', ')
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    INSERT INTO evalledger.brain_eval_reference_shown
           (eval_run_id, question_id, reviewer_user_id, shown_by, shown_txid, entries_before, run_created_at)
    VALUES (run_id, question, run.reviewer_user_id, session_user, txid_current(),
            coalesce((SELECT max(e.entry_id) FROM evalledger.brain_eval_review_entry e
                       WHERE e.eval_run_id = run_id AND e.question_id = question), 0),
            run.created_at)
    ON CONFLICT ON CONSTRAINT brain_eval_reference_shown_pkey DO NOTHING;
    SELECT s.shown_at INTO first_shown FROM evalledger.brain_eval_reference_shown s
     WHERE s.eval_run_id = run_id AND s.question_id = question;
    RETURN first_shown;
END;
$$;

-- The reviewer asks to see suggestions, and the reference answer after its numbers are saved,
-- through these functions alone (blind review).
GRANT EXECUTE ON FUNCTION brain_eval_show_reference_v2(uuid, text) TO evalledger_reviewer;
