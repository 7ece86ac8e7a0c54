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
