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
