-- BrainBench-Real (issue 40, item 1): `evalledger run replay` asks a brain version again the
-- queries production captured (seed 001) and the database decides how far its retrieval drifted.
-- Two append-only, journalled tables: replay_run (a run: the brain version, the adapter, the window
-- or file, the rubric, and at completion the decision) and replay_query (each captured row asked
-- again: the captured fields, what the adapter answered, and what the database computes: status,
-- recall, jaccard, rank-biased overlap, sources gained and lost, latency ratio). A replay rubric
-- (v1.0, activated), rubric_check_v2 knowing it, and run claims of the suite 'replay'. Nothing any
-- role could do or read before changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The rubric check knows the replay suite's rubric.
-- rubric_check_v2: what is wrong with a rubric definition (NULL when nothing): the fields its
-- suite's decision code reads are present and typed, and seed 002's hard criteria (hallucination
-- rate <= 2%, staleness recognition = 100%, lever mapping = 100% for AGT-902) are never loosened,
-- and a missed hard criterion decides fail; a judged suite (takes-quality, work-quality) has a
-- numeric scale its judges' scores must keep to; takes-quality's panel policy is never below seed
-- 000's three frontier models, nor single-family (the design's cross-family panel); replay's pass
-- rule, rbo_p, min_replayable and min_replayable_share are numbers in their ranges. Policy is
-- validated when it is written, and again when a run is admitted under it (rubric_admitted_v2).
CREATE OR REPLACE FUNCTION evalledger.rubric_check_v2(suite text, definition jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    item jsonb;
    hard jsonb;
    field text;
    problem text;
BEGIN
    IF definition ->> 'suite' IS DISTINCT FROM suite THEN
        RETURN format('definition.suite is %s, not %s', coalesce(definition ->> 'suite', 'missing'), suite);
    END IF;
    IF jsonb_typeof(definition -> 'dimensions') IS DISTINCT FROM 'array'
       OR jsonb_array_length(definition -> 'dimensions') = 0 THEN
        RETURN 'dimensions must be a non-empty array';
    END IF;
    SELECT format('dimensions[%s].key must be a non-empty string', n - 1) INTO problem
      FROM jsonb_array_elements(definition -> 'dimensions') WITH ORDINALITY x(d, n)
     WHERE jsonb_typeof(d -> 'key') IS DISTINCT FROM 'string' OR d ->> 'key' = '' ORDER BY n LIMIT 1;
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    -- The deadline of an open run of every suite (brain_eval_run_deadline_v1; 14 days when absent).
    IF definition ? 'open_run_days' AND (jsonb_typeof(definition -> 'open_run_days') IS DISTINCT FROM 'number'
       OR (definition ->> 'open_run_days')::numeric NOT BETWEEN 1 AND 366) THEN
        RETURN 'open_run_days must be a number of days from 1 to 366';
    END IF;
    CASE suite
    WHEN 'brain-eval' THEN
        IF definition ->> 'hard_failure_decision' IS DISTINCT FROM 'fail' THEN
            RETURN format('hard_failure_decision must be fail, not %s', coalesce(definition ->> 'hard_failure_decision', 'missing'));
        END IF;
        FOREACH field IN ARRAY ARRAY['hard_criteria', 'soft_criteria', 'decision_ladder'] LOOP
            IF jsonb_typeof(definition -> field) IS DISTINCT FROM 'array' THEN
                RETURN format('%s must be an array', field);
            END IF;
        END LOOP;
        IF jsonb_typeof(definition -> 'diagnosis_question_types') IS DISTINCT FROM 'array'
           OR jsonb_path_exists(definition, '$.diagnosis_question_types[*] ? (@.type() != "string")') THEN
            RETURN 'diagnosis_question_types must be an array of question types (which have a diagnosis to score)';
        END IF;
        FOR item IN SELECT c FROM jsonb_array_elements((definition -> 'hard_criteria') || (definition -> 'soft_criteria')) c LOOP
            IF jsonb_typeof(item -> 'key') IS DISTINCT FROM 'string' OR item ->> 'op' IS NULL
               OR item ->> 'op' NOT IN ('<=', '>=') OR jsonb_typeof(item -> 'threshold') IS DISTINCT FROM 'number' THEN
                RETURN format('criterion %s needs a key, an op (<= or >=) and a numeric threshold', item);
            END IF;
        END LOOP;
        FOR item IN SELECT s FROM jsonb_array_elements(definition -> 'decision_ladder') s LOOP
            IF jsonb_typeof(item -> 'min_soft_passed') IS DISTINCT FROM 'number'
               OR item ->> 'decision' IS NULL
               OR item ->> 'decision' NOT IN ('pass', 'pass_with_notes', 'conditional', 'fail') THEN
                RETURN format('decision_ladder step %s needs a numeric min_soft_passed and a decision', item);
            END IF;
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(definition -> 'decision_ladder') s
                        WHERE (s ->> 'min_soft_passed')::numeric = 0) THEN
            RETURN 'decision_ladder needs a step at min_soft_passed 0';
        END IF;
        FOR hard IN SELECT h::jsonb FROM unnest(ARRAY[
                '{"key": "hallucination_rate", "op": "<=", "threshold": 0.02}',
                '{"key": "staleness_recognition_rate", "op": ">=", "threshold": 1.0}',
                '{"key": "lever_mapping_correctness", "op": ">=", "threshold": 1.0, "brain": "AGT-902"}']) h LOOP
            IF NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements(definition -> 'hard_criteria') c
                 WHERE c ->> 'key' = hard ->> 'key' AND c ->> 'op' = hard ->> 'op'
                   AND CASE hard ->> 'op' WHEN '<=' THEN (c ->> 'threshold')::numeric <= (hard ->> 'threshold')::numeric
                                          ELSE (c ->> 'threshold')::numeric >= (hard ->> 'threshold')::numeric END
                   AND CASE WHEN hard ? 'brain' THEN NOT c ? 'applies_to' OR (c -> 'applies_to') ? (hard ->> 'brain')
                            ELSE NOT c ? 'applies_to' END) THEN
                RETURN format('hard criterion %s %s %s is required (seed 002)', hard ->> 'key', hard ->> 'op', hard ->> 'threshold');
            END IF;
        END LOOP;
        IF jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,1}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,speculation_pct_max}') IS DISTINCT FROM 'number' THEN
            RETURN 'confidence_band needs numeric high_confidence_pct [low, high] and speculation_pct_max';
        END IF;
        SELECT format('question_pass.%s must be a number', k) INTO problem
          FROM unnest(ARRAY['max_hallucinations', 'min_citation_rate', 'min_diagnosis_accuracy',
                            'min_narrative_coherence', 'max_lever_violations']) k
         WHERE jsonb_typeof(definition -> 'question_pass' -> k) IS DISTINCT FROM 'number' LIMIT 1;
        RETURN problem;
    WHEN 'takes-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,every_dim_mean_at_least}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{pass_rule,every_dim_min_at_least}') IS DISTINCT FROM 'number' THEN
            RETURN 'pass_rule needs numeric every_dim_mean_at_least and every_dim_min_at_least';
        END IF;
        IF jsonb_typeof(definition #> '{quorum,min_contributing_fraction,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{quorum,min_contributing_fraction,1}') IS DISTINCT FROM 'number'
           OR (definition #>> '{quorum,min_contributing_fraction,1}')::numeric <= 0 THEN
            RETURN 'quorum.min_contributing_fraction needs [numerator, positive denominator]';
        END IF;
        IF jsonb_typeof(definition #> '{panel,min_models}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{panel,min_families}') IS DISTINCT FROM 'number'
           OR (definition #>> '{panel,min_models}')::numeric < 3
           OR (definition #>> '{panel,min_families}')::numeric < 2
           OR (definition #>> '{panel,min_families}')::numeric > (definition #>> '{panel,min_models}')::numeric
           OR (definition #>> '{panel,min_models}')::numeric <> trunc((definition #>> '{panel,min_models}')::numeric)
           OR (definition #>> '{panel,min_families}')::numeric <> trunc((definition #>> '{panel,min_families}')::numeric) THEN
            RETURN 'panel needs whole numbers min_models >= 3 (seed 000: three frontier models) and '
                   'min_families >= 2 (a cross-family panel), no more families than models';
        END IF;
        RETURN NULL;
    WHEN 'work-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{compare,same_band}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{compare,regress_tolerance}') IS DISTINCT FROM 'number' THEN
            RETURN 'compare needs numeric same_band and regress_tolerance';
        END IF;
        RETURN NULL;
    WHEN 'replay' THEN
        -- replay_decision_v1 and replay_rbo_v1 read these (issue 40).
        IF jsonb_typeof(definition -> 'rbo_p') IS DISTINCT FROM 'number'
           OR (definition ->> 'rbo_p')::numeric <= 0 OR (definition ->> 'rbo_p')::numeric > 1 THEN
            RETURN 'rbo_p must be a number above 0 and at most 1';
        END IF;
        IF jsonb_typeof(definition -> 'min_replayable') IS DISTINCT FROM 'number'
           OR (definition ->> 'min_replayable')::numeric < 1
           OR (definition ->> 'min_replayable')::numeric <> trunc((definition ->> 'min_replayable')::numeric) THEN
            RETURN 'min_replayable must be a whole number of queries, at least 1';
        END IF;
        IF jsonb_typeof(definition -> 'min_replayable_share') IS DISTINCT FROM 'number'
           OR (definition ->> 'min_replayable_share')::numeric NOT BETWEEN 0 AND 1 THEN
            RETURN 'min_replayable_share must be a number from 0 to 1';
        END IF;
        SELECT format('pass_rule.%s must be a number from 0 to 1', k) INTO problem
          FROM unnest(ARRAY['mean_recall_at_least', 'every_recall_at_least', 'adapter_failed_share_at_most']) k
         WHERE jsonb_typeof(definition -> 'pass_rule' -> k) IS DISTINCT FROM 'number'
            OR (definition -> 'pass_rule' ->> k)::numeric NOT BETWEEN 0 AND 1 LIMIT 1;
        IF problem IS NOT NULL THEN
            RETURN problem;
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,p95_latency_ratio_at_most}') IS DISTINCT FROM 'number'
           OR (definition #>> '{pass_rule,p95_latency_ratio_at_most}')::numeric <= 0 THEN
            RETURN 'pass_rule.p95_latency_ratio_at_most must be a number above 0';
        END IF;
        RETURN NULL;
    ELSE
        RETURN format('no suite %s', suite);
    END CASE;
END;
$$;


-- replay_recall_v1: recall of the captured slugs in the replayed ones at the captured count: of
-- the k distinct slugs production retrieved, the share found among the first k slugs the replay
-- retrieved (k = how many production retrieved). Nothing captured is nothing lost: 1. Exact, never
-- rounded (numeric division).
CREATE FUNCTION evalledger.replay_recall_v1(captured text[], replayed text[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT DISTINCT s FROM unnest(captured) s),
         k AS (SELECT count(*) AS n FROM c),
         top AS (SELECT DISTINCT s FROM unnest(replayed) WITH ORDINALITY u(s, i) WHERE i <= (SELECT n FROM k))
    SELECT CASE WHEN (SELECT n FROM k) = 0 THEN 1::numeric
                ELSE (SELECT count(*) FROM c JOIN top USING (s))::numeric / (SELECT n FROM k) END
$$;

-- replay_jaccard_v1: the Jaccard index of the captured and the replayed slug sets, |C ∩ R| / |C ∪ R|
-- (duplicates counted once, order ignored); two empty sets are the same set: 1. Exact, never rounded.
CREATE FUNCTION evalledger.replay_jaccard_v1(captured text[], replayed text[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT DISTINCT s FROM unnest(captured) s),
         r AS (SELECT DISTINCT s FROM unnest(replayed) s),
         u AS (SELECT s FROM c UNION SELECT s FROM r)
    SELECT CASE WHEN (SELECT count(*) FROM u) = 0 THEN 1::numeric
                ELSE (SELECT count(*) FROM c JOIN r USING (s))::numeric / (SELECT count(*) FROM u) END
$$;

-- replay_rbo_v1: rank-biased overlap of two chunk orders, normalised at their depth (docs/replay.md
-- gives the formula). Each list keeps a chunk id at its first rank only (seed 001 keeps one id per
-- hit, so a chunk hit twice counts where it first came), the later ones moving up. With S and T
-- the lists so made and D = max(|S|, |T|), the overlap at depth d is
-- A_d = |S[1..d] ∩ T[1..d]| / d (a list shorter than d taken whole), and
--     rbo = sum_{d=1..D} p^(d-1) A_d  /  sum_{d=1..D} p^(d-1),
-- 1 for the same order, 0 for no chunk in common; two empty lists: 1. p (0 < p <= 1) is the
-- rubric's rbo_p: how much the top ranks weigh. A common chunk counts from the depth where both
-- lists hold it (the larger of its two ranks). Exact, never rounded.
CREATE FUNCTION evalledger.replay_rbo_v1(captured bigint[], replayed bigint[], p numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH s AS (SELECT id, row_number() OVER (ORDER BY min(i)) AS rank
                 FROM unnest(captured) WITH ORDINALITY u(id, i) GROUP BY id),
         t AS (SELECT id, row_number() OVER (ORDER BY min(i)) AS rank
                 FROM unnest(replayed) WITH ORDINALITY u(id, i) GROUP BY id),
         depth AS (SELECT greatest((SELECT count(*) FROM s), (SELECT count(*) FROM t)) AS d),
         common AS (SELECT greatest(s.rank, t.rank) AS at FROM s JOIN t USING (id))
    SELECT CASE WHEN depth.d = 0 THEN 1::numeric
                ELSE (SELECT sum(p ^ (k - 1) * (SELECT count(*) FROM common WHERE common.at <= k)::numeric / k)
                           / sum(p ^ (k - 1))
                        FROM generate_series(1::bigint, depth.d) k) END
      FROM depth
$$;

-- One replay run (issue 40, BrainBench-Real): captured production queries asked again of a brain
-- version through an adapter, each replayed query a replay_query row. What was replayed is the
-- run's source: the ledger's captured rows of a window (since_at inclusive, NULL unbounded, to
-- until_at exclusive, optionally of one tool, of remote or local callers, the newest max_rows), or
-- an export file (file_sha256, its rows given by the runner). request is what the operator typed,
-- request_sha8 the database's fingerprint of it with the brain version and the adapter: one open
-- run per request, so a runner killed halfway resumes it. scope_sha8, the database's fingerprint
-- of the resolved window or file and its filters, is the run's identity with the brain version,
-- the adapter and the rubric: the same window replayed again reads the same run back. planned
-- (how many captured rows the run replays) is the database's for a ledger window. started_at is
-- the database's clock; at completion the database decides (replay_run_decide_v1).
CREATE TABLE replay_run (
    replay_run_id bigint      GENERATED ALWAYS AS IDENTITY,
    brain_version text        NOT NULL,
    adapter_kind  text        NOT NULL,
    adapter       text        NOT NULL,
    source        text        NOT NULL,
    request       jsonb       NOT NULL,
    since_at      timestamptz,
    until_at      timestamptz,
    tool          text,
    remote        boolean,
    max_rows      bigint,
    file_sha256   text,
    planned       integer,
    rubric_id     bigint,
    request_sha8  text,
    scope_sha8    text,
    started_at    timestamptz,
    completed_at  timestamptz,
    decision      text,
    rationale     text,
    summary       jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT replay_run_pkey PRIMARY KEY (replay_run_id),
    CONSTRAINT replay_run_identity_key UNIQUE (brain_version, adapter_kind, adapter, scope_sha8, rubric_id),
    CONSTRAINT replay_run_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT replay_run_brain_version_not_blank CHECK (btrim(brain_version) <> '' AND length(brain_version) <= 200),
    CONSTRAINT replay_run_adapter_kind_known CHECK (adapter_kind IN ('command', 'url', 'python')),
    CONSTRAINT replay_run_adapter_not_blank CHECK (btrim(adapter) <> '' AND length(adapter) <= 4000),
    CONSTRAINT replay_run_source_known CHECK (source IN ('ledger', 'file')),
    CONSTRAINT replay_run_request_is_object CHECK (jsonb_typeof(request) = 'object'),
    CONSTRAINT replay_run_tool_known CHECK (tool IN ('query', 'search')),
    CONSTRAINT replay_run_max_rows_positive CHECK (max_rows > 0),
    -- A ledger window has its end, a file its digest; neither has the other's.
    CONSTRAINT replay_run_source_whole CHECK (
        (source = 'ledger' AND until_at IS NOT NULL AND file_sha256 IS NULL AND (since_at IS NULL OR since_at < until_at))
        OR (source = 'file' AND file_sha256 ~ '^[0-9a-f]{64}$' AND since_at IS NULL AND until_at IS NULL
            AND tool IS NULL AND remote IS NULL AND max_rows IS NULL)),
    CONSTRAINT replay_run_identity_whole CHECK (
        planned IS NOT NULL AND planned >= 0 AND rubric_id IS NOT NULL AND started_at IS NOT NULL
        AND request_sha8 ~ '^[0-9a-f]{8}$' AND scope_sha8 ~ '^[0-9a-f]{8}$'),
    -- A window's bounds, the runner's, are times the project's readers can read back (as
    -- readable_time_v1 says; its end is no later than the database's clock: replay_run_admit_v1).
    CONSTRAINT replay_run_window_readable CHECK (
        since_at >= '0001-01-02 00:00:00+00'::timestamptz AND since_at <= '9999-12-30 00:00:00+00'::timestamptz
        AND until_at BETWEEN '0001-01-02 00:00:00+00'::timestamptz AND '9999-12-30 00:00:00+00'::timestamptz),
    CONSTRAINT replay_run_decision_known CHECK (decision IN ('pass', 'fail', 'inconclusive')),
    CONSTRAINT replay_run_completed_after_start CHECK (completed_at IS NULL OR completed_at >= started_at),
    -- What the database decides at completion is absent while the run is open, present after.
    CONSTRAINT replay_run_decided_iff_complete CHECK (
        (completed_at IS NULL AND decision IS NULL AND rationale IS NULL AND summary IS NULL)
        OR (completed_at IS NOT NULL AND decision IS NOT NULL AND rationale IS NOT NULL AND summary IS NOT NULL))
);

-- One open run per request (brain version, adapter, what was asked for): a second runner of the
-- same request finds the open one, whatever the clock resolved its window to.
CREATE UNIQUE INDEX replay_run_one_open_idx ON replay_run (request_sha8) WHERE completed_at IS NULL;

-- Drift over time per brain version.
CREATE INDEX replay_run_brain_idx ON replay_run (brain_version, started_at);

CREATE INDEX replay_run_created_idx ON replay_run (created_at);

CREATE POLICY replay_run_runner ON replay_run TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON replay_run TO evalledger_runner;

-- The runner names what it replays; the fingerprints, the plan of a ledger window, the times and
-- the decision are the database's.
GRANT INSERT (brain_version, adapter_kind, adapter, source, request, since_at, until_at, tool, remote, max_rows,
              file_sha256, planned, rubric_id) ON replay_run TO evalledger_runner;

CREATE POLICY replay_run_revops ON replay_run FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY replay_run_auditor ON replay_run FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON replay_run TO evalledger_revops, evalledger_auditor;

-- One captured query asked again in a replay run: what production retrieved (the captured row's
-- fields; for a ledger window the database copies them from eval_candidates itself), what the
-- runner observed (outcome: the adapter answered, declined to replay the row in its mode, or
-- failed: a non-zero exit, a time-out, a reply that is not the JSON asked for, with its error),
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
    CONSTRAINT replay_query_outcome_known CHECK (outcome IN ('answered', 'declined', 'adapter_failed')),
    CONSTRAINT replay_query_status_known CHECK (status IN ('replayed', 'not_replayable', 'adapter_failed')),
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

-- replay_decision_v1: a replay run's decision, its rationale and the figures they rest on, from its
-- stored query rows and its rubric (data): fail when more than pass_rule.adapter_failed_share_at_most
-- of the queries asked failed in the adapter; else inconclusive when fewer queries were replayed in
-- their captured mode than min_replayable, or than min_replayable_share of those asked (a brain
-- that declines or answers in another mode is not measured, and does not pass by it); else fail
-- when the mean recall is below mean_recall_at_least, when any query's recall is below
-- every_recall_at_least (the lowest named, by capture id, up to ten), or when the p95 of the
-- replayed latencies is more than p95_latency_ratio_at_most times the p95 of their captured
-- latencies (percentile_cont; not compared when the captured p95 is 0 ms); pass otherwise. Figures
-- are stored unrounded; the rationale shows them to three decimals. The decision trigger
-- (replay_run_decide_v1) calls it, and so does the ledger's recompute.
CREATE FUNCTION evalledger.replay_decision_v1(run evalledger.replay_run) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rule jsonb;
    need numeric;
    share numeric;
    failing boolean;
    f record;
    low text;
    reasons text[] := '{}';
    decision text;
    rationale text;
BEGIN
    SELECT r.definition -> 'pass_rule', (r.definition ->> 'min_replayable')::numeric,
           (r.definition ->> 'min_replayable_share')::numeric INTO rule, need, share
      FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT count(*) AS asked,
           count(*) FILTER (WHERE q.status = 'replayed') AS replayed,
           count(*) FILTER (WHERE q.status = 'not_replayable') AS not_replayable,
           count(*) FILTER (WHERE q.status = 'adapter_failed') AS adapter_failed,
           avg(q.recall) AS mean_recall,
           min(q.recall) AS min_recall,
           avg(q.jaccard) AS mean_jaccard,
           avg(q.rbo) AS mean_rbo,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.latency_ms) FILTER (WHERE q.status = 'replayed') AS p95_ms,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.captured_latency_ms)
               FILTER (WHERE q.status = 'replayed') AS captured_p95_ms,
           count(*) FILTER (WHERE cardinality(q.sources_lost) > 0) AS losing_a_source
      INTO f
      FROM evalledger.replay_query q WHERE q.replay_run_id = run.replay_run_id;

    failing := f.asked > 0 AND f.adapter_failed::numeric / f.asked > (rule ->> 'adapter_failed_share_at_most')::numeric;
    need := greatest(need, ceil(share * f.asked));
    IF NOT failing AND f.replayed < need THEN
        decision := 'inconclusive';
        rationale := format('Inconclusive: %s of %s queries replayed in their captured mode, at least %s needed '
                            '(%s not replayable, %s adapter failures).',
                            f.replayed, f.asked, need, f.not_replayable, f.adapter_failed);
    ELSE
        IF f.mean_recall < (rule ->> 'mean_recall_at_least')::numeric THEN
            reasons := reasons || format('mean recall %s below %s', round(f.mean_recall, 3),
                                         rule ->> 'mean_recall_at_least');
        END IF;
        SELECT format('%s %s below %s: %s', count(*), CASE WHEN count(*) = 1 THEN 'query' ELSE 'queries' END,
                      rule ->> 'every_recall_at_least',
                      string_agg(format('capture %s (recall %s)', x.capture_id, round(x.recall, 3)), ', '
                                 ORDER BY x.recall, x.capture_id) FILTER (WHERE x.n <= 10)
                      || CASE WHEN count(*) > 10 THEN format(' and %s more', count(*) - 10) ELSE '' END)
          INTO low
          FROM (SELECT q.capture_id, q.recall, row_number() OVER (ORDER BY q.recall, q.capture_id) AS n
                  FROM evalledger.replay_query q
                 WHERE q.replay_run_id = run.replay_run_id AND q.status = 'replayed'
                   AND q.recall < (rule ->> 'every_recall_at_least')::numeric) x
        HAVING count(*) > 0;
        IF low IS NOT NULL THEN
            reasons := reasons || low;
        END IF;
        IF f.captured_p95_ms > 0
           AND f.p95_ms::numeric / f.captured_p95_ms::numeric > (rule ->> 'p95_latency_ratio_at_most')::numeric THEN
            reasons := reasons || format('p95 latency %sx the captured, above %sx',
                                         round(f.p95_ms::numeric / f.captured_p95_ms::numeric, 3),
                                         rule ->> 'p95_latency_ratio_at_most');
        END IF;
        IF failing THEN
            reasons := reasons || format('%s of %s queries failed in the adapter, above a share of %s',
                                         f.adapter_failed, f.asked, rule ->> 'adapter_failed_share_at_most');
        END IF;
        IF cardinality(reasons) > 0 THEN
            decision := 'fail';
            rationale := 'Fail: ' || array_to_string(reasons, '; ') || '.';
        ELSE
            decision := 'pass';
            rationale := format('Pass: mean recall %s over %s replayed queries, lowest %s; p95 latency %s.',
                                round(f.mean_recall, 3), f.replayed, round(f.min_recall, 3),
                                CASE WHEN f.captured_p95_ms > 0
                                     THEN round(f.p95_ms::numeric / f.captured_p95_ms::numeric, 3) || 'x the captured'
                                     ELSE 'not compared (captured p95 0 ms)' END);
        END IF;
        IF f.not_replayable + f.adapter_failed > 0 THEN
            rationale := rationale || format(' %s not replayable, %s adapter failures.', f.not_replayable,
                                             f.adapter_failed);
        END IF;
    END IF;
    RETURN jsonb_build_object(
        'decision', decision, 'rationale', rationale, 'asked', f.asked, 'replayed', f.replayed,
        'not_replayable', f.not_replayable, 'adapter_failed', f.adapter_failed,
        'mean_recall', f.mean_recall, 'min_recall', f.min_recall, 'mean_jaccard', f.mean_jaccard,
        'mean_rbo', f.mean_rbo, 'p95_latency_ms', f.p95_ms, 'captured_p95_latency_ms', f.captured_p95_ms,
        'p95_latency_ratio', CASE WHEN f.captured_p95_ms > 0 THEN f.p95_ms::numeric / f.captured_p95_ms::numeric END,
        'queries_losing_a_source', f.losing_a_source);
END;
$$;

-- replay_complete_v1: the runner completes an open replay run it may read (the hot tier); the
-- run's decision, rationale and summary as the database decided them (replay_run_decide_v1), or
-- NULL when there is no such open run (completed meanwhile, cold, or none). A function and not an
-- UPDATE grant, as takes_quality_complete_v1 says: no role may lock a run's row but the code role.
CREATE FUNCTION evalledger.replay_complete_v1(run_id bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    decided jsonb;
BEGIN
    UPDATE evalledger.replay_run r SET completed_at = now()
     WHERE r.replay_run_id = run_id AND r.completed_at IS NULL
       AND evalledger.caller_reads_v1(r.created_at, NULL)
    RETURNING r.summary INTO decided;
    RETURN decided;
END;
$$;

-- Completion is the runner's, as every suite's.
GRANT EXECUTE ON FUNCTION replay_complete_v1(bigint) TO evalledger_runner;

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

-- replay_lost_most_rows_v1: the replayed queries of completed replay runs, each ranked within its
-- run by what it lost (lowest recall first, then Jaccard, then rank-biased overlap, then capture
-- id), with the sources it lost and gained. Filters, each NULL for all: a run, the p_worst
-- lowest-ranked queries of each run. Readers see what their policies show.
CREATE FUNCTION evalledger.replay_lost_most_rows_v1(p_replay_run_id bigint, p_worst integer)
RETURNS TABLE (
    replay_run_id  bigint,
    brain_version  text,
    completed_at   timestamptz,
    rank_in_run    bigint,
    capture_id     bigint,
    tool_name      text,
    recall         numeric,
    jaccard        numeric,
    rbo            numeric,
    sources_lost   text[],
    sources_gained text[],
    latency_ratio  numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT x.replay_run_id, x.brain_version, x.completed_at, x.rank_in_run, x.capture_id, x.tool_name, x.recall,
           x.jaccard, x.rbo, x.sources_lost, x.sources_gained, x.latency_ratio
      FROM (SELECT r.replay_run_id, r.brain_version, r.completed_at,
                   row_number() OVER (PARTITION BY r.replay_run_id
                                      ORDER BY q.recall, q.jaccard, q.rbo, q.capture_id) AS rank_in_run,
                   q.capture_id, q.tool_name, q.recall, q.jaccard, q.rbo, q.sources_lost, q.sources_gained,
                   q.latency_ratio
              FROM evalledger.replay_run r
              JOIN evalledger.replay_query q ON q.replay_run_id = r.replay_run_id
             WHERE r.completed_at IS NOT NULL AND q.status = 'replayed'
               AND (p_replay_run_id IS NULL OR r.replay_run_id = p_replay_run_id)) x
     WHERE p_worst IS NULL OR x.rank_in_run <= p_worst
     ORDER BY x.replay_run_id DESC, x.rank_in_run
$$;
GRANT EXECUTE ON FUNCTION replay_lost_most_rows_v1(bigint, integer) TO evalledger_revops, evalledger_auditor;

-- replay_drift_v1: every completed replay run newest first (replay_drift_rows_v1): drift over time
-- per brain version.
CREATE VIEW evalledger.replay_drift_v1 AS
    SELECT * FROM evalledger.replay_drift_rows_v1(NULL, NULL);
COMMENT ON VIEW evalledger.replay_drift_v1 IS
    'Every completed replay run newest first: the brain version asked, its decision and the drift figures it rests on (docs/replay.md). Chart mean_recall over completed_at, a series per brain_version.';
COMMENT ON COLUMN evalledger.replay_drift_v1.replay_run_id IS 'The run (replay_run.replay_run_id; the --json document''s replay_run_id).';
COMMENT ON COLUMN evalledger.replay_drift_v1.brain_version IS 'The brain version asked (--brain-version).';
COMMENT ON COLUMN evalledger.replay_drift_v1.adapter IS 'How it was asked: command, url or python, then the command line, URL or module:function.';
COMMENT ON COLUMN evalledger.replay_drift_v1.rubric_version IS 'The replay rubric''s version the run was decided by, e.g. v1.0.';
COMMENT ON COLUMN evalledger.replay_drift_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN evalledger.replay_drift_v1.completed_at IS 'When the run was completed and decided (timestamptz).';
COMMENT ON COLUMN evalledger.replay_drift_v1.decision IS 'pass, fail or inconclusive, as the database decided.';
COMMENT ON COLUMN evalledger.replay_drift_v1.queries_asked IS 'Count of captured queries the run asked (replayed, not replayable or failed).';
COMMENT ON COLUMN evalledger.replay_drift_v1.queries_replayed IS 'Count of queries replayed in their captured mode (the ones measured).';
COMMENT ON COLUMN evalledger.replay_drift_v1.mean_recall IS 'Recall, 0-1: the mean over the replayed queries of the captured slugs found at the captured count; NULL when none was replayed.';
COMMENT ON COLUMN evalledger.replay_drift_v1.min_recall IS 'Recall, 0-1: the lowest replayed query''s.';
COMMENT ON COLUMN evalledger.replay_drift_v1.mean_jaccard IS 'Jaccard index, 0-1: the mean over the replayed queries of the two slug sets'' overlap.';
COMMENT ON COLUMN evalledger.replay_drift_v1.mean_rbo IS 'Rank-biased overlap, 0-1: the mean over the replayed queries, of the chunk orders.';
COMMENT ON COLUMN evalledger.replay_drift_v1.p95_latency_ratio IS 'The p95 replayed latency over the p95 captured latency, on an open scale (1: as fast as production); NULL when the captured p95 was 0 ms.';
COMMENT ON COLUMN evalledger.replay_drift_v1.queries_losing_a_source IS 'Count of replayed queries that lost a source production retrieved.';

-- RevOps and auditors, as the other suites' trends. A function a view calls runs with the reader's
-- rights: EXECUTE follows.
REVOKE ALL ON replay_drift_v1 FROM PUBLIC;
GRANT SELECT ON replay_drift_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.replay_drift_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- replay_lost_most_v1: the replayed queries of every completed replay run, ranked within the run
-- by what they lost (replay_lost_most_rows_v1): the queries that lost the most.
CREATE VIEW evalledger.replay_lost_most_v1 AS
    SELECT * FROM evalledger.replay_lost_most_rows_v1(NULL, NULL);
COMMENT ON VIEW evalledger.replay_lost_most_v1 IS
    'The replayed queries of every completed replay run, ranked within their run by what they lost (lowest recall first, then Jaccard, then rank-biased overlap): WHERE rank_in_run <= 10 is each run''s ten worst.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.replay_run_id IS 'The run (replay_run.replay_run_id).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.brain_version IS 'The brain version asked (--brain-version).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.completed_at IS 'When the run was completed and decided (timestamptz).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.rank_in_run IS 'Rank within the run, 1 the query that lost the most.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.capture_id IS 'The captured row (eval_candidates.id; the export''s id).';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.tool_name IS 'query or search: which operation production captured.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.recall IS 'Recall, 0-1: the captured slugs found among as many replayed ones.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.jaccard IS 'Jaccard index, 0-1, of the captured and replayed slug sets.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.rbo IS 'Rank-biased overlap, 0-1, of the captured and replayed chunk orders.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.sources_lost IS 'Source ids production retrieved and the replay did not, sorted.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.sources_gained IS 'Source ids only the replay retrieved, sorted.';
COMMENT ON COLUMN evalledger.replay_lost_most_v1.latency_ratio IS 'The replayed latency over the captured latency, on an open scale (1: as fast); NULL when the captured was 0 ms.';

-- RevOps and auditors.
REVOKE ALL ON replay_lost_most_v1 FROM PUBLIC;
GRANT SELECT ON replay_lost_most_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.replay_lost_most_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- replay_run_admit_v1: a replay run starts open, now by the database's clock, under an activated
-- replay rubric that passes today's check (rubric_admitted_v2). The database fingerprints what was
-- asked (request_sha8: the brain version, the adapter and the request as typed) and what it
-- resolved to (scope_sha8: the window or the file's digest, and the filters). A ledger window ends
-- no later than now (the runner takes its end from capture_export_bound_v2, so every row stamped
-- before it is committed and visible) and the database counts what it replays itself: the rows of
-- [since_at, until_at) of the tool and callers asked for that the caller may read, at most
-- max_rows (planned); a file's rows are counted by the runner, which read them.
CREATE FUNCTION evalledger.replay_run_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    readable_from timestamptz;
BEGIN
    PERFORM evalledger.require_open_v1('replay run', NEW.completed_at, 'replayed queries');
    PERFORM evalledger.refuse_supplied_v1(
        'replay_run',
        jsonb_build_object('decision', NEW.decision, 'rationale', NEW.rationale, 'summary', NEW.summary,
                           'started_at', NEW.started_at, 'request_sha8', NEW.request_sha8,
                           'scope_sha8', NEW.scope_sha8,
                           'planned', CASE WHEN NEW.source = 'ledger' THEN NEW.planned END));
    NEW.rubric_id := evalledger.rubric_admitted_v2('replay', NEW.rubric_id);
    IF NEW.source = 'ledger' THEN
        IF NEW.until_at > clock_timestamp() THEN
            RAISE EXCEPTION 'evalledger: a replay window ends no later than now, not at %', NEW.until_at
                USING ERRCODE = 'check_violation', COLUMN = 'until_at', CONSTRAINT = 'replay_run_until_not_in_future',
                      HINT = 'take the end of the window from capture_export_bound_v2(), as export does';
        END IF;
        -- What the caller may read of the window, by its tier (caller_reads_v1 asked once, not per row:
        -- everything for an auditor, the hot tier for the runner, nothing else), so the count is one
        -- range of the export index however many rows the window holds.
        readable_from := CASE WHEN evalledger.caller_reads_v1('-infinity', NULL) THEN '-infinity'::timestamptz
                              WHEN evalledger.caller_reads_v1('infinity', NULL) THEN evalledger.hot_tier_start_v1()
                              ELSE 'infinity'::timestamptz END;
        NEW.planned := (SELECT count(*) FROM (
            SELECT 1 FROM evalledger.eval_candidates c
             WHERE c.created_at >= greatest(coalesce(NEW.since_at, '-infinity'), readable_from)
               AND c.created_at < NEW.until_at
               AND (NEW.tool IS NULL OR c.tool_name = NEW.tool) AND (NEW.remote IS NULL OR c.remote = NEW.remote)
             LIMIT NEW.max_rows) w);
    ELSIF NEW.planned IS NULL OR NEW.planned < 0 THEN
        RAISE EXCEPTION 'evalledger: a replay of a file names how many rows it replays (planned)'
            USING ERRCODE = 'not_null_violation', COLUMN = 'planned';
    END IF;
    NEW.request_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.brain_version, NEW.adapter_kind, NEW.adapter, NEW.source, NEW.request)::text,
        'UTF8')), 'hex'), 8);
    NEW.scope_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.source, evalledger.journal_timestamp_v1(NEW.since_at),
                          evalledger.journal_timestamp_v1(NEW.until_at), NEW.tool, NEW.remote, NEW.max_rows,
                          NEW.file_sha256)::text, 'UTF8')), 'hex'), 8);
    NEW.started_at := now();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER replay_run_10_admit BEFORE INSERT ON replay_run
    FOR EACH ROW EXECUTE FUNCTION replay_run_admit_v1();

-- replay_run_decide_v1: at completion (which complete_once_v1 admits first), every captured row the
-- run planned must have its replayed row; the database then writes what it decided from them and
-- the run's rubric (replay_decision_v1): the decision, its rationale and the summary it rests on.
CREATE FUNCTION evalledger.replay_run_decide_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    asked bigint;
    decided jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('replay run');
    asked := (SELECT count(*) FROM evalledger.replay_query q WHERE q.replay_run_id = NEW.replay_run_id);
    IF asked < NEW.planned THEN
        RAISE EXCEPTION 'evalledger: replay run % is not whole: % of % captured rows replayed',
                NEW.replay_run_id, asked, NEW.planned
            USING ERRCODE = 'check_violation', CONSTRAINT = 'replay_run_complete_run_is_whole',
                  HINT = 'running the same replay again asks only the rows not replayed yet';
    END IF;
    decided := evalledger.replay_decision_v1(NEW);
    NEW.decision := decided ->> 'decision';
    NEW.rationale := decided ->> 'rationale';
    NEW.summary := decided;
    RETURN NEW;
END;
$$;

CREATE TRIGGER replay_run_20_decide BEFORE UPDATE ON replay_run
    FOR EACH ROW EXECUTE FUNCTION replay_run_decide_v1();

-- replay_query_admit_v1: one replayed query of an open replay run the caller may read. For a ledger
-- window the captured fields are the database's: copied from the captured row (capture_id at
-- capture_created_at), which must be one of the run's window, tool and callers; supplied, they are
-- refused. For a file the runner supplies them as the file has them. The runner says what the
-- adapter did (outcome); the database decides the status: an answer in the captured mode is
-- replayed (vector_enabled as captured: a row captured keyword-only is replayed keyword-only), an
-- answer in another mode or a decline is not replayable, and a failure is an adapter failure; a
-- replayed query's recall, jaccard, rbo (with the rubric's rbo_p), sources gained and lost and
-- latency ratio (NULL when the captured latency was 0) are computed here, unrounded, and refused
-- when supplied. The tier clock is the run's recording time.
CREATE FUNCTION evalledger.replay_query_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.replay_run;
    cap evalledger.eval_candidates;
