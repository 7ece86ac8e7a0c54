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
