-- One row per snapshot: a judged run (origin 'run': the runner inserts it in progress, the judges'
-- verdicts follow, completion computes the aggregate) or a history file of the seed's own Go code
-- brought into the ledger (origin 'import': the database reads every column from the document).
-- (name, run_id) as in the store's file name, then how it was judged (judges), is the snapshot's
-- identity: a repeated run or a second import of the same file adds nothing. A snapshot keeps the
-- previous run's id and the comparison it made, and references no previous row, which may age out
-- before it: the chain of an active target must not pin its whole history.
CREATE TABLE eval_work_quality_snapshots (
    snapshot_id      bigint       GENERATED ALWAYS AS IDENTITY,
    origin           text         NOT NULL,
    rubric_id        bigint       NOT NULL,
    kind             text         NOT NULL,
    name             text         NOT NULL,
    persona          text         NOT NULL DEFAULT '',
    run_id           text         NOT NULL,
    at               timestamptz  NOT NULL,
    bot_family       text,
    bot_version      text         NOT NULL DEFAULT '',
    iterion_sha      text         NOT NULL DEFAULT '',
    task             text         NOT NULL DEFAULT '',
    outcome          text         NOT NULL DEFAULT '',
    evidence_digest  text         NOT NULL DEFAULT '',
    evidence_sha256  char(64),
    cost_usd         numeric      NOT NULL DEFAULT 0,
    tokens           bigint       NOT NULL DEFAULT 0,
    duration_ms      bigint       NOT NULL DEFAULT 0,
    iterations       bigint       NOT NULL DEFAULT 0,
    model_calls      bigint       NOT NULL DEFAULT 0,
    retries          bigint       NOT NULL DEFAULT 0,
    models           text[]       NOT NULL,
    prev_snapshot_id bigint,
    prev_run_id      text,
    completed_at     timestamptz,
    mean_scores      jsonb,
    disagreement     jsonb,
    note             text,
    comparison       jsonb,
    judges_cost_usd  numeric,
    snapshot_json    jsonb,
    source_file      text,
    created_at       timestamptz  NOT NULL DEFAULT now(),
    judges           text         DEFAULT 'live',
    -- How many times each judge is asked (--repeats K; an import's verdicts are its file's, 1).
    repeats          integer      NOT NULL DEFAULT 1,
    CONSTRAINT eval_work_quality_snapshots_pkey PRIMARY KEY (snapshot_id),
    CONSTRAINT eval_work_quality_snapshots_repeats_range CHECK (repeats BETWEEN 1 AND 10),
    CONSTRAINT eval_work_quality_snapshots_identity_key UNIQUE (name, run_id, judges),
    CONSTRAINT eval_work_quality_snapshots_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT eval_work_quality_snapshots_origin_known CHECK (origin IN ('run', 'import')),
    CONSTRAINT eval_work_quality_snapshots_kind_known CHECK (kind IN ('bot', 'feature')),
    CONSTRAINT eval_work_quality_snapshots_name_not_blank CHECK (btrim(name) <> '' AND name !~ '[[:cntrl:]]'),
    CONSTRAINT eval_work_quality_snapshots_run_id_not_blank CHECK (btrim(run_id) <> '' AND run_id !~ '[[:cntrl:]]'),
    CONSTRAINT eval_work_quality_snapshots_bot_family_format CHECK (bot_family ~ '^[a-z][a-z0-9_-]*$'),
    CONSTRAINT eval_work_quality_snapshots_evidence_sha256_hex CHECK (evidence_sha256 ~ '^[0-9a-f]{64}$'),
    CONSTRAINT eval_work_quality_snapshots_metrics_not_negative CHECK (
        cost_usd >= 0 AND tokens >= 0 AND duration_ms >= 0 AND iterations >= 0 AND model_calls >= 0 AND retries >= 0),
    CONSTRAINT eval_work_quality_snapshots_run_has_panel CHECK (origin = 'import' OR cardinality(models) >= 1),
    CONSTRAINT eval_work_quality_snapshots_import_has_file CHECK ((origin = 'import') = (source_file IS NOT NULL)),
    CONSTRAINT eval_work_quality_snapshots_run_prev_whole CHECK (
        origin = 'import' OR (prev_snapshot_id IS NULL) = (prev_run_id IS NULL)),
    CONSTRAINT eval_work_quality_snapshots_completed_after_at CHECK (completed_at IS NULL OR completed_at >= at
        OR origin = 'import'),
    -- What the database computes at completion is absent while the run is open, present after;
    -- a comparison exactly when a run had a previous snapshot.
    CONSTRAINT eval_work_quality_snapshots_computed_iff_complete CHECK (
        (completed_at IS NULL AND mean_scores IS NULL AND note IS NULL AND comparison IS NULL
         AND judges_cost_usd IS NULL AND snapshot_json IS NULL)
        OR
        (completed_at IS NOT NULL AND mean_scores IS NOT NULL AND note IS NOT NULL AND judges_cost_usd IS NOT NULL
         AND snapshot_json IS NOT NULL)),
    CONSTRAINT eval_work_quality_snapshots_comparison_iff_prev CHECK (
        origin = 'import' OR completed_at IS NULL OR (comparison IS NULL) = (prev_snapshot_id IS NULL)),
    CONSTRAINT eval_work_quality_snapshots_judges_known CHECK (judges IN ('live', 'recorded')),
    CONSTRAINT eval_work_quality_snapshots_judges_whole CHECK (judges IS NOT NULL),
    CONSTRAINT eval_work_quality_snapshots_cost_usd_finite CHECK (finite_v1(cost_usd)),
    CONSTRAINT eval_work_quality_snapshots_judges_cost_usd_finite CHECK (finite_v1(judges_cost_usd)),
    CONSTRAINT eval_work_quality_snapshots_mean_scores_numbers CHECK (json_numbers_v1(mean_scores)),
    CONSTRAINT eval_work_quality_snapshots_disagreement_numbers CHECK (json_numbers_v1(disagreement)),
    -- An imported file's comparison: the history view and IsRegression read its deltas as numbers.
    CONSTRAINT eval_work_quality_snapshots_comparison_numbers CHECK (
        jsonb_typeof(comparison -> 'overall_delta') IS DISTINCT FROM 'string'
        AND jsonb_typeof(comparison -> 'value_delta') IS DISTINCT FROM 'string'
        AND coalesce(json_numbers_v1(comparison -> 'per_dimension'), true))
);