BEGIN
    -- FOR SHARE, as takes_quality_verdict_admit_v2: a completion waits for this row, or this row for
    -- the completion (and then sees it), so no query lands after the decision.
    SELECT * INTO run FROM evalledger.replay_run r WHERE r.replay_run_id = NEW.replay_run_id FOR SHARE;
    IF run.replay_run_id IS NULL OR run.completed_at IS NOT NULL
       OR NOT evalledger.caller_reads_v1(run.created_at, NULL) THEN
        RAISE EXCEPTION 'evalledger: no open replay run % takes replayed queries', NEW.replay_run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'replay_run_id';
    END IF;
    PERFORM evalledger.refuse_supplied_v1(
        'replay_query',
        jsonb_build_object('status', NEW.status, 'recall', NEW.recall, 'jaccard', NEW.jaccard, 'rbo', NEW.rbo,
                           'sources_gained', NEW.sources_gained, 'sources_lost', NEW.sources_lost,
                           'latency_ratio', NEW.latency_ratio));
    IF run.source = 'ledger' THEN
        PERFORM evalledger.refuse_supplied_v1(
            'replay_query',
            jsonb_build_object('tool_name', NEW.tool_name, 'captured_slugs', NEW.captured_slugs,
                               'captured_chunk_ids', NEW.captured_chunk_ids,
                               'captured_source_ids', NEW.captured_source_ids,
                               'captured_vector_enabled', NEW.captured_vector_enabled,
                               'captured_expand_enabled', NEW.captured_expand_enabled,
                               'captured_detail', NEW.captured_detail,
                               'captured_latency_ms', NEW.captured_latency_ms));
        SELECT * INTO cap FROM evalledger.eval_candidates c
         WHERE c.created_at = NEW.capture_created_at AND c.id = NEW.capture_id
           AND (run.since_at IS NULL OR c.created_at >= run.since_at) AND c.created_at < run.until_at
           AND (run.tool IS NULL OR c.tool_name = run.tool) AND (run.remote IS NULL OR c.remote = run.remote)
           AND evalledger.caller_reads_v1(c.created_at, NULL);
        IF cap.id IS NULL THEN
            RAISE EXCEPTION 'evalledger: captured row % (at %) is not one of replay run %''s window',
                    NEW.capture_id, NEW.capture_created_at, NEW.replay_run_id
                USING ERRCODE = 'foreign_key_violation', COLUMN = 'capture_id';
        END IF;
        NEW.tool_name := cap.tool_name;
        NEW.captured_slugs := cap.retrieved_slugs;
        NEW.captured_chunk_ids := cap.retrieved_chunk_ids;
        NEW.captured_source_ids := cap.source_ids;
        NEW.captured_vector_enabled := cap.vector_enabled;
        NEW.captured_expand_enabled := cap.expand_enabled;
        NEW.captured_detail := cap.detail;
        NEW.captured_latency_ms := cap.latency_ms;
    END IF;

    NEW.status := CASE WHEN NEW.outcome = 'adapter_failed' THEN 'adapter_failed'
                       WHEN NEW.outcome = 'answered' AND NEW.vector_enabled = NEW.captured_vector_enabled THEN 'replayed'
                       ELSE 'not_replayable' END;
    IF NEW.outcome = 'answered' AND NEW.status = 'not_replayable' THEN
        NEW.error := coalesce(NEW.error, format('answered with vector_enabled %s, captured %s: another mode, not counted',
                                                NEW.vector_enabled::text, NEW.captured_vector_enabled::text));
    END IF;
    IF NEW.status = 'replayed' THEN
        NEW.recall := evalledger.replay_recall_v1(NEW.captured_slugs, NEW.retrieved_slugs);
        NEW.jaccard := evalledger.replay_jaccard_v1(NEW.captured_slugs, NEW.retrieved_slugs);
        NEW.rbo := evalledger.replay_rbo_v1(NEW.captured_chunk_ids, NEW.retrieved_chunk_ids,
                                            (SELECT (r.definition ->> 'rbo_p')::numeric FROM evalledger.rubric r
                                              WHERE r.rubric_id = run.rubric_id));
        NEW.sources_gained := ARRAY(SELECT DISTINCT s COLLATE "C" FROM unnest(NEW.source_ids) s
                                     WHERE s <> ALL (NEW.captured_source_ids) ORDER BY 1);
        NEW.sources_lost := ARRAY(SELECT DISTINCT s COLLATE "C" FROM unnest(NEW.captured_source_ids) s
                                   WHERE s <> ALL (NEW.source_ids) ORDER BY 1);
        NEW.latency_ratio := CASE WHEN NEW.captured_latency_ms > 0
                                  THEN NEW.latency_ms::numeric / NEW.captured_latency_ms::numeric END;
    END IF;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

