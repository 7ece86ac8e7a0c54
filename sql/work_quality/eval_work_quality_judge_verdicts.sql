-- One row per judge verdict: a model's reply (or failure) on one snapshot. The runner inserts it
-- as it arrives; the database decides whether it contributes and why not. Each judge's calls in
-- order, as takes-quality's (retry_no, call_started, estimated_cost_usd).
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
    cost_usd           numeric       NOT NULL DEFAULT 0,
    latency_ms         integer       NOT NULL DEFAULT 0,
    attempts           integer       NOT NULL DEFAULT 0,
    created_at         timestamptz   NOT NULL DEFAULT now(),
    -- The tier clock: the snapshot's own recording time (retention_clock_v1 stamps it).
    snapshot_created_at timestamptz  NOT NULL,
    retry_no           integer       NOT NULL DEFAULT 0,
    call_started       boolean       NOT NULL DEFAULT false,
    estimated_cost_usd numeric,
    -- The usage the reply reported, as billed (input_tokens counts every prompt token: of them,
    -- cached_input_tokens were read from the provider's prompt cache and cache_write_tokens written
    -- to it), and the price it is billed at (USD per million tokens of each class, taken on
    -- price_as_of): with a price, the database computes the cost (call_cost_stamp_v1).
    cached_input_tokens integer       NOT NULL DEFAULT 0,
    cache_write_tokens integer       NOT NULL DEFAULT 0,
    price_input        numeric,
    price_cached_input numeric,
    price_cache_write  numeric,
    price_output       numeric,
    price_as_of        date,
    -- Which of the snapshot's repeats this row answers (1 to its repeats; --repeats K asks each
    -- judge K times): each repeat is a verdict of its own, with its own retries.
    repeat_no          integer       NOT NULL DEFAULT 1,
    CONSTRAINT eval_work_quality_judge_verdicts_pkey PRIMARY KEY (verdict_id),
    -- Each judge's row once per repeat and retry.
    CONSTRAINT eval_work_quality_judge_verdicts_once UNIQUE (snapshot_id, model, repeat_no, retry_no),
    CONSTRAINT eval_work_quality_judge_verdicts_repeat_positive CHECK (repeat_no >= 1),
    CONSTRAINT eval_work_quality_judge_verdicts_snapshot_fkey FOREIGN KEY (snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
    CONSTRAINT eval_work_quality_judge_verdicts_error_kind_known CHECK (error_kind IN (
        'provider_error', 'budget_exhausted', 'parse_failed', 'incomplete_scores', 'out_of_scale', 'off_contract')),
    CONSTRAINT eval_work_quality_judge_verdicts_contributes_iff_no_error CHECK (
        contributes = (error_kind IS NULL) AND contributes = (scores IS NOT NULL)
        AND contributes = (narrative IS NOT NULL) AND contributes = (confidence IS NOT NULL)),
    CONSTRAINT eval_work_quality_judge_verdicts_confidence_range CHECK (confidence BETWEEN 0 AND 1),
    CONSTRAINT eval_work_quality_judge_verdicts_counts_not_negative CHECK (
        input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0 AND attempts >= 0),
    CONSTRAINT eval_work_quality_judge_verdicts_estimate_iff_started
        CHECK ((estimated_cost_usd IS NOT NULL) = call_started AND estimated_cost_usd >= 0),
    CONSTRAINT eval_work_quality_judge_verdicts_confidence_finite CHECK (finite_v1(confidence)),
    CONSTRAINT eval_work_quality_judge_verdicts_cost_usd_finite CHECK (finite_v1(cost_usd)),
    CONSTRAINT eval_work_quality_judge_verdicts_estimated_cost_usd_finite CHECK (finite_v1(estimated_cost_usd)),
    CONSTRAINT eval_work_quality_judge_verdicts_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    CONSTRAINT eval_work_quality_judge_verdicts_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    CONSTRAINT eval_work_quality_judge_verdicts_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    CONSTRAINT eval_work_quality_judge_verdicts_price_input_finite CHECK (finite_v1(price_input)),
    CONSTRAINT eval_work_quality_judge_verdicts_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    CONSTRAINT eval_work_quality_judge_verdicts_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    CONSTRAINT eval_work_quality_judge_verdicts_price_output_finite CHECK (finite_v1(price_output))
);

CREATE POLICY eval_work_quality_judge_verdicts_runner ON eval_work_quality_judge_verdicts TO evalledger_runner
    USING (snapshot_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON eval_work_quality_judge_verdicts TO evalledger_runner;
GRANT INSERT (snapshot_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
              input_tokens, output_tokens, cost_usd, latency_ms, attempts, call_started, estimated_cost_usd,
              cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
              price_cache_write, price_output, price_as_of, repeat_no)
    ON eval_work_quality_judge_verdicts TO evalledger_runner;

CREATE POLICY eval_work_quality_judge_verdicts_revops ON eval_work_quality_judge_verdicts FOR SELECT TO evalledger_revops
    USING (snapshot_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_work_quality_judge_verdicts_auditor ON eval_work_quality_judge_verdicts FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON eval_work_quality_judge_verdicts TO evalledger_revops, evalledger_auditor;
