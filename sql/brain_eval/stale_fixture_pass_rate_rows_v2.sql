-- stale_fixture_pass_rate_rows_v2: per completed run, its stale-fixture questions, how many were
-- recognised and missed, the pass rate as a column (recognised / stale-fixture questions, 0-1),
-- whether all were recognised and the sev-2 flag (any miss), newest first per brain. Read from the
-- rows themselves under the reader's own policies: a run's question rows through its id (index 5),
-- the runs of a brain newest first through (brain_under_test, started_at DESC) (index 1), so the
-- latest p_latest runs of each brain cost what p_latest runs cost, however long the history.
-- Filters, each NULL for all: a brain, the first and last month started (UTC; whole months), a
-- run trigger, at most p_latest runs per brain. Plain SQL without SET, every operator
-- schema-qualified, so the view's readers' filters push down into it (as in the _v1 panels).
CREATE FUNCTION evalledger.stale_fixture_pass_rate_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_latest integer)
RETURNS TABLE (
    eval_run_id              uuid,
    brain_under_test         varchar(16),
    run_trigger              text,
    question_catalog_version varchar(32),
    started_at               timestamptz,
    completed_at             timestamptz,
    stale_questions          bigint,
    stale_recognised         bigint,
    stale_missed             bigint,
    stale_pass_rate          numeric,
    all_recognised           boolean,
    sev2_incident            boolean)
LANGUAGE sql STABLE AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.question_catalog_version, l.started_at,
           l.completed_at, s.stale_questions, s.stale_recognised, s.stale_missed,
           CASE WHEN s.stale_questions OPERATOR(pg_catalog.>) 0
                THEN s.stale_recognised::numeric OPERATOR(pg_catalog./) s.stale_questions END,
           s.all_recognised, s.stale_missed OPERATOR(pg_catalog.>) 0
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT r.eval_run_id, r.brain_under_test, r.run_trigger, r.question_catalog_version, r.started_at,
                   r.completed_at
              FROM evalledger.brain_eval_log r
             WHERE r.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND r.completed_at IS NOT NULL
               AND (p_from_month IS NULL
                    OR r.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
               AND (p_to_month IS NULL
                    OR r.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                            OPERATOR(pg_catalog.+) interval '1 month'))
               AND (p_trigger IS NULL OR r.run_trigger OPERATOR(pg_catalog.=) p_trigger::evalledger.eval_run_trigger)
             ORDER BY r.started_at DESC, r.eval_run_id DESC
             LIMIT p_latest) l
     CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE q.uses_stale_fixture) AS stale_questions,
                   count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized) AS stale_recognised,
                   count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized) AS stale_missed,
                   -- NULL when the run had no stale-fixture question: nothing to recognise.
                   bool_and(q.staleness_correctly_recognized) FILTER (WHERE q.uses_stale_fixture) AS all_recognised
              FROM evalledger.brain_eval_question_score q
             WHERE q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id) s
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION stale_fixture_pass_rate_rows_v2(text, date, date, text, integer) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
