-- The work-quality suite (seed 003): snapshots of judged work products and their judge verdicts, the v1.0 rubric, Compare and IsRegression, the history view.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- Tables
-- =============================================================================================
-- One row per snapshot: a judged run (origin 'run': the runner inserts it in progress, the judges'
-- verdicts follow, completion computes the aggregate) or a history file of the seed's own Go code
-- brought into the ledger (origin 'import': the database reads every column from the document).
-- (name, run_id) is the snapshot's identity, as in the store's file name: a repeated run or a
-- second import of the same file adds nothing.
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
    CONSTRAINT eval_work_quality_snapshots_pkey PRIMARY KEY (snapshot_id),
    CONSTRAINT eval_work_quality_snapshots_run_key UNIQUE (name, run_id),
    CONSTRAINT eval_work_quality_snapshots_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT eval_work_quality_snapshots_prev_fkey FOREIGN KEY (prev_snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
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
        origin = 'import' OR completed_at IS NULL OR (comparison IS NULL) = (prev_snapshot_id IS NULL))
);

-- One row per judge verdict: a model's reply (or failure) on one snapshot. The runner inserts it
-- as it arrives; the database decides whether it contributes and why not.
CREATE TABLE eval_work_quality_judge_verdicts (
    verdict_id         bigint        GENERATED ALWAYS AS IDENTITY,
    snapshot_id        bigint        NOT NULL,
    model              text          NOT NULL,
    family             text          NOT NULL,
    same_family        boolean       NOT NULL,
    recorded           boolean       NOT NULL,
    structured         boolean       NOT NULL DEFAULT false,
    response_json      jsonb,
    raw_excerpt        text,
    scores             jsonb,
    narrative          text,
    relative_vs_prev   jsonb,
    relative_narrative text,
    confidence         numeric,
    contributes        boolean       NOT NULL,
    error_kind         text,
    error_message      text,
    input_tokens       integer       NOT NULL DEFAULT 0,
    output_tokens      integer       NOT NULL DEFAULT 0,
    cost_usd           numeric(14,8) NOT NULL DEFAULT 0,
    latency_ms         integer       NOT NULL DEFAULT 0,
    attempts           integer       NOT NULL DEFAULT 0,
    created_at         timestamptz   NOT NULL DEFAULT now(),
    CONSTRAINT eval_work_quality_judge_verdicts_pkey PRIMARY KEY (verdict_id),
    CONSTRAINT eval_work_quality_judge_verdicts_once UNIQUE (snapshot_id, model),
    CONSTRAINT eval_work_quality_judge_verdicts_snapshot_fkey FOREIGN KEY (snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
    CONSTRAINT eval_work_quality_judge_verdicts_error_kind_known CHECK (error_kind IN (
        'provider_error', 'budget_exhausted', 'parse_failed', 'incomplete_scores', 'out_of_scale', 'off_contract')),
    CONSTRAINT eval_work_quality_judge_verdicts_contributes_iff_no_error CHECK (
        contributes = (error_kind IS NULL) AND contributes = (scores IS NOT NULL)
        AND contributes = (narrative IS NOT NULL) AND contributes = (confidence IS NOT NULL)),
    CONSTRAINT eval_work_quality_judge_verdicts_confidence_range CHECK (confidence BETWEEN 0 AND 1),
    CONSTRAINT eval_work_quality_judge_verdicts_counts_not_negative CHECK (
        input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0 AND attempts >= 0)
);

-- =============================================================================================
-- Indexes
-- =============================================================================================
-- The previous snapshot and the history read a target's snapshots newest first.
CREATE INDEX eval_work_quality_snapshots_name_at_idx ON eval_work_quality_snapshots (name, at DESC);
-- `snapshot show RUN_ID` looks a run id up across targets.
CREATE INDEX eval_work_quality_snapshots_run_id_idx ON eval_work_quality_snapshots (run_id);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
-- Created as the code role, which owns them: the owner role can never redefine them, and the DDL
-- guard accepts the triggers below.
\ir ../sql/work_quality/work_quality_policy_v1.sql
\ir ../sql/work_quality/work_quality_compare_v1.sql
\ir ../sql/work_quality/work_quality_is_regression_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_admit_v1.sql
\ir ../triggers/work_quality/work_quality_import_verdicts_v1.sql
\ir ../triggers/work_quality/work_quality_verdict_admit_v1.sql
\ir ../sql/work_quality/work_quality_document_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_decide_v1.sql
\ir ../sql/work_quality/work_quality_history_v1.sql
CREATE TRIGGER eval_work_quality_snapshots_10_admit BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_admit_v1();
-- A changed computed column is refused as a value the caller may not supply.
CREATE TRIGGER eval_work_quality_snapshots_10_guard_update BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('work-quality snapshot', 'snapshot_id',
        '{mean_scores,disagreement,note,comparison,judges_cost_usd,snapshot_json,prev_snapshot_id,prev_run_id}');
CREATE TRIGGER eval_work_quality_snapshots_20_decide BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_decide_v1();
CREATE TRIGGER eval_work_quality_snapshots_20_import_verdicts AFTER INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_import_verdicts_v1();
CREATE TRIGGER eval_work_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_admit_v1();

-- Append-only guards. These tables are not in purgeable_v1's retention rule, so their rows are
-- never deleted; TRUNCATE is refused for every role.
CALL guard_append_only_v1(ARRAY['eval_work_quality_snapshots:DELETE:refuse_change_v1',
    'eval_work_quality_judge_verdicts:UPDATE OR DELETE:refuse_change_v1']);

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- RLS enabled and FORCEd, every trigger ENABLE ALWAYS, the owner and code roles' policies and the
-- owner role's DML privileges, as for every ledger table.
CALL seal_tables_v1();

-- The runner starts snapshots, records verdicts, completes runs, imports history files and reads
-- them back; it writes only the columns it observes (the rest are the database's).
CREATE POLICY eval_work_quality_snapshots_runner ON eval_work_quality_snapshots TO evalledger_runner
    USING (true) WITH CHECK (true);
CREATE POLICY eval_work_quality_judge_verdicts_runner ON eval_work_quality_judge_verdicts TO evalledger_runner
    USING (true) WITH CHECK (true);
GRANT SELECT ON eval_work_quality_snapshots, eval_work_quality_judge_verdicts TO evalledger_runner;
GRANT INSERT (origin, rubric_id, kind, name, persona, run_id, bot_family, bot_version, iterion_sha, task, outcome,
              evidence_digest, evidence_sha256, cost_usd, tokens, duration_ms, iterations, model_calls, retries,
              models, snapshot_json, source_file)
    ON eval_work_quality_snapshots TO evalledger_runner;
GRANT UPDATE (completed_at) ON eval_work_quality_snapshots TO evalledger_runner;
GRANT INSERT (snapshot_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
              input_tokens, output_tokens, cost_usd, latency_ms, attempts)
    ON eval_work_quality_judge_verdicts TO evalledger_runner;

-- RevOps reads the hot tier (24 months); auditors read everything. Agents: nothing.
CREATE POLICY eval_work_quality_snapshots_revops ON eval_work_quality_snapshots FOR SELECT TO evalledger_revops
    USING (at >= now() - evalledger.hot_tier_v1());
CREATE POLICY eval_work_quality_judge_verdicts_revops ON eval_work_quality_judge_verdicts FOR SELECT TO evalledger_revops
    USING (EXISTS (SELECT 1 FROM evalledger.eval_work_quality_snapshots s
                    WHERE s.snapshot_id = eval_work_quality_judge_verdicts.snapshot_id));
CREATE POLICY eval_work_quality_snapshots_auditor ON eval_work_quality_snapshots FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY eval_work_quality_judge_verdicts_auditor ON eval_work_quality_judge_verdicts FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON eval_work_quality_snapshots, eval_work_quality_judge_verdicts TO evalledger_revops, evalledger_auditor;

-- The history view: RevOps and auditors, each under its own policies (a function a view calls is
-- executed with the reader's rights, so the reader needs EXECUTE on it and on what it calls).
REVOKE ALL ON work_quality_history_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_history_v1 TO evalledger_revops, evalledger_auditor;

-- =============================================================================================
-- Seed data: the work-quality v1.0 rubric
-- =============================================================================================
\ir ../sql/work_quality/work_quality_rubric_v1.sql
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'work-quality: the first rubric of the suite'
  FROM rubric r WHERE (r.suite, r.version) = ('work-quality', 'v1.0');

-- Functions: nothing is PUBLIC. Compare, IsRegression and the policy are for every reader of
-- snapshots; the trigger functions for no one.
REVOKE EXECUTE ON FUNCTION work_quality_policy_v1(), work_quality_compare_v1(jsonb, jsonb, text),
    work_quality_is_regression_v1(jsonb, numeric), work_quality_snapshot_admit_v1(),
    work_quality_import_verdicts_v1(), work_quality_verdict_admit_v1(),
    work_quality_document_v1(eval_work_quality_snapshots), work_quality_snapshot_decide_v1(),
    work_quality_history_rows_v1() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION work_quality_policy_v1(), work_quality_compare_v1(jsonb, jsonb, text),
    work_quality_is_regression_v1(jsonb, numeric)
    TO evalledger_runner, evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION work_quality_history_rows_v1() TO evalledger_revops, evalledger_auditor;

-- The owner role may still run what the runner runs (its writes pass the same triggers).
GRANT EXECUTE ON FUNCTION work_quality_policy_v1(), work_quality_compare_v1(jsonb, jsonb, text),
    work_quality_is_regression_v1(jsonb, numeric) TO evalledger_owner;


RESET ROLE;
