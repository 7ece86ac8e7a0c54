-- Judge calls through the providers' batch APIs (issue 38, item 1): `--batch` sends a run's judge
-- calls as a provider batch (half price) and records it before it waits. Four append-only,
-- journalled tables: judge_batch (a batch, written before it is submitted), judge_batch_request
-- (each request's custom_id and the item of the run it asks for), judge_batch_event (the
-- provider's id once submitted, each status change, a cancel asked for: new rows, never an UPDATE)
-- and judge_batch_result (each request's outcome once read). A runner killed at any point finds
-- its batches here and polls them: nothing is submitted twice. Nothing any role could do or read
-- before changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- A batch of judge calls sent through a provider's batch API (issue 38, item 1): written before
-- it is submitted, so a runner killed at any point finds it again (its requests in
-- judge_batch_request, what the provider said of it in judge_batch_event, each request's outcome
-- in judge_batch_result). suite and run_key name the run it judges (run_key: the run's id as
-- text, as run_claim has it); attempt is 1 for a run's first batch of its calls, 2 for the batch
-- that retries the requests a first one failed or let expire (retried once). Who wrote it and
-- when are the database's.
CREATE TABLE judge_batch (
    batch_id   bigint      GENERATED ALWAYS AS IDENTITY,
    suite      text        NOT NULL,
    run_key    text        NOT NULL,
    provider   text        NOT NULL,
    attempt    integer     NOT NULL,
    created_by name        NOT NULL DEFAULT session_user,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT judge_batch_pkey PRIMARY KEY (batch_id),
    CONSTRAINT judge_batch_suite_known CHECK (suite IN ('takes-quality', 'work-quality', 'brain-eval')),
    CONSTRAINT judge_batch_run_key_given CHECK (run_key ~ '^\S+$' AND length(run_key) <= 100),
    CONSTRAINT judge_batch_provider_known CHECK (provider IN ('openai', 'anthropic', 'google')),
    CONSTRAINT judge_batch_attempt_known CHECK (attempt IN (1, 2))
);

CREATE INDEX judge_batch_run_idx ON judge_batch (suite, run_key);

CREATE INDEX judge_batch_created_idx ON judge_batch (created_at);

CREATE POLICY judge_batch_runner ON judge_batch TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON judge_batch TO evalledger_runner;
GRANT INSERT (suite, run_key, provider, attempt) ON judge_batch TO evalledger_runner;

CREATE POLICY judge_batch_revops ON judge_batch FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY judge_batch_auditor ON judge_batch FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON judge_batch TO evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['judge_batch:UPDATE OR DELETE:refuse_change_v3']);

-- One request of a judge batch: its custom_id (how the provider's results name it), the item of the
-- run it asks for (the suite's name for it, e.g. 'cycle 1 openai:gpt-4o') and the model. Written
-- with its batch, before the batch is submitted.
CREATE TABLE judge_batch_request (
    batch_id   bigint      NOT NULL,
    custom_id  text        NOT NULL,
    item       text        NOT NULL,
    model      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT judge_batch_request_pkey PRIMARY KEY (batch_id, custom_id),
    CONSTRAINT judge_batch_request_batch_fkey FOREIGN KEY (batch_id) REFERENCES judge_batch (batch_id),
    CONSTRAINT judge_batch_request_item_once UNIQUE (batch_id, item),
    CONSTRAINT judge_batch_request_custom_id_given CHECK (custom_id ~ '^[A-Za-z0-9_-]{1,64}$'),
    CONSTRAINT judge_batch_request_item_given CHECK (item ~ '\S' AND length(item) <= 500),
    CONSTRAINT judge_batch_request_model_given CHECK (model ~ '^[a-z]+:\S+$' AND length(model) <= 200)
);

CREATE POLICY judge_batch_request_runner ON judge_batch_request TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON judge_batch_request TO evalledger_runner;
GRANT INSERT (batch_id, custom_id, item, model) ON judge_batch_request TO evalledger_runner;

CREATE POLICY judge_batch_request_revops ON judge_batch_request FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY judge_batch_request_auditor ON judge_batch_request FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON judge_batch_request TO evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['judge_batch_request:UPDATE OR DELETE:refuse_change_v3']);

-- What a judge batch went through, one row per change, never an UPDATE: 'submitted' (the
-- provider's id for it, written as soon as the provider answered, before the runner waits), each
-- status the provider reported when it changed (validating, in_progress, finalizing, completed,
-- failed, expired, cancelling, cancelled, ended), and 'cancel_asked' (`evalledger batch cancel`).
-- A batch is submitted once: a runner that finds it submitted polls it, never sends it again.
-- The batch's current status is its newest row; detail is what the provider said (request
-- counts, errors).
CREATE TABLE judge_batch_event (
    event_id          bigint      GENERATED ALWAYS AS IDENTITY,
    batch_id          bigint      NOT NULL,
    status            text        NOT NULL,
    provider_batch_id text,
    detail            jsonb,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT judge_batch_event_pkey PRIMARY KEY (event_id),
    CONSTRAINT judge_batch_event_batch_fkey FOREIGN KEY (batch_id) REFERENCES judge_batch (batch_id),
    CONSTRAINT judge_batch_event_status_known CHECK (status IN (
        'submitted', 'validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling',
        'cancelled', 'ended', 'cancel_asked')),
    CONSTRAINT judge_batch_event_submitted_names_its_batch CHECK (
        (status = 'submitted') = (provider_batch_id IS NOT NULL)),
    CONSTRAINT judge_batch_event_provider_batch_id_given CHECK (provider_batch_id ~ '^\S{1,200}$'),
    CONSTRAINT judge_batch_event_detail_is_object CHECK (jsonb_typeof(detail) = 'object')
);

-- Submitted once.
CREATE UNIQUE INDEX judge_batch_event_submitted_once_idx ON judge_batch_event (batch_id) WHERE status = 'submitted';

CREATE INDEX judge_batch_event_batch_idx ON judge_batch_event (batch_id, event_id);

CREATE POLICY judge_batch_event_runner ON judge_batch_event TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON judge_batch_event TO evalledger_runner;
GRANT INSERT (batch_id, status, provider_batch_id, detail) ON judge_batch_event TO evalledger_runner;

CREATE POLICY judge_batch_event_revops ON judge_batch_event FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY judge_batch_event_auditor ON judge_batch_event FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON judge_batch_event TO evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['judge_batch_event:UPDATE OR DELETE:refuse_change_v3']);

-- What became of one request of a judge batch, once its result was read: succeeded (its reply is
-- stored as the suite's verdict row, in the same transaction), or errored, expired or cancelled
-- (stored as the suite's provider_error row, with the provider's reason in error). Once per
-- request: a runner killed while reading results reads only those without a row here.
CREATE TABLE judge_batch_result (
    batch_id   bigint      NOT NULL,
    custom_id  text        NOT NULL,
    outcome    text        NOT NULL,
    error      text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT judge_batch_result_pkey PRIMARY KEY (batch_id, custom_id),
    CONSTRAINT judge_batch_result_request_fkey FOREIGN KEY (batch_id, custom_id)
        REFERENCES judge_batch_request (batch_id, custom_id),
    CONSTRAINT judge_batch_result_outcome_known CHECK (outcome IN ('succeeded', 'errored', 'expired', 'cancelled')),
    CONSTRAINT judge_batch_result_error_iff_failed CHECK ((outcome = 'succeeded') = (error IS NULL)),
    CONSTRAINT judge_batch_result_error_short CHECK (length(error) <= 1000)
);

CREATE POLICY judge_batch_result_runner ON judge_batch_result TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON judge_batch_result TO evalledger_runner;
GRANT INSERT (batch_id, custom_id, outcome, error) ON judge_batch_result TO evalledger_runner;

CREATE POLICY judge_batch_result_revops ON judge_batch_result FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY judge_batch_result_auditor ON judge_batch_result FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON judge_batch_result TO evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['judge_batch_result:UPDATE OR DELETE:refuse_change_v3']);

-- Row-level security, the owner's and code's policies and ENABLE ALWAYS on the new tables; the
-- journal covers them.
CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