-- The previous snapshot and the history read a target's snapshots newest first.
CREATE INDEX eval_work_quality_snapshots_name_at_idx ON eval_work_quality_snapshots (name, at DESC);

-- `snapshot show RUN_ID` looks a run id up across targets.
CREATE INDEX eval_work_quality_snapshots_run_id_idx ON eval_work_quality_snapshots (run_id);

CREATE INDEX eval_work_quality_snapshots_prev_idx ON eval_work_quality_snapshots (prev_snapshot_id);

CREATE INDEX eval_work_quality_snapshots_created_idx ON eval_work_quality_snapshots (created_at);

-- One open run of a target and its judges at a time (issue 37, item 2):
-- eval_work_quality_snapshots_17_one_open names the open run; this index holds the rule against
-- racing sessions.
CREATE UNIQUE INDEX eval_work_quality_snapshots_one_open_idx
    ON eval_work_quality_snapshots (name, judges) WHERE completed_at IS NULL;

-- The work-quality panel reads the latest snapshots of every target newest first.
CREATE INDEX eval_work_quality_snapshots_at_idx ON eval_work_quality_snapshots (at DESC);

-- The runner starts snapshots, records verdicts, completes runs, imports history files and reads
-- them back; it writes only the columns it observes (the rest are the database's).
CREATE POLICY eval_work_quality_snapshots_runner ON eval_work_quality_snapshots TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON eval_work_quality_snapshots TO evalledger_runner;
GRANT INSERT (origin, rubric_id, kind, name, persona, run_id, bot_family, bot_version, iterion_sha, task, outcome,
              evidence_digest, evidence_sha256, cost_usd, tokens, duration_ms, iterations, model_calls, retries,
              models, snapshot_json, source_file, judges, repeats)
    ON eval_work_quality_snapshots TO evalledger_runner;

-- RevOps reads the hot tier; auditors read everything. Agents: nothing.
CREATE POLICY eval_work_quality_snapshots_revops ON eval_work_quality_snapshots FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_work_quality_snapshots_auditor ON eval_work_quality_snapshots FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON eval_work_quality_snapshots TO evalledger_revops, evalledger_auditor;
