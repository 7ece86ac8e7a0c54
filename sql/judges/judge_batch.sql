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