CREATE TRIGGER replay_query_10_admit BEFORE INSERT ON replay_query
    FOR EACH ROW EXECUTE FUNCTION replay_query_admit_v1();

-- A replay run's only UPDATE is its completion (complete_once_v1); a changed decision is refused
-- as a value the caller may not supply.
CREATE TRIGGER replay_run_10_guard_update BEFORE UPDATE ON replay_run
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('replay run', 'replay_run_id', '{decision,rationale,summary}');

-- Append-only: a run's only change is its completion, a replayed query none; DELETE only through the
-- retention purge (which knows neither yet, so never), TRUNCATE never (refuse_change_v3).
CALL guard_append_only_v1(ARRAY['replay_run:DELETE:refuse_change_v3',
                                'replay_query:UPDATE OR DELETE:refuse_change_v3']);

-- The replay v1.0 rubric (issue 40): what a replay run is measured by and how it is decided, as
-- data. Each replayed query's measures are computed by the database (replay_query_admit_v1); rbo_p
-- weighs the top ranks of the chunk order (replay_rbo_v1); a run passes when its mean recall is at
-- least 0.9, no query's recall is below 0.5, the p95 latency is at most 1.25 times the captured
-- p95 and at most a tenth of the queries failed in the adapter; it is inconclusive with fewer than
-- three queries replayed in their captured mode, or fewer than half of those asked
-- (replay_decision_v1). A stricter policy is a new rubric version.
INSERT INTO rubric (suite, version, definition) VALUES ('replay', 'v1.0', $rubric$
{
  "suite": "replay",
  "version": "v1.0",
  "dimensions": [
    {"key": "recall", "scored_by": "automatic", "aggregate": "mean and minimum over replayed queries",
     "question": "Of the slugs production retrieved, the share the replay retrieved among as many results."},
    {"key": "jaccard", "scored_by": "automatic", "aggregate": "mean over replayed queries",
     "question": "The overlap of the two slug sets."},
    {"key": "rbo", "scored_by": "automatic", "aggregate": "mean over replayed queries",
     "question": "Rank-biased overlap of the two chunk orders."},
    {"key": "latency_ratio", "scored_by": "automatic", "aggregate": "p95 over replayed queries",
     "question": "The replay's latency over the captured latency."}
  ],
  "rbo_p": 0.9,
  "min_replayable": 3,
  "min_replayable_share": 0.5,
  "pass_rule": {
    "mean_recall_at_least": 0.9,
    "every_recall_at_least": 0.5,
    "p95_latency_ratio_at_most": 1.25,
    "adapter_failed_share_at_most": 0.1
  }
}
$rubric$);

INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'replay: the first rubric of the suite (issue 40)'
  FROM rubric r WHERE (r.suite, r.version) = ('replay', 'v1.0');

-- Run claims of the replay suite: the constraint swapped under its name (the drop guard off for the
-- swap, as 0104 does, and on again).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE run_claim
    DROP CONSTRAINT run_claim_suite_known,
    ADD CONSTRAINT run_claim_suite_known CHECK (suite IN ('takes-quality', 'work-quality', 'brain-eval', 'replay'));

RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- Row-level security, the owner's and code's policies and ENABLE ALWAYS on the new tables; the
-- journal covers them.
CALL seal_tables_v2();
CALL journal_attach_v2();

-- The ledger's recompute re-derives a replay run's decision and its queries' measures (after the
-- journal made the new tables' key functions, which it reads).
-- Compares the suites' runs by the keys the journal gives them (journal_key_v1, made per table by
-- journal_attach_v2).
-- ledger_recompute_v3 (issue 18: brain-eval runs by brain_eval_decide_v2 and question rows by
-- brain_eval_question_verdict_v1, the versions their triggers decide by; v2 re-derived both by the
-- versions issue 17 replaced): every computed column of every completed run whose value now differs from
-- what its suite's decision computes from the run's inputs (one row per column): brain-eval runs
-- (aggregates, criteria, decision, rationale, cost, hours and notes) and their question rows
-- (question_passed), takes-quality runs (cycles, verdict, overall score, cost, receipt), and
-- work-quality runs (means, spreads, note, comparison, judges' cost, document), and replay runs
-- (decision, rationale, summary) and their replayed queries (recall, jaccard, rbo). Values compare
-- as JSON values, so 0.50 and 0.5 are equal and nothing is rounded. It reads through each suite's
-- one entry point (ledger_recompute_<suite>_v1), which calls the functions the suite's trigger
-- calls: a rewritten decision shows here even where the journal was rewritten to match it. Runs
-- imported from history files are the files' own and are not re-derived.
CREATE OR REPLACE FUNCTION evalledger.ledger_recompute_v3()
RETURNS TABLE (table_name text, row_key text, column_name text, stored text, recomputed text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH decided (table_name, row_key, was, now_is, columns) AS (
        SELECT 'brain_eval_log', evalledger.journal_key_v1(l), to_jsonb(l), evalledger.ledger_recompute_brain_eval_v2(l),
               ARRAY['aggregated_scores', 'hard_criteria_passed', 'soft_criteria_passed_count', 'decision',
                     'decision_rationale', 'token_cost_usd', 'reviewer_hours_spent', 'calibration_notes']
          FROM evalledger.brain_eval_log l WHERE l.completed_at IS NOT NULL
        UNION ALL
        SELECT 'brain_eval_question_score', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object('question_passed', evalledger.brain_eval_question_verdict_v1(
                   q, evalledger.brain_eval_question_policy_v2(q.eval_run_id, q.question_id))),
               ARRAY['question_passed']
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.completed_at IS NOT NULL
        UNION ALL
        SELECT 'eval_takes_quality_runs', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('cycles_run', x -> 'cycles_run', 'verdict', x -> 'verdict',
                                          'overall_score', x -> 'overall_score', 'cost_usd', x -> 'cost_usd',
                                          'receipt_json', x)
                  FROM (SELECT evalledger.ledger_recompute_takes_quality_v2(r.id) AS x) receipt),
               ARRAY['cycles_run', 'verdict', 'overall_score', 'cost_usd', 'receipt_json']
          FROM evalledger.eval_takes_quality_runs r WHERE r.completed_at IS NOT NULL
        UNION ALL
        SELECT 'eval_work_quality_snapshots', evalledger.journal_key_v1(s), to_jsonb(s),
               evalledger.ledger_recompute_work_quality_v2(s),
               ARRAY['mean_scores', 'disagreement', 'note', 'comparison', 'judges_cost_usd', 'snapshot_json']
          FROM evalledger.eval_work_quality_snapshots s WHERE s.completed_at IS NOT NULL AND s.origin = 'run'
        UNION ALL
        SELECT 'replay_run', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('decision', x -> 'decision', 'rationale', x -> 'rationale', 'summary', x)
                  FROM (SELECT evalledger.replay_decision_v1(r) AS x) decided),
               ARRAY['decision', 'rationale', 'summary']
          FROM evalledger.replay_run r WHERE r.completed_at IS NOT NULL
        UNION ALL
        SELECT 'replay_query', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object(
                   'recall', evalledger.replay_recall_v1(q.captured_slugs, q.retrieved_slugs),
                   'jaccard', evalledger.replay_jaccard_v1(q.captured_slugs, q.retrieved_slugs),
                   'rbo', evalledger.replay_rbo_v1(q.captured_chunk_ids, q.retrieved_chunk_ids,
                                                   (b.definition ->> 'rbo_p')::numeric)),
               ARRAY['recall', 'jaccard', 'rbo']
          FROM evalledger.replay_run r JOIN evalledger.replay_query q USING (replay_run_id)
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         WHERE r.completed_at IS NOT NULL AND q.status = 'replayed')
    SELECT d.table_name, d.row_key, c, (d.was -> c)::text, (d.now_is -> c)::text
      FROM decided d CROSS JOIN LATERAL unnest(d.columns) c
     WHERE (d.was -> c) IS DISTINCT FROM (d.now_is -> c)
     ORDER BY 1, 2, 3
$$;

RESET ROLE;
