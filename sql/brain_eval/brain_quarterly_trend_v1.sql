-- brain_quarterly_trend_v1: per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.
CREATE VIEW evalledger.brain_quarterly_trend_v1 AS
    SELECT * FROM evalledger.brain_quarterly_trend_rows_v1();
COMMENT ON VIEW evalledger.brain_quarterly_trend_v1 IS
    'Per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.';
