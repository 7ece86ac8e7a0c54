-- Eval capture (seed 001): captured queries in eval_candidates (monthly partitions), capture failures, the NDJSON export, the retention purge.

SET LOCAL ROLE evalledger_owner;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- Tables
-- =============================================================================================
\ir ../suites/capture/sql/checks_v1.sql
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
    -- Stamped after the INSERT statement took the capture window lock (capture_window_lock_v1).
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
        array_position(retrieved_slugs, NULL) IS NULL
        AND cardinality(retrieved_slugs) = cardinality(evalledger.capture_distinct_v1(retrieved_slugs))),
    CONSTRAINT eval_candidates_chunk_ids_not_null CHECK (array_position(retrieved_chunk_ids, NULL) IS NULL),
    CONSTRAINT eval_candidates_source_ids_distinct CHECK (
        array_position(source_ids, NULL) IS NULL
        AND cardinality(source_ids) = cardinality(evalledger.capture_distinct_v1(source_ids))),
    CONSTRAINT eval_candidates_arrays_one_dimensional CHECK (
        coalesce(array_ndims(retrieved_slugs), 1) = 1 AND coalesce(array_ndims(retrieved_chunk_ids), 1) = 1
        AND coalesce(array_ndims(source_ids), 1) = 1),
    CONSTRAINT eval_candidates_latency_finite CHECK (latency_ms >= 0 AND latency_ms < 'Infinity'::double precision),
    CONSTRAINT eval_candidates_ids_not_negative CHECK (
        (job_id IS NULL OR job_id >= 0) AND (subagent_id IS NULL OR subagent_id >= 0))
) PARTITION BY RANGE (created_at);

