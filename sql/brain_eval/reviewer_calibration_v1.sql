-- reviewer_calibration_v1: per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.
CREATE VIEW evalledger.reviewer_calibration_v1 AS
    SELECT * FROM evalledger.reviewer_calibration_rows_v1();
COMMENT ON VIEW evalledger.reviewer_calibration_v1 IS
    'Per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.';
