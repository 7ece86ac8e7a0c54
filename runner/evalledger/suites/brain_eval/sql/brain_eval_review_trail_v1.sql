-- brain_eval_review_trail_v1: after a reviewer's UPDATE of a question row, one trail row per field
-- it changed: the value, the reviewer, the role the statement ran as and the login behind it.
-- SECURITY DEFINER: the trail takes rows from this function alone (brain_eval_review_entry_admit_v1).
CREATE FUNCTION evalledger.brain_eval_review_trail_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_review_entry
           (eval_run_id, question_id, field, value, reviewer_user_id, acting_role, entered_by, run_created_at)
    SELECT NEW.eval_run_id, NEW.question_id, f, to_jsonb(NEW) -> f, l.reviewer_user_id, evalledger.caller_v1(),
           session_user, NEW.run_created_at
      FROM unnest(ARRAY['hallucinations_detected', 'total_claims', 'staleness_correctly_recognized',
                        'diagnosis_accuracy_score', 'narrative_coherence_rating', 'reviewer_comments'])
           WITH ORDINALITY AS x(f, o)
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = NEW.eval_run_id
     WHERE to_jsonb(NEW) -> f IS DISTINCT FROM to_jsonb(OLD) -> f
     ORDER BY o;
    RETURN NULL;
END;
$$;
