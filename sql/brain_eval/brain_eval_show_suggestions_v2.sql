-- brain_eval_show_suggestions_v2: the run's reviewer asks to see the judges' suggestions on one of
-- its questions, in a run it may read (its own, in the hot tier): recorded once
-- (brain_eval_suggestion_shown) with the asking transaction's id. The reviewer's policy lets them
-- read those suggestions only in a later transaction, once this one committed the record: a reveal
-- that is rolled back showed nothing, so every value entered after seeing them is marked as such.
-- Returns when they were first shown. SECURITY DEFINER: the table takes rows from here only.
CREATE FUNCTION evalledger.brain_eval_show_suggestions_v2(run_id uuid, question text) RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    first_shown timestamptz;
BEGIN
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id
       OR NOT evalledger.caller_reads_v1(run.created_at, run.reviewer_user_id)
       OR NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q
                       WHERE q.eval_run_id = run_id AND q.question_id = question) THEN
        RAISE EXCEPTION 'evalledger: no question % in run % that you review', question, run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO evalledger.brain_eval_suggestion_shown
           (eval_run_id, question_id, reviewer_user_id, shown_by, run_created_at, shown_txid)
    VALUES (run_id, question, run.reviewer_user_id, session_user, run.created_at, txid_current())
    ON CONFLICT ON CONSTRAINT brain_eval_suggestion_shown_pkey DO NOTHING;
    SELECT s.shown_at INTO first_shown FROM evalledger.brain_eval_suggestion_shown s
     WHERE s.eval_run_id = run_id AND s.question_id = question;
    RETURN first_shown;
END;
$$;

-- The reviewer asks to see suggestions, and the reference answer after its numbers are saved,
-- through these functions alone (blind review).
GRANT EXECUTE ON FUNCTION brain_eval_show_suggestions_v2(uuid, text) TO evalledger_reviewer;
