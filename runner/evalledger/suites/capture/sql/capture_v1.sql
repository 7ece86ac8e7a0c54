-- Eval capture v1: partitions, the export window bound, the NDJSON row (seed 001, schema
-- version 1) and the export query. Installed by migrations/0004.capture.sql as evalledger_owner;
-- every name is schema-qualified all the same. Functions are never replaced: a change is a _v2.

-- =============================================================================================
-- Retention
-- =============================================================================================
-- capture_retention_v1: how long captured rows, failures and keys are kept (the ledger's 7-year purge horizon).
CREATE FUNCTION evalledger.capture_retention_v1() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$ SELECT interval '7 years' $$;

-- capture_partition_expired_v1: true when name is a monthly eval_candidates partition whose whole month is past the retention horizon.
CREATE FUNCTION evalledger.capture_partition_expired_v1(name text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        name ~ '^eval_candidates_p[0-9]{4}(0[1-9]|1[0-2])$'
        AND (to_date(right(name, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
            <= now() - evalledger.capture_retention_v1(),
        false)
$$;

-- =============================================================================================
-- Partitions
-- =============================================================================================
-- capture_ensure_partitions_v1: create the monthly (UTC) partitions of eval_candidates from this month to months_ahead months on, each with its own guards; returns how many it made.
CREATE FUNCTION evalledger.capture_ensure_partitions_v1(months_ahead integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = evalledger, pg_catalog, pg_temp AS $$
DECLARE
    month date;
    part text;
    made integer := 0;
    enable_all text;
BEGIN
    IF months_ahead IS NULL OR months_ahead NOT BETWEEN 0 AND 24 THEN
        RAISE EXCEPTION 'evalledger: months_ahead must be between 0 and 24, not %', months_ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Two writers starting at once would otherwise both try to create the same partition.
    PERFORM pg_advisory_xact_lock(1702257505, 2);
    FOR month IN
        SELECT generate_series(date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC'),
                               date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')
                                   + make_interval(months => months_ahead),
                               interval '1 month')::date
    LOOP
        part := 'eval_candidates_p' || to_char(month, 'YYYYMM');
        CONTINUE WHEN to_regclass('evalledger.' || part) IS NOT NULL;
        EXECUTE format('CREATE TABLE evalledger.%I PARTITION OF evalledger.eval_candidates '
                       'FOR VALUES FROM (%L) TO (%L)', part,
                       to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00',
                       to_char(month + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
        -- A TRUNCATE trigger on the parent does not protect a partition, nor does an INSERT
        -- statement trigger on the parent fire for an INSERT naming the partition.
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON evalledger.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_refuse_change_v1()',
                       part || '_00_no_truncate', part);
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON evalledger.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_window_lock_v1()',
                       part || '_05_window_lock', part);
        -- One ALTER TABLE, so the DDL guard sees the partition only in its final state: row level
        -- security enabled and forced (no policy: partitions are read and written through the
        -- parent) and every trigger, its own and those cloned from the parent, ENABLE ALWAYS.
        SELECT string_agg(format('ENABLE ALWAYS TRIGGER %I', t.tgname), ', ' ORDER BY t.tgname)
          INTO enable_all
          FROM pg_trigger t
         WHERE t.tgrelid = ('evalledger.' || quote_ident(part))::regclass AND NOT t.tgisinternal;
        -- OWNER TO: the partition is the owner role's like its parent, whoever owns this function.
        EXECUTE format('ALTER TABLE evalledger.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY, %s, '
                       'OWNER TO evalledger_owner', part, enable_all);
        made := made + 1;
    END LOOP;
    RETURN made;
END;
$$;

-- =============================================================================================
-- Export
-- =============================================================================================
-- capture_export_bound_v1: the exclusive upper bound of an export window: takes the capture window lock exclusively for an instant and returns clock_timestamp(). Call it in its own statement and read in a later one (READ COMMITTED): every row stamped before the bound is then committed and visible, and no row stamped later can be earlier.
CREATE FUNCTION evalledger.capture_export_bound_v1() RETURNS timestamptz
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bound timestamptz;
BEGIN
    PERFORM pg_advisory_lock(1702257505, 1);
    bound := clock_timestamp();
    PERFORM pg_advisory_unlock(1702257505, 1);
    RETURN bound;
END;
$$;

-- eval_candidate_ndjson_v1: one captured row as its seed-001 NDJSON object (schema_version first: row_to_json keeps column order, jsonb would not).
CREATE FUNCTION evalledger.eval_candidate_ndjson_v1(c evalledger.eval_candidates) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT row_to_json(r) FROM (
        SELECT 1 AS schema_version, c.id, c.tool_name, c.query, c.retrieved_slugs, c.retrieved_chunk_ids,
               c.source_ids, c.expand_enabled, c.detail, c.detail_resolved, c.vector_enabled,
               c.expansion_applied, c.latency_ms, c.remote, c.job_id, c.subagent_id,
               to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at) r
$$;

-- eval_candidates_export_v1: the rows of the window [since, until) (since NULL: unbounded), optionally of one tool, newest first (created_at DESC, id DESC), at most max_rows (NULL: all), each built as eval_candidate_ndjson_v1 builds it. Inlined by the planner, so it streams from the export index under the caller's row-level security; the outer projection keeps the inner order.
CREATE FUNCTION evalledger.eval_candidates_export_v1(since timestamptz, until timestamptz, tool text, max_rows bigint)
RETURNS SETOF json
LANGUAGE sql STABLE AS $$
    SELECT row_to_json(r) FROM (
        SELECT 1 AS schema_version, c.id, c.tool_name, c.query, c.retrieved_slugs, c.retrieved_chunk_ids,
               c.source_ids, c.expand_enabled, c.detail, c.detail_resolved, c.vector_enabled,
               c.expansion_applied, c.latency_ms, c.remote, c.job_id, c.subagent_id,
               to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
          FROM evalledger.eval_candidates c
         WHERE (since IS NULL OR c.created_at >= since)
           AND c.created_at < until
           AND (tool IS NULL OR c.tool_name = tool)
         ORDER BY c.created_at DESC, c.id DESC
         LIMIT max_rows) r
$$;