-- Every capture_key ever written (with its row's created_at, for the purge): the UNIQUE key that
-- eval_candidates, being partitioned by time, cannot carry itself.
CREATE TABLE eval_candidate_keys (
    capture_key uuid        NOT NULL,
    created_at  timestamptz NOT NULL,
    CONSTRAINT eval_candidate_keys_pkey PRIMARY KEY (capture_key)
);

-- Why a capture did not reach eval_candidates (seed 001's companion audit table; read by doctor).
CREATE TABLE eval_capture_failures (
    failure_id  bigint      GENERATED ALWAYS AS IDENTITY,
    failure_key uuid        NOT NULL,
    reason      text        NOT NULL,
    occurred_at timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    tool_name   text,
    sqlstate    text,
    detail      text,
    capture_key uuid,
    CONSTRAINT eval_capture_failures_pkey PRIMARY KEY (failure_id),
    CONSTRAINT eval_capture_failures_failure_key_key UNIQUE (failure_key),
    CONSTRAINT eval_capture_failures_reason_known CHECK (
        reason IN ('db_down', 'rls_reject', 'check_violation', 'scrubber_exception', 'other')),
    CONSTRAINT eval_capture_failures_tool_name_known CHECK (tool_name IN ('query', 'search')),
    CONSTRAINT eval_capture_failures_sqlstate_format CHECK (sqlstate ~ '^[0-9A-Z]{5}$'),
    CONSTRAINT eval_capture_failures_detail_short CHECK (char_length(detail) <= 500)
);

-- =============================================================================================
-- Indexes
-- =============================================================================================
-- The export order, newest first (seed 001: created_at DESC, id DESC).
CREATE INDEX eval_candidates_export_idx ON eval_candidates (created_at DESC, id DESC);
-- Export with --tool.
CREATE INDEX eval_candidates_tool_export_idx ON eval_candidates (tool_name, created_at DESC, id DESC);
-- The purge walks keys by age.
CREATE INDEX eval_candidate_keys_created_idx ON eval_candidate_keys (created_at);
-- doctor counts the last 24 hours by reason.
CREATE INDEX eval_capture_failures_occurred_idx ON eval_capture_failures (occurred_at DESC, reason);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
\ir ../suites/capture/sql/capture_window_lock_v1.sql
\ir ../suites/capture/sql/capture_dedupe_v1.sql
\ir ../suites/capture/sql/capture_refuse_change_v1.sql
\ir ../suites/capture/sql/capture_v1.sql
-- Statement-level: the window lock before any row is stamped (COPY included).
CREATE TRIGGER eval_candidates_05_window_lock BEFORE INSERT ON eval_candidates
    FOR EACH STATEMENT EXECUTE FUNCTION capture_window_lock_v1();
-- A capture_key written before makes the row a no-op (idempotent replay).
CREATE TRIGGER eval_candidates_10_dedupe BEFORE INSERT ON eval_candidates
    FOR EACH ROW EXECUTE FUNCTION capture_dedupe_v1();
-- Append-only guards (row triggers are cloned onto every partition; TRUNCATE triggers are not,
-- so capture_ensure_partitions_v1 gives each partition its own).
CREATE TRIGGER eval_candidates_00_append_only BEFORE UPDATE OR DELETE ON eval_candidates
    FOR EACH ROW EXECUTE FUNCTION capture_refuse_change_v1();
CREATE TRIGGER eval_candidates_00_no_truncate BEFORE TRUNCATE ON eval_candidates
    FOR EACH STATEMENT EXECUTE FUNCTION capture_refuse_change_v1();
CREATE TRIGGER eval_candidate_keys_00_append_only BEFORE UPDATE OR DELETE ON eval_candidate_keys
    FOR EACH ROW EXECUTE FUNCTION capture_refuse_change_v1();
CREATE TRIGGER eval_candidate_keys_00_no_truncate BEFORE TRUNCATE ON eval_candidate_keys
    FOR EACH STATEMENT EXECUTE FUNCTION capture_refuse_change_v1();
CREATE TRIGGER eval_capture_failures_00_append_only BEFORE UPDATE OR DELETE ON eval_capture_failures
    FOR EACH ROW EXECUTE FUNCTION capture_refuse_change_v1();
CREATE TRIGGER eval_capture_failures_00_no_truncate BEFORE TRUNCATE ON eval_capture_failures
    FOR EACH STATEMENT EXECUTE FUNCTION capture_refuse_change_v1();

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- FORCE: the owner is held to the policies too. ENABLE ALWAYS: with session_replication_role =
-- replica an ordinary trigger is skipped. One ALTER TABLE per table sets both, so the DDL guard
-- only ever sees the table in its final state.
ALTER TABLE eval_candidates ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER eval_candidates_00_append_only, ENABLE ALWAYS TRIGGER eval_candidates_00_no_truncate,
    ENABLE ALWAYS TRIGGER eval_candidates_05_window_lock, ENABLE ALWAYS TRIGGER eval_candidates_10_dedupe;
ALTER TABLE eval_candidate_keys ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER eval_candidate_keys_00_append_only, ENABLE ALWAYS TRIGGER eval_candidate_keys_00_no_truncate;
ALTER TABLE eval_capture_failures ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER eval_capture_failures_00_append_only,
    ENABLE ALWAYS TRIGGER eval_capture_failures_00_no_truncate;

-- The owner sees everything through its own policy.
CREATE POLICY eval_candidates_owner_all ON eval_candidates TO evalledger_owner USING (true) WITH CHECK (true);
CREATE POLICY eval_candidate_keys_owner_all ON eval_candidate_keys TO evalledger_owner USING (true) WITH CHECK (true);
CREATE POLICY eval_capture_failures_owner_all ON eval_capture_failures TO evalledger_owner USING (true) WITH CHECK (true);

-- The runner captures (INSERT of the input columns only: id and created_at are the database's)
-- and exports; it records failures. Nobody but the owner touches eval_candidate_keys.
CREATE POLICY eval_candidates_runner_read ON eval_candidates FOR SELECT TO evalledger_runner USING (true);
CREATE POLICY eval_candidates_runner_insert ON eval_candidates FOR INSERT TO evalledger_runner WITH CHECK (true);
CREATE POLICY eval_capture_failures_runner_read ON eval_capture_failures FOR SELECT TO evalledger_runner USING (true);
CREATE POLICY eval_capture_failures_runner_insert ON eval_capture_failures FOR INSERT TO evalledger_runner WITH CHECK (true);
GRANT SELECT ON eval_candidates, eval_capture_failures TO evalledger_runner;
GRANT INSERT (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids, expand_enabled, detail,
              detail_resolved, vector_enabled, expansion_applied, latency_ms, remote, job_id, subagent_id,
              capture_key) ON eval_candidates TO evalledger_runner;
GRANT INSERT (failure_key, reason, occurred_at, tool_name, sqlstate, detail, capture_key)
    ON eval_capture_failures TO evalledger_runner;

-- RevOps reads the hot tier (24 months); auditors read everything retained. Agents: nothing.
CREATE POLICY eval_candidates_revops ON eval_candidates FOR SELECT TO evalledger_revops
    USING (created_at >= now() - interval '24 months');
CREATE POLICY eval_capture_failures_revops ON eval_capture_failures FOR SELECT TO evalledger_revops
    USING (recorded_at >= now() - interval '24 months');
CREATE POLICY eval_candidates_auditor ON eval_candidates FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY eval_capture_failures_auditor ON eval_capture_failures FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_candidates, eval_capture_failures TO evalledger_revops, evalledger_auditor;

-- Functions: nothing is PUBLIC; the runner keeps partitions ahead and exports; readers export.
REVOKE EXECUTE ON FUNCTION capture_distinct_v1(text[]), capture_window_lock_v1(), capture_dedupe_v1(),
    capture_refuse_change_v1(), capture_retention_v1(), capture_partition_expired_v1(text),
    capture_ensure_partitions_v1(integer), capture_export_bound_v1(), eval_candidate_ndjson_v1(eval_candidates),
    eval_candidates_export_v1(timestamptz, timestamptz, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION capture_ensure_partitions_v1(integer) TO evalledger_runner;
GRANT EXECUTE ON FUNCTION capture_export_bound_v1(), eval_candidate_ndjson_v1(eval_candidates),
    eval_candidates_export_v1(timestamptz, timestamptz, text, bigint), capture_distinct_v1(text[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- This month and the next three exist from the start; writers extend the range as they run.
SELECT capture_ensure_partitions_v1(3);

RESET ROLE;

-- =============================================================================================
-- Retention purge and the drop guard that knows it (the user who migrates owns both)
-- =============================================================================================
\ir ../suites/capture/sql/purge_v1.sql
\ir ../core/sql/drop_guard_v2.sql
REVOKE EXECUTE ON FUNCTION evalledger.capture_purge_v1(), evalledger.capture_purging_v1(),
    evalledger.drop_guard_v2() FROM PUBLIC;
-- The append-only guard (run as evalledger_owner) and the drop guard (run as whoever drops) ask.
GRANT EXECUTE ON FUNCTION evalledger.capture_purging_v1() TO evalledger_owner;

-- The sql_drop event trigger keeps its name (doctor and operators know it by that name) and now
-- runs drop_guard_v2, which refuses everything drop_guard_v1 refused except the purge's own drops.
DO $events$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        DROP EVENT TRIGGER evalledger_drop_guard_v1;
        CREATE EVENT TRIGGER evalledger_drop_guard_v1 ON sql_drop
            EXECUTE FUNCTION evalledger.drop_guard_v2();
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$events$;
