-- The review web app's named queries (loaded by core/queries.py). Every one runs as the signed-in
-- login itself: row-level security decides what each returns.

-- name: whoami
-- The signed-in login, which kinds of ledger user it is (by role membership: what the app offers
-- it), and what the app refuses to sign in: a login that is, or may become by SET ROLE, a superuser,
-- a role that bypasses row-level security or creates roles, or the ledger's code or owner role; and
-- a session whose role is not its login (a role default that switches it at connect). And whether
-- the server is a standby, where a reviewer could save nothing.
SELECT session_user::text AS login,
       pg_is_in_recovery() AS standby,
       session_user <> current_user AS switched,
       EXISTS (SELECT 1 FROM pg_roles r
                WHERE (r.rolsuper OR r.rolbypassrls OR r.rolcreaterole
                       OR r.rolname IN ('evalledger_code', 'evalledger_owner'))
                  AND pg_has_role(session_user, r.oid, 'MEMBER')) AS privileged,
       pg_has_role(session_user, 'evalledger_reviewer', 'MEMBER') AS reviewer,
       pg_has_role(session_user, 'evalledger_auditor', 'MEMBER') AS auditor,
       pg_has_role(session_user, 'evalledger_revops', 'MEMBER') AS revops;

-- name: run_header
-- One run as this login sees it: what it is, whether it is complete and signed off, its decision, and the rubric's dimensions.
SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.question_catalog_version,
       l.question_count, l.started_at, l.completed_at, l.decision::text AS decision, l.decision_rationale,
       l.reviewer_hours_spent, l.calibration_notes,
       EXISTS (SELECT 1 FROM evalledger.brain_eval_run_review v WHERE v.eval_run_id = l.eval_run_id) AS signed_off,
       r.definition -> 'dimensions' AS dimensions
  FROM evalledger.brain_eval_log l
  JOIN evalledger.rubric r USING (rubric_id)
 WHERE l.eval_run_id = %(eval_run_id)s;

-- name: question_texts
-- What each question of a harness run asks (the run page lists them); no rows for a run recorded elsewhere.
SELECT c.question_id, c.question_text
  FROM evalledger.brain_eval_harness_run h
  JOIN evalledger.brain_eval_catalog_question c
    ON c.catalog_version = h.catalog_version AND c.question_id = ANY (h.question_ids)
 WHERE h.eval_run_id = %(eval_run_id)s;
