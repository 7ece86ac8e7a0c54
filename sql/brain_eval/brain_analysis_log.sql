-- What the brain produced for one question: the drill-down target of a question score.
CREATE TABLE brain_analysis_log (
    analysis_id        uuid          NOT NULL DEFAULT gen_random_uuid(),
    brain              varchar(16)   NOT NULL,
    origin             varchar(16)   NOT NULL DEFAULT 'eval',
    model_id           varchar(64)   NOT NULL,
    system_prompt_hash varchar(64)   NOT NULL,
    question_id        varchar(16),
    question           text          NOT NULL,
    output             text          NOT NULL,
    sources_read       jsonb         NOT NULL DEFAULT '[]',
    claims             jsonb         NOT NULL DEFAULT '[]',
    proposed_actions   jsonb,
    input_tokens       integer       NOT NULL DEFAULT 0,
    output_tokens      integer       NOT NULL DEFAULT 0,
    -- Exact: only the run's total is the seed's NUMERIC(10,4), so no part of a sum is rounded.
    token_cost_usd     numeric       NOT NULL,
    produced_at        timestamptz   NOT NULL DEFAULT now(),
    created_at         timestamptz   NOT NULL DEFAULT now(),
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
    CONSTRAINT brain_analysis_log_pkey PRIMARY KEY (analysis_id),
    CONSTRAINT brain_analysis_log_brain_fkey FOREIGN KEY (brain) REFERENCES target (target_id),
    -- production: a real user's request; eval: produced for a harness question.
    CONSTRAINT brain_analysis_log_origin_known CHECK (origin::text IN ('production', 'eval')),
    CONSTRAINT brain_analysis_log_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_analysis_log_sources_read_is_array CHECK (jsonb_typeof(sources_read) = 'array'),
    CONSTRAINT brain_analysis_log_claims_is_array CHECK (jsonb_typeof(claims) = 'array'),
    CONSTRAINT brain_analysis_log_tokens_not_negative CHECK (input_tokens >= 0 AND output_tokens >= 0),
    CONSTRAINT brain_analysis_log_cost_not_negative CHECK (token_cost_usd >= 0),
    CONSTRAINT brain_analysis_log_token_cost_usd_finite CHECK (finite_v1(token_cost_usd)),
    CONSTRAINT brain_analysis_log_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    CONSTRAINT brain_analysis_log_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    CONSTRAINT brain_analysis_log_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    CONSTRAINT brain_analysis_log_price_input_finite CHECK (finite_v1(price_input)),
    CONSTRAINT brain_analysis_log_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    CONSTRAINT brain_analysis_log_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    CONSTRAINT brain_analysis_log_price_output_finite CHECK (finite_v1(price_output))
);

CREATE INDEX brain_analysis_log_prompt_hash_idx ON brain_analysis_log (system_prompt_hash);

-- The prompt comparison looks up each brain's latest production analysis: without this index
-- that is a scan of the whole (production-sized) analysis log.
CREATE INDEX brain_analysis_log_brain_produced_idx ON brain_analysis_log (brain, produced_at DESC);

CREATE INDEX brain_analysis_log_created_idx ON brain_analysis_log (created_at);

-- Prompt drift as a history looks up each brain's latest production analysis before each month's
-- end: production traffic alone, newest first (the eval analyses, 30 per run, are not in it).
CREATE INDEX brain_analysis_log_production_idx ON brain_analysis_log (brain, produced_at DESC)
    WHERE origin = 'production';

CREATE POLICY brain_analysis_log_runner ON brain_analysis_log TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT, INSERT ON brain_analysis_log TO evalledger_runner;

GRANT SELECT ON brain_analysis_log TO evalledger_reviewer;

CREATE POLICY brain_analysis_log_revops ON brain_analysis_log FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_analysis_log_auditor ON brain_analysis_log FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_analysis_log TO evalledger_revops, evalledger_auditor;


-- Prompt drift starts each brain's months at the first production analysis and the first run its
-- reader sees. For RevOps that is the first hot row, past every cold one: with the tier clock in
-- the index, those are skipped in the index alone (an index-only scan), not one heap visit each.
CREATE INDEX brain_analysis_log_production_first_idx ON brain_analysis_log (brain, produced_at)
    INCLUDE (created_at) WHERE origin = 'production';

-- prompt_drift_rows_v3 bounds where those scans start (see it): each brain's earliest row the
-- reader sees by the tier clock, and the rows recorded more than 24 hours after they were
-- produced or started (audited imports), few whatever the history, in the order the earliest is
-- taken in (so the planner reads it, not a longer index in that order filtered).
CREATE INDEX brain_analysis_log_production_recorded_idx ON brain_analysis_log (brain, created_at)
    WHERE origin = 'production';

CREATE INDEX brain_analysis_log_production_late_idx ON brain_analysis_log (brain, produced_at)
    INCLUDE (created_at) WHERE origin = 'production' AND created_at - produced_at > interval '24 hours';

-- A reviewer's two policies here read the question rows and harness answers that point at an
-- analysis, whose tables reference this one: they are created with those tables, in
-- brain_eval_question_score.sql and brain_eval_harness_answer.sql.
