-- One replay run (issue 40, BrainBench-Real): captured production queries asked again of a brain
-- version through an adapter, each replayed query a replay_query row. What was replayed is the
-- run's source: the ledger's captured rows of a window (since_at inclusive, NULL unbounded, to
-- until_at exclusive, optionally of one tool, of remote or local callers, the newest max_rows), or
-- an export file (file_sha256, its rows given by the runner). request is what the operator typed,
-- request_sha8 the database's fingerprint of it with the brain version and the adapter: one open
-- run per request, so a runner killed halfway resumes it. scope_sha8, the database's fingerprint
-- of the resolved window or file and its filters, is the run's identity with the brain version,
-- the adapter and the rubric: the same window replayed again reads the same run back (a run closed
-- unfinished, left open past the hot tier, gives its identity up: replay_run_identity_key). planned
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

-- One run per identity (brain version, adapter, resolved window or file, rubric): the same window
-- replayed again reads its run back. A run closed unfinished (left open past the hot tier and closed
-- by a new run of its request: replay_run_admit_v1; its summary counts what it left unrecorded) no
-- longer holds it, so the same file or window can be replayed anew.
CREATE UNIQUE INDEX replay_run_identity_key ON replay_run (brain_version, adapter_kind, adapter, scope_sha8, rubric_id)
    WHERE NOT coalesce(summary ? 'unrecorded', false);

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
