-- The first migration after 0.1.0: the quarterly trend panel's recency_rank says what it counts. A comment only: no role may do or read anything it could not before.

SET LOCAL ROLE evalledger_code;
COMMENT ON COLUMN evalledger.brain_quarterly_trend_v1.recency_rank IS
    'Rank, 1 = the brain''s latest completed quarterly run, 2 the one before it, and so on up to 8.';
RESET ROLE;
