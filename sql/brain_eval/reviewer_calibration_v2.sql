-- reviewer_calibration_v2: per reviewer and quarter, completed runs reviewed, narrative-coherence
-- rating counts for 1..5, mean and sample stddev.
CREATE VIEW evalledger.reviewer_calibration_v2 AS
    SELECT * FROM evalledger.reviewer_calibration_rows_v2(NULL, NULL, NULL, NULL, true);
COMMENT ON VIEW evalledger.reviewer_calibration_v2 IS
    'Per reviewer and UTC quarter the runs started in, completed runs reviewed, the narrative_coherence_rating counts for 1..5, their mean and sample stddev. RevOps and reviewers: whole months of the hot tier; a reviewer sees only itself.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.reviewer_user_id IS 'The reviewer (reviewer.reviewer_user_id; the auditor reads names in evalledger.reviewer).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.quarter IS 'Text YYYY-QN: the UTC quarter the runs started in.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.runs_reviewed IS 'Count of completed runs the reviewer reviewed.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.ratings IS 'Count of narrative-coherence ratings the reviewer gave.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_1 IS 'Count of ratings of 1 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_2 IS 'Count of ratings of 2 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_3 IS 'Count of ratings of 3 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_4 IS 'Count of ratings of 4 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_5 IS 'Count of ratings of 5 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_mean IS 'Mean rating, 1-5 scale, four decimals.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_stddev IS 'Sample standard deviation of the ratings, in rating points (1-5 scale), four decimals; NULL with fewer than 2 ratings.';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON reviewer_calibration_v2 FROM PUBLIC;
GRANT SELECT ON reviewer_calibration_v2 TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.reviewer_calibration_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;
