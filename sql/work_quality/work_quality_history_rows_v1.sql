-- work_quality_history_rows_v1: the rows of the work_quality_history_v1 view (see it), a SECURITY
-- INVOKER SQL function so the reader's policies filter it on PostgreSQL 14 too. A snapshot closed
-- without completing whole, or open past its deadline (work_quality_run_state_v1: cancelled or
-- abandoned; issue 37, item 2), is a regression whose one reason is its note, "Abandoned: ...".
CREATE FUNCTION evalledger.work_quality_history_rows_v1()
RETURNS TABLE (
    name               text,
    kind               text,
    persona            text,
    at                 timestamptz,
    run_id             text,
    origin             text,
    snapshot_id        bigint,
    models             text[],
    efficacy           numeric,
    completeness       numeric,
    output_quality     numeric,
    restraint          numeric,
    reliability        numeric,
    value_for_money    numeric,
    overall            numeric,
    prev_run_id        text,
    overall_delta      numeric,
    value_delta        numeric,
    verdict            text,
    regression         boolean,
    regression_reasons text[],
    cost_usd           numeric,
    tokens             bigint,
    duration_ms        bigint,
    iterations         bigint,
    model_calls        bigint,
    retries            bigint,
    judges_cost_usd    numeric,
    note               text)
LANGUAGE sql STABLE AS $$
    SELECT s.name, s.kind, s.persona, s.at, s.run_id, s.origin, s.snapshot_id, s.models,
           (s.mean_scores ->> 'efficacy')::numeric, (s.mean_scores ->> 'completeness')::numeric,
           (s.mean_scores ->> 'output_quality')::numeric, (s.mean_scores ->> 'restraint')::numeric,
           (s.mean_scores ->> 'reliability')::numeric, (s.mean_scores ->> 'value_for_money')::numeric,
           (s.mean_scores ->> 'overall')::numeric,
           s.prev_run_id, (s.comparison ->> 'overall_delta')::numeric, (s.comparison ->> 'value_delta')::numeric,
           s.comparison ->> 'verdict',
           cardinality(r.reasons) > 0, r.reasons,
           s.cost_usd, s.tokens, s.duration_ms, s.iterations, s.model_calls, s.retries, s.judges_cost_usd, w.note
      FROM evalledger.eval_work_quality_snapshots s
     CROSS JOIN LATERAL (SELECT w.state, w.note FROM evalledger.work_quality_run_state_v1 w
                          WHERE w.snapshot_id = s.snapshot_id) w
     CROSS JOIN LATERAL (SELECT CASE WHEN w.state IN ('abandoned', 'cancelled') THEN ARRAY[w.note]
                                     ELSE evalledger.work_quality_is_regression_v1(s.comparison) END AS reasons) r
     WHERE s.completed_at IS NOT NULL OR w.state = 'abandoned'
$$;
GRANT EXECUTE ON FUNCTION work_quality_history_rows_v1() TO evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION work_quality_history_rows_v1() TO evalledger_revops, evalledger_auditor;
