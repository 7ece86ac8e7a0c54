-- replay_drift_rows_v1: completed replay runs newest first, each with its brain version, adapter,
-- rubric, decision and the figures the decision rests on (the run's summary, which the database
-- wrote at completion): drift over time per brain version. Filters, each NULL for all: a brain
-- version, at most p_latest runs. Readers see what their policies show.
CREATE FUNCTION evalledger.replay_drift_rows_v1(p_brain_version text, p_latest integer)
RETURNS TABLE (
    replay_run_id           bigint,
    brain_version           text,
    adapter                 text,
    rubric_version          text,
    started_at              timestamptz,
    completed_at            timestamptz,
    decision                text,
    queries_asked           integer,
    queries_replayed        integer,
    mean_recall             numeric,
    min_recall              numeric,
    mean_jaccard            numeric,
    mean_rbo                numeric,
    p95_latency_ratio       numeric,
    queries_losing_a_source integer)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.replay_run_id, r.brain_version, r.adapter_kind || ':' || r.adapter, b.version, r.started_at,
           r.completed_at, r.decision, (r.summary ->> 'asked')::integer, (r.summary ->> 'replayed')::integer,
           (r.summary ->> 'mean_recall')::numeric, (r.summary ->> 'min_recall')::numeric,
           (r.summary ->> 'mean_jaccard')::numeric, (r.summary ->> 'mean_rbo')::numeric,
           (r.summary ->> 'p95_latency_ratio')::numeric, (r.summary ->> 'queries_losing_a_source')::integer
      FROM evalledger.replay_run r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     WHERE r.completed_at IS NOT NULL
       AND (p_brain_version IS NULL OR r.brain_version = p_brain_version)
     ORDER BY r.started_at DESC, r.replay_run_id DESC
     LIMIT p_latest
$$;
GRANT EXECUTE ON FUNCTION replay_drift_rows_v1(text, integer) TO evalledger_revops, evalledger_auditor;
