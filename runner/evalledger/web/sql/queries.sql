-- The review web app's named queries (loaded by core/queries.py). Every one runs as the signed-in
-- login itself: row-level security decides what each returns.

-- name: whoami
-- The signed-in login and which kinds of ledger user it is (by role membership): what the app offers it.
SELECT current_user::text AS login,
       pg_has_role(current_user, 'evalledger_reviewer', 'MEMBER') AS reviewer,
       pg_has_role(current_user, 'evalledger_auditor', 'MEMBER') AS auditor,
       pg_has_role(current_user, 'evalledger_revops', 'MEMBER') AS revops;

-- name: run_header
-- One run as this login sees it: what it is, whether it is complete and signed off, its decision, and the rubric's dimensions and diagnosis question types.
SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.question_catalog_version,
       l.question_count, l.started_at, l.completed_at, l.decision::text AS decision, l.decision_rationale,
       l.reviewer_hours_spent, l.calibration_notes,
       EXISTS (SELECT 1 FROM evalledger.brain_eval_run_review v WHERE v.eval_run_id = l.eval_run_id) AS signed_off,
       r.definition -> 'dimensions' AS dimensions,
       coalesce(r.definition -> 'diagnosis_question_types', '[]') AS diagnosis_types
  FROM evalledger.brain_eval_log l
  JOIN evalledger.rubric r USING (rubric_id)
 WHERE l.eval_run_id = %(eval_run_id)s;

-- name: recorded_answer
-- What the brain answered for one question of a run recorded outside the harness: the question and answer text, its claims and the sources it read.
SELECT b.question AS question_text, b.output AS narrative, b.claims, b.proposed_actions, b.sources_read
  FROM evalledger.brain_eval_question_score q
  JOIN evalledger.brain_analysis_log b ON b.analysis_id = q.brain_analysis_id
 WHERE q.eval_run_id = %(eval_run_id)s AND q.question_id = %(question_id)s;
