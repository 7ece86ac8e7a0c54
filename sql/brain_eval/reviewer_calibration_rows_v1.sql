-- reviewer_calibration_rows_v1: per reviewer, the distribution of the narrative-coherence ratings they gave in completed runs.
CREATE FUNCTION evalledger.reviewer_calibration_rows_v1()
RETURNS TABLE (
    reviewer_user_id uuid,
    runs_reviewed    bigint,
    ratings          bigint,
    rating_1         bigint,
    rating_2         bigint,
    rating_3         bigint,
    rating_4         bigint,
    rating_5         bigint,
    rating_mean      numeric,
    rating_stddev    numeric)
LANGUAGE sql STABLE AS $$
    SELECT l.reviewer_user_id,
           count(DISTINCT l.eval_run_id),
           count(q.narrative_coherence_rating),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 3),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 4),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 5),
           round(avg(q.narrative_coherence_rating), 4),
           round(stddev_samp(q.narrative_coherence_rating), 4)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.completed_at IS NOT NULL
     GROUP BY l.reviewer_user_id
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION reviewer_calibration_rows_v1() TO evalledger_revops, evalledger_auditor;
