-- reviewer_calibration_v1: per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.
CREATE VIEW evalledger.reviewer_calibration_v1 AS
    SELECT * FROM evalledger.reviewer_calibration_rows_v1();
COMMENT ON VIEW evalledger.reviewer_calibration_v1 IS
    'Per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.';

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON reviewer_calibration_v1 FROM PUBLIC;
GRANT SELECT ON reviewer_calibration_v1 TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN reviewer_calibration_v1.reviewer_user_id IS 'The reviewer (reviewer.reviewer_user_id).';
COMMENT ON COLUMN reviewer_calibration_v1.runs_reviewed IS 'Count of completed runs the reviewer reviewed.';
COMMENT ON COLUMN reviewer_calibration_v1.ratings IS 'Count of narrative-coherence ratings given.';
COMMENT ON COLUMN reviewer_calibration_v1.rating_1 IS 'Count of ratings of 1 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_2 IS 'Count of ratings of 2 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_3 IS 'Count of ratings of 3 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_4 IS 'Count of ratings of 4 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_5 IS 'Count of ratings of 5 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_mean IS 'Mean rating, 1-5 scale, four decimals.';
COMMENT ON COLUMN reviewer_calibration_v1.rating_stddev IS 'Sample standard deviation, in rating points (1-5 scale), four decimals; NULL with fewer than 2 ratings.';

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.reviewer_calibration_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
