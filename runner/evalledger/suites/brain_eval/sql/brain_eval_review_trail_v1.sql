-- brain_eval_review_trail_v1: after a reviewer's UPDATE of a question row, one trail row per field
-- it changed: the value, the reviewer, the role the statement ran as, the login behind it, and
-- whether the judges' suggestions on the question had been shown first (blind review).
-- SECURITY DEFINER: the trail takes rows from this function alone (brain_eval_review_entry_admit_v1).
CREATE FUNCTION evalledger.brain_eval_review_trail_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_review_entry
           (eval_run_id, question_id, field, value, reviewer_user_id, acting_role, entered_by, suggestions_shown,
            run_created_at)
    SELECT NEW.eval_run_id, NEW.question_id, f, to_jsonb(NEW) -> f, l.reviewer_user_id, evalledger.caller_v1(),
           session_user, EXISTS (SELECT 1 FROM evalledger.brain_eval_suggestion_shown s
                                  WHERE s.eval_run_id = NEW.eval_run_id AND s.question_id = NEW.question_id),
           NEW.run_created_at
      FROM unnest(ARRAY['hallucinations_detected', 'total_claims', 'staleness_correctly_recognized',
                        'diagnosis_accuracy_score', 'narrative_coherence_rating', 'reviewer_comments'])
           WITH ORDINALITY AS x(f, o)
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = NEW.eval_run_id
     WHERE to_jsonb(NEW) -> f IS DISTINCT FROM to_jsonb(OLD) -> f
     ORDER BY o;
    RETURN NULL;
END;
$$;
