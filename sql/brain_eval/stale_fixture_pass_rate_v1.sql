-- stale_fixture_pass_rate_v1: per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).
CREATE VIEW evalledger.stale_fixture_pass_rate_v1 AS
    SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v1();
COMMENT ON VIEW evalledger.stale_fixture_pass_rate_v1 IS
    'Per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).';
