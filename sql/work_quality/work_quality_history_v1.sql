-- work_quality_history_v1: per target, every completed snapshot over time: the mean score of each
-- dimension, the comparison with the previous snapshot (deltas and headline verdict), whether it
-- is a regression at the policy's default tolerance and why, and the price (the assessed run's
-- cost, tokens and duration, and what the judges cost). Read by RevOps and auditors under their
-- own row-level security, by the same pattern as the brain-eval dashboards: the query lives in a
-- SECURITY INVOKER SQL function (work_quality_history_rows_v1) so the reader's policies filter it
-- on PostgreSQL 14 too, and the view gets security_invoker where the server has it (15+).
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
           s.cost_usd, s.tokens, s.duration_ms, s.iterations, s.model_calls, s.retries, s.judges_cost_usd, s.note
      FROM evalledger.eval_work_quality_snapshots s
     CROSS JOIN LATERAL (SELECT evalledger.work_quality_is_regression_v1(s.comparison) AS reasons) r
     WHERE s.completed_at IS NOT NULL
$$;

CREATE VIEW evalledger.work_quality_history_v1 AS
    SELECT * FROM evalledger.work_quality_history_rows_v1();
COMMENT ON VIEW evalledger.work_quality_history_v1 IS
    'Per target (name), each completed work-quality snapshot over time: dimension means, deltas and verdict against the previous snapshot, regression at the default tolerance, price and judge cost.';

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_history_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
