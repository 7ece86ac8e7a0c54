-- reviewer_calibration_rows_v2: per reviewer (and, with p_by_quarter, per UTC quarter the runs
-- started in: drift in a reviewer's distribution shows over quarters), the completed runs they
-- reviewed and the narrative-coherence ratings they gave, counted per value 1..5, with the mean
-- and sample standard deviation computed exactly from those counts. From brain_eval_runs_by_month;
-- each reader sees the months its policy shows (a reviewer: its own runs). Filters, each NULL for
-- all: a brain, the first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.reviewer_calibration_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_by_quarter boolean)
RETURNS TABLE (
    reviewer_user_id uuid,
    quarter          text,
    runs_reviewed    bigint,
    ratings          bigint,
    rating_1         bigint,
    rating_2         bigint,
    rating_3         bigint,
    rating_4         bigint,
    rating_5         bigint,
    rating_mean      numeric,
    rating_stddev    numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.reviewer_user_id, c.quarter, c.runs, c.n, c.r1, c.r2, c.r3, c.r4, c.r5,
           round(c.s1 / nullif(c.n, 0), 4),
           -- The sample variance from the counts, one exact division: (n*s2 - s1^2) / (n*(n-1)).
           CASE WHEN c.n > 1 THEN round(sqrt((c.n * c.s2 - c.s1 * c.s1) / (c.n * (c.n - 1))), 4) END
      FROM (SELECT f.reviewer_user_id,
                   CASE WHEN p_by_quarter THEN to_char(f.started_month, 'YYYY-"Q"Q') END AS quarter,
                   sum(f.runs)::bigint AS runs,
                   sum(f.rating_1 + f.rating_2 + f.rating_3 + f.rating_4 + f.rating_5)::bigint AS n,
                   sum(f.rating_1)::bigint AS r1, sum(f.rating_2)::bigint AS r2, sum(f.rating_3)::bigint AS r3,
                   sum(f.rating_4)::bigint AS r4, sum(f.rating_5)::bigint AS r5,
                   sum(f.rating_1 + 2 * f.rating_2 + 3 * f.rating_3 + 4 * f.rating_4 + 5 * f.rating_5)::numeric AS s1,
                   sum(f.rating_1 + 4 * f.rating_2 + 9 * f.rating_3 + 16 * f.rating_4 + 25 * f.rating_5)::numeric AS s2
              FROM evalledger.brain_eval_runs_by_month f
             WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
               AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
               AND (p_to_month IS NULL OR f.started_month <= p_to_month)
               AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
             GROUP BY 1, 2) c
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION reviewer_calibration_rows_v2(text, date, date, text, boolean) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
