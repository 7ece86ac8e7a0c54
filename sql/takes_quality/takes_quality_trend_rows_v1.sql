-- takes_quality_trend_rows_v1: completed takes-quality runs newest first, each with its rubric
-- epoch (the rubric's version and the receipt's rubric_sha8: a stricter rubric is a new epoch and
-- is charted apart, never as a drop), verdict, overall score, each dimension's mean (from the
-- receipt the database wrote at completion), cost and whether the judges were live or recorded.
-- Read newest first through eval_takes_quality_runs_started_idx, so the latest p_latest runs cost
-- the same however long the history. Filters, each NULL for all: a target, the first and last
-- month started (UTC; whole months), at most p_latest runs. Readers see what their policies show.
-- An open run past its deadline is in it as abandoned, verdict fail (takes_quality_run_state_v1; a
-- closed one is stored so: issue 37, item 2), with no scores until the next write closes it.
CREATE FUNCTION evalledger.takes_quality_trend_rows_v1(
    p_target text, p_from_month date, p_to_month date, p_latest integer)
RETURNS TABLE (
    run_id          bigint,
    target_id       varchar(16),
    rubric_version  text,
    rubric_sha8     char(8),
    started_at      timestamptz,
    completed_at    timestamptz,
    verdict         text,
    overall_score   numeric,
    dimension_means jsonb,
    cost_usd        numeric,
    n_takes         integer,
    models          text[],
    judges          text)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.id, r.target_id, b.version, r.rubric_sha8, r.started_at, r.completed_at, coalesce(r.verdict, 'fail'),
           r.overall_score,
           (SELECT jsonb_object_agg(d.key, d.value -> 'mean') FROM jsonb_each(r.receipt_json -> 'scores') d),
           r.cost_usd, r.n_takes, r.models, coalesce(r.receipt_json ->> 'judges', r.judges, 'live')
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     WHERE (r.completed_at IS NOT NULL
            OR now() >= evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id))
       AND (p_target IS NULL OR r.target_id = p_target)
       AND (p_from_month IS NULL OR r.started_at >= timezone('UTC', date_trunc('month', p_from_month::timestamp)))
       AND (p_to_month IS NULL OR r.started_at < timezone('UTC', date_trunc('month', p_to_month::timestamp) + interval '1 month'))
     ORDER BY r.started_at DESC, r.id DESC
     LIMIT p_latest
$$;
GRANT EXECUTE ON FUNCTION takes_quality_trend_rows_v1(text, date, date, integer) TO evalledger_revops, evalledger_auditor;
