-- One captured query or search call (seed 001, row schema v1), partitioned by month of created_at.
CREATE TABLE eval_candidates (
    id                  bigint           GENERATED ALWAYS AS IDENTITY,
    tool_name           text             NOT NULL,
    query               text             NOT NULL,
    retrieved_slugs     text[]           NOT NULL DEFAULT '{}',
    retrieved_chunk_ids bigint[]         NOT NULL DEFAULT '{}',
    source_ids          text[]           NOT NULL DEFAULT '{}',
    expand_enabled      boolean,
    detail              text,
    detail_resolved     text,
    vector_enabled      boolean          NOT NULL,
    expansion_applied   boolean          NOT NULL,
    latency_ms          double precision NOT NULL,
    remote              boolean          NOT NULL,
    job_id              bigint,
    subagent_id         bigint,
    -- Stamped after the INSERT statement took the capture window lock (capture_window_lock_v2).
    created_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
    -- Client-generated, unique through eval_candidate_keys; never exported.
    capture_key         uuid             NOT NULL,
    CONSTRAINT eval_candidates_pkey PRIMARY KEY (created_at, id),
    CONSTRAINT eval_candidates_tool_name_known CHECK (tool_name IN ('query', 'search')),
    CONSTRAINT eval_candidates_query_max_50kb CHECK (octet_length(query) <= 51200),
    CONSTRAINT eval_candidates_detail_known CHECK (detail IN ('low', 'medium', 'high')),
    CONSTRAINT eval_candidates_detail_resolved_known CHECK (detail_resolved IN ('low', 'medium', 'high')),
    CONSTRAINT eval_candidates_expand_only_for_query CHECK (tool_name = 'query' OR expand_enabled IS NULL),
    CONSTRAINT eval_candidates_slugs_distinct CHECK (
        array_position(retrieved_slugs, NULL) IS NULL AND evalledger.capture_all_distinct_v1(retrieved_slugs)),
    CONSTRAINT eval_candidates_chunk_ids_not_null CHECK (array_position(retrieved_chunk_ids, NULL) IS NULL),
    CONSTRAINT eval_candidates_source_ids_distinct CHECK (
        array_position(source_ids, NULL) IS NULL AND evalledger.capture_all_distinct_v1(source_ids)),
    CONSTRAINT eval_candidates_arrays_one_dimensional CHECK (
        coalesce(array_ndims(retrieved_slugs), 1) = 1 AND coalesce(array_ndims(retrieved_chunk_ids), 1) = 1
        AND coalesce(array_ndims(source_ids), 1) = 1),
    CONSTRAINT eval_candidates_latency_finite CHECK (latency_ms >= 0 AND latency_ms < 'Infinity'::double precision),
    CONSTRAINT eval_candidates_latency_ms_finite CHECK (finite_v1(latency_ms::numeric)),
    CONSTRAINT eval_candidates_ids_not_negative CHECK (
        (job_id IS NULL OR job_id >= 0) AND (subagent_id IS NULL OR subagent_id >= 0))
) PARTITION BY RANGE (created_at);

-- The export order, newest first (seed 001: created_at DESC, id DESC).
CREATE INDEX eval_candidates_export_idx ON eval_candidates (created_at DESC, id DESC);

-- Export with --tool.
CREATE INDEX eval_candidates_tool_export_idx ON eval_candidates (tool_name, created_at DESC, id DESC);

-- Production beside eval (production_beside_eval_rows_v1) looks a catalog question's captured
-- queries up by the prompt hash of their normal form: one index probe per question, not a hash of
-- every captured row per read.
CREATE INDEX eval_candidates_prompt_idx ON eval_candidates (evalledger.prompt_normal_hash_v1(query));

-- The runner captures (INSERT of the input columns only: id and created_at are the database's)
-- and exports; it records failures. Nobody but the owner touches eval_candidate_keys.
CREATE POLICY eval_candidates_runner_read ON eval_candidates FOR SELECT TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_candidates_runner_insert ON eval_candidates FOR INSERT TO evalledger_runner WITH CHECK (true);
GRANT SELECT ON eval_candidates TO evalledger_runner;
GRANT INSERT (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids, expand_enabled, detail,
              detail_resolved, vector_enabled, expansion_applied, latency_ms, remote, job_id, subagent_id,
              capture_key) ON eval_candidates TO evalledger_runner;

-- RevOps reads the hot tier; auditors read everything retained. Agents: nothing.
CREATE POLICY eval_candidates_revops ON eval_candidates FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_candidates_auditor ON eval_candidates FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_candidates TO evalledger_revops, evalledger_auditor;
