-- brain_eval_review_trail_v1: after a reviewer's UPDATE of a question row, one trail row per field
-- it changed: the value, the reviewer, the role the statement ran as, the login behind it, and
-- whether the judges' suggestions on the question had been shown first (blind review). Shown means
-- a reveal committed before the entry: only READ COMMITTED reads it with a snapshot taken now, so
-- an entry under an older snapshot is refused (a session begun REPEATABLE READ before a second
-- session of the same reviewer revealed and read the drafts entered them as blind: issue 37, item 8).
-- SECURITY DEFINER: the trail takes rows from this function alone (brain_eval_review_entry_admit_v1).
CREATE FUNCTION evalledger.brain_eval_review_trail_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_read_committed_v2('a reviewer''s entry (whether the judges'' suggestions were shown)');
    INSERT INTO evalledger.brain_eval_review_entry
           (eval_run_id, question_id, field, value, reviewer_user_id, acting_role, entered_by, suggestions_shown,
            run_created_at)
    SELECT NEW.eval_run_id, NEW.question_id, f.field, f.value, l.reviewer_user_id, evalledger.caller_v1(),
           session_user, EXISTS (SELECT 1 FROM evalledger.brain_eval_suggestion_shown s
                                  WHERE s.eval_run_id = NEW.eval_run_id AND s.question_id = NEW.question_id),
           NEW.run_created_at
      FROM (VALUES
              (1, 'hallucinations_detected', to_jsonb(NEW.hallucinations_detected),
               NEW.hallucinations_detected IS DISTINCT FROM OLD.hallucinations_detected),
              (2, 'total_claims', to_jsonb(NEW.total_claims), NEW.total_claims IS DISTINCT FROM OLD.total_claims),
              (3, 'staleness_correctly_recognized', to_jsonb(NEW.staleness_correctly_recognized),
               NEW.staleness_correctly_recognized IS DISTINCT FROM OLD.staleness_correctly_recognized),
              (4, 'diagnosis_accuracy_score', to_jsonb(NEW.diagnosis_accuracy_score),
               NEW.diagnosis_accuracy_score IS DISTINCT FROM OLD.diagnosis_accuracy_score),
              (5, 'narrative_coherence_rating', to_jsonb(NEW.narrative_coherence_rating),
               NEW.narrative_coherence_rating IS DISTINCT FROM OLD.narrative_coherence_rating),
              (6, 'reviewer_comments', to_jsonb(NEW.reviewer_comments),
               NEW.reviewer_comments IS DISTINCT FROM OLD.reviewer_comments)) AS f(n, field, value, changed)
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = NEW.eval_run_id
     WHERE f.changed
     ORDER BY f.n;
    RETURN NULL;
END;
$$;

CREATE TRIGGER brain_eval_question_score_20_trail AFTER UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_review_trail_v1();
