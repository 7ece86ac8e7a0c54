-- One captured query asked again in a replay run: what production retrieved (the captured row's
-- fields; for a ledger window the database copies them from eval_candidates itself), what the
-- runner observed (outcome: the adapter answered, declined to replay the row in its mode, or
-- failed: a non-zero exit, a time-out, a reply that is not the JSON asked for, with its error; or,
-- the retention purge's alone, the captured row was purged before the run replayed it),
-- and what the database computes from the two (replay_query_admit_v1): status, recall, jaccard,
-- rbo, the sources gained and lost and the latency ratio, stored unrounded. Once per captured row
-- and run: a runner that resumes a killed run never asks a recorded query again.
CREATE TABLE replay_query (
    replay_query_id         bigint           GENERATED ALWAYS AS IDENTITY,
    replay_run_id           bigint           NOT NULL,
    capture_id              bigint           NOT NULL,
    capture_created_at      timestamptz,
    tool_name               text             NOT NULL,
    captured_slugs          text[]           NOT NULL,
    captured_chunk_ids      bigint[]         NOT NULL,
    captured_source_ids     text[]           NOT NULL,
    captured_vector_enabled boolean          NOT NULL,
    captured_expand_enabled boolean,
    captured_detail         text,
    captured_latency_ms     double precision NOT NULL,
    outcome                 text             NOT NULL,
    retrieved_slugs         text[],
    retrieved_chunk_ids     bigint[],
    source_ids              text[],
    vector_enabled          boolean,
    expansion_applied       boolean,
    detail_resolved         text,
    latency_ms              double precision,
    error                   text,
    status                  text,
    recall                  numeric,
    jaccard                 numeric,
    rbo                     numeric,
    sources_gained          text[],
    sources_lost            text[],
    latency_ratio           numeric,
    created_at              timestamptz      NOT NULL DEFAULT now(),
    -- The tier clock: the run's own recording time (replay_query_admit_v1 stamps it).
    run_created_at          timestamptz,
    CONSTRAINT replay_query_pkey PRIMARY KEY (replay_query_id),
    CONSTRAINT replay_query_once UNIQUE (replay_run_id, capture_id),
    CONSTRAINT replay_query_run_fkey FOREIGN KEY (replay_run_id) REFERENCES replay_run (replay_run_id),
    CONSTRAINT replay_query_tool_name_known CHECK (tool_name IN ('query', 'search')),
    CONSTRAINT replay_query_outcome_known CHECK (outcome IN ('answered', 'declined', 'adapter_failed', 'capture_purged')),
    CONSTRAINT replay_query_status_known CHECK (status IN ('replayed', 'not_replayable', 'adapter_failed', 'capture_purged')),
    CONSTRAINT replay_query_detail_known CHECK (captured_detail IN ('low', 'medium', 'high')
                                                AND detail_resolved IN ('low', 'medium', 'high')),
    -- An answer carries the result fields; a decline or a failure none of them, and says why.
    CONSTRAINT replay_query_answer_whole CHECK (
        (outcome = 'answered' AND retrieved_slugs IS NOT NULL AND retrieved_chunk_ids IS NOT NULL
         AND source_ids IS NOT NULL AND vector_enabled IS NOT NULL AND expansion_applied IS NOT NULL
         AND latency_ms IS NOT NULL)
        OR (outcome <> 'answered' AND retrieved_slugs IS NULL AND retrieved_chunk_ids IS NULL AND source_ids IS NULL
            AND vector_enabled IS NULL AND expansion_applied IS NULL AND detail_resolved IS NULL
            AND latency_ms IS NULL AND error IS NOT NULL)),
    CONSTRAINT replay_query_error_bounded CHECK (length(error) <= 2000),
    CONSTRAINT replay_query_arrays_whole CHECK (
        array_position(captured_slugs, NULL) IS NULL AND array_position(captured_chunk_ids, NULL) IS NULL
        AND array_position(captured_source_ids, NULL) IS NULL AND array_position(retrieved_slugs, NULL) IS NULL
        AND array_position(retrieved_chunk_ids, NULL) IS NULL AND array_position(source_ids, NULL) IS NULL
        AND coalesce(array_ndims(captured_slugs), 1) = 1 AND coalesce(array_ndims(captured_chunk_ids), 1) = 1
        AND coalesce(array_ndims(captured_source_ids), 1) = 1 AND coalesce(array_ndims(retrieved_slugs), 1) = 1
        AND coalesce(array_ndims(retrieved_chunk_ids), 1) = 1 AND coalesce(array_ndims(source_ids), 1) = 1),
    CONSTRAINT replay_query_latency_finite CHECK (
        captured_latency_ms >= 0 AND captured_latency_ms < 'Infinity'::double precision
        AND latency_ms >= 0 AND latency_ms < 'Infinity'::double precision),
    -- What the database computes is there exactly for a replayed query (the latency ratio when the
    -- captured latency was not 0).
    CONSTRAINT replay_query_measured_iff_replayed CHECK (
        status IS NOT NULL AND run_created_at IS NOT NULL
        AND ((status = 'replayed') = (recall IS NOT NULL)) AND ((status = 'replayed') = (jaccard IS NOT NULL))
        AND ((status = 'replayed') = (rbo IS NOT NULL)) AND ((status = 'replayed') = (sources_gained IS NOT NULL))
        AND ((status = 'replayed') = (sources_lost IS NOT NULL))
        AND (status = 'replayed' OR latency_ratio IS NULL)),
    CONSTRAINT replay_query_measures_in_range CHECK (
        recall >= 0 AND recall <= 1 AND jaccard BETWEEN 0 AND 1 AND rbo BETWEEN 0 AND 1 AND latency_ratio >= 0),
    CONSTRAINT replay_query_captured_latency_ms_finite CHECK (finite_v1(captured_latency_ms::numeric)),
    CONSTRAINT replay_query_latency_ms_finite CHECK (finite_v1(latency_ms::numeric)),
    CONSTRAINT replay_query_recall_finite CHECK (finite_v1(recall)),
    CONSTRAINT replay_query_jaccard_finite CHECK (finite_v1(jaccard)),
    CONSTRAINT replay_query_rbo_finite CHECK (finite_v1(rbo)),
    CONSTRAINT replay_query_latency_ratio_finite CHECK (finite_v1(latency_ratio)),
    -- A file's capture time, the runner's, is one the project's readers can read back (readable_time_v1).
    CONSTRAINT replay_query_capture_time_readable CHECK (
        capture_created_at BETWEEN '0001-01-02 00:00:00+00'::timestamptz AND '9999-12-30 00:00:00+00'::timestamptz)
);

CREATE INDEX replay_query_capture_idx ON replay_query (capture_id);

CREATE POLICY replay_query_runner ON replay_query TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON replay_query TO evalledger_runner;

-- The runner records what the adapter answered; the captured fields of a ledger window, the status
-- and every measure are the database's.
GRANT INSERT (replay_run_id, capture_id, capture_created_at, tool_name, captured_slugs, captured_chunk_ids,
              captured_source_ids, captured_vector_enabled, captured_expand_enabled, captured_detail,
              captured_latency_ms, outcome, retrieved_slugs, retrieved_chunk_ids, source_ids, vector_enabled,
              expansion_applied, detail_resolved, latency_ms, error) ON replay_query TO evalledger_runner;

CREATE POLICY replay_query_revops ON replay_query FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY replay_query_auditor ON replay_query FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON replay_query TO evalledger_revops, evalledger_auditor;
