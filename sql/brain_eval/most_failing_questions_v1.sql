-- most_failing_questions_v1: per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).
CREATE VIEW evalledger.most_failing_questions_v1 AS
    SELECT * FROM evalledger.most_failing_questions_rows_v1();
COMMENT ON VIEW evalledger.most_failing_questions_v1 IS
    'Per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).';
