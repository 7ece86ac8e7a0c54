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

-- doctor counts the last 24 hours by reason.
CREATE INDEX eval_capture_failures_occurred_idx ON eval_capture_failures (occurred_at DESC, reason);

CREATE POLICY eval_capture_failures_runner_read ON eval_capture_failures FOR SELECT TO evalledger_runner
    USING (recorded_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_capture_failures_runner_insert ON eval_capture_failures FOR INSERT TO evalledger_runner WITH CHECK (true);
GRANT SELECT ON eval_capture_failures TO evalledger_runner;
GRANT INSERT (failure_key, reason, occurred_at, tool_name, sqlstate, detail, capture_key)
    ON eval_capture_failures TO evalledger_runner;

CREATE POLICY eval_capture_failures_revops ON eval_capture_failures FOR SELECT TO evalledger_revops
    USING (recorded_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_capture_failures_auditor ON eval_capture_failures FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_capture_failures TO evalledger_revops, evalledger_auditor;
