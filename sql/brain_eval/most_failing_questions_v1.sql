-- most_failing_questions_v1: per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).
CREATE VIEW evalledger.most_failing_questions_v1 AS
    SELECT * FROM evalledger.most_failing_questions_rows_v1();
COMMENT ON VIEW evalledger.most_failing_questions_v1 IS
    'Per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).';

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON most_failing_questions_v1 FROM PUBLIC;
GRANT SELECT ON most_failing_questions_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN most_failing_questions_v1.question_id IS 'The catalog question id, e.g. EVAL-Q01, over every brain and catalog version (most_failing_questions_v2 keeps them apart).';
COMMENT ON COLUMN most_failing_questions_v1.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN most_failing_questions_v1.runs_failed IS 'Count of those runs in which the question did not pass.';
COMMENT ON COLUMN most_failing_questions_v1.fail_pct IS 'Percent, 0-100, two decimals: 100 * runs_failed / runs_seen.';
COMMENT ON COLUMN most_failing_questions_v1.fail_rank IS 'Rank, 1 = most failing (SQL rank(): ties share a rank).';

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.most_failing_questions_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
