-- most_failing_questions_rows_v2: per brain, catalog version and question, the completed runs it
-- was asked in and failed in, its fail share and its rank within its brain and catalog version
-- (catalogs change quarterly: EVAL-Q01 of v28 and of v29 are two questions). From
-- brain_eval_questions_by_month (kept at completion), so it costs what the number of months and
-- questions costs, not the number of runs; each reader sees the months its policy shows (RevOps:
-- whole months of the hot tier, whole_hot_months_from_v1). Filters, each NULL for
-- all: a brain, the first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.most_failing_questions_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test         varchar(16),
    question_catalog_version varchar(32),
    question_id              varchar(16),
    runs_seen                bigint,
    runs_failed              bigint,
    fail_pct                 numeric,
    fail_rank                bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.brain_under_test, s.question_catalog_version, s.question_id, s.runs_seen, s.runs_failed,
           round(100.0 * s.runs_failed / s.runs_seen, 2),
           rank() OVER (PARTITION BY s.brain_under_test, s.question_catalog_version
                        ORDER BY s.runs_failed::numeric / s.runs_seen DESC, s.runs_failed DESC)
      FROM (SELECT f.brain_under_test, f.question_catalog_version, f.question_id,
                   sum(f.runs_seen)::bigint AS runs_seen, sum(f.runs_failed)::bigint AS runs_failed
              FROM evalledger.brain_eval_questions_by_month f
             WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
               AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
               AND (p_to_month IS NULL OR f.started_month <= p_to_month)
               AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
             GROUP BY f.brain_under_test, f.question_catalog_version, f.question_id) s
$$;
GRANT EXECUTE ON FUNCTION most_failing_questions_rows_v2(text, date, date, text) TO evalledger_revops, evalledger_auditor;
