-- One row per judge per answer: what the judge drafts for the reviewer (total claims, the
-- unsupported claims quoted, diagnosis accuracy where the question has it, staleness recognised
-- on stale-fixture questions). Suggestions only: never written into the reviewer's columns, and
-- judges that disagree each keep their row.
CREATE TABLE brain_eval_judge_suggestion (
    suggestion_id        bigint        GENERATED ALWAYS AS IDENTITY,
    eval_run_id          uuid          NOT NULL,
    question_id          varchar(16)   NOT NULL,
    model                text          NOT NULL,
    family               text          NOT NULL,
    same_family          boolean       NOT NULL,
    recorded             boolean       NOT NULL,
    structured           boolean       NOT NULL DEFAULT false,
    response_json        jsonb,
    raw_excerpt          text,
    total_claims         integer,
    unsupported_claims   jsonb,
    diagnosis_accuracy   numeric(3,2),
    staleness_recognised boolean,
    notes                text,
    contributes          boolean       NOT NULL,
    error_kind           text,
    error_message        text,
    input_tokens         integer       NOT NULL DEFAULT 0,
    output_tokens        integer       NOT NULL DEFAULT 0,
    cost_usd             numeric       NOT NULL DEFAULT 0,
    latency_ms           integer       NOT NULL DEFAULT 0,
    attempts             integer       NOT NULL DEFAULT 0,
    created_at           timestamptz   NOT NULL DEFAULT now(),
    run_created_at       timestamptz   NOT NULL,
    -- The usage the reply reported, as billed (input_tokens counts every prompt token: of them,
    -- cached_input_tokens were read from the provider's prompt cache and cache_write_tokens written
    -- to it), and the price it is billed at (USD per million tokens of each class, taken on
    -- price_as_of): with a price, the database computes the cost (call_cost_stamp_v1).
    cached_input_tokens  integer       NOT NULL DEFAULT 0,
    cache_write_tokens   integer       NOT NULL DEFAULT 0,
    price_input          numeric,
    price_cached_input   numeric,
    price_cache_write    numeric,
    price_output         numeric,
    price_as_of          date,
    -- Which of the run's K repeats (--repeats K) this draft is: 1 to K, once each; every draft
    -- stored before repeats is repeat 1 of a run of 1.
    repeat_no            integer       NOT NULL DEFAULT 1,
    CONSTRAINT brain_eval_judge_suggestion_pkey PRIMARY KEY (suggestion_id),
    CONSTRAINT brain_eval_judge_suggestion_once UNIQUE (eval_run_id, question_id, model, repeat_no),
    CONSTRAINT brain_eval_judge_suggestion_answer_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_harness_answer (eval_run_id, question_id),
    CONSTRAINT brain_eval_judge_suggestion_model_format CHECK (model ~ '^[a-z][a-z0-9_-]*:\S+$'),
    CONSTRAINT brain_eval_judge_suggestion_error_kind_known CHECK (error_kind IN (
        'provider_error', 'budget_exhausted', 'parse_failed', 'incomplete', 'out_of_scale')),
    CONSTRAINT brain_eval_judge_suggestion_contributes_iff_no_error CHECK (
        contributes = (error_kind IS NULL) AND contributes = (total_claims IS NOT NULL)
        AND contributes = (unsupported_claims IS NOT NULL)),
    CONSTRAINT brain_eval_judge_suggestion_claims_consistent CHECK (
        total_claims >= 0 AND jsonb_array_length(unsupported_claims) <= total_claims),
    CONSTRAINT brain_eval_judge_suggestion_diagnosis_scale CHECK (diagnosis_accuracy IN (0.0, 0.5, 1.0)),
    CONSTRAINT brain_eval_judge_suggestion_counts_not_negative CHECK (
        input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0 AND attempts >= 0),
    CONSTRAINT brain_eval_judge_suggestion_diagnosis_accuracy_finite CHECK (finite_v1(diagnosis_accuracy)),
    CONSTRAINT brain_eval_judge_suggestion_cost_usd_finite CHECK (finite_v1(cost_usd)),
    CONSTRAINT brain_eval_judge_suggestion_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    CONSTRAINT brain_eval_judge_suggestion_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    CONSTRAINT brain_eval_judge_suggestion_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    CONSTRAINT brain_eval_judge_suggestion_price_input_finite CHECK (finite_v1(price_input)),
    CONSTRAINT brain_eval_judge_suggestion_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    CONSTRAINT brain_eval_judge_suggestion_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    CONSTRAINT brain_eval_judge_suggestion_price_output_finite CHECK (finite_v1(price_output)),
    CONSTRAINT brain_eval_judge_suggestion_repeat_positive CHECK (repeat_no >= 1)
);

CREATE POLICY brain_eval_judge_suggestion_runner ON brain_eval_judge_suggestion TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON brain_eval_judge_suggestion TO evalledger_runner;
GRANT INSERT (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind,
              error_message, input_tokens, output_tokens, cost_usd, latency_ms, attempts,
              cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
              price_cache_write, price_output, price_as_of)
    ON brain_eval_judge_suggestion TO evalledger_runner;
GRANT INSERT (repeat_no) ON brain_eval_judge_suggestion TO evalledger_runner;

-- Blind review: a reviewer reads a question's suggestions only once it asked to see them
-- (brain_eval_show_suggestions_v2 records that), so no value it enters can have seen them
-- unrecorded, and only once a reveal committed by an earlier transaction than the reading one: no
-- rollback undoes a reveal.
CREATE POLICY brain_eval_judge_suggestion_readers ON brain_eval_judge_suggestion FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l))
           AND eval_run_id::text || ' ' || question_id = ANY (ARRAY(
                   SELECT s.eval_run_id::text || ' ' || s.question_id FROM evalledger.brain_eval_suggestion_shown s
                    WHERE s.shown_txid IS DISTINCT FROM txid_current_if_assigned())));

CREATE POLICY brain_eval_judge_suggestion_revops ON brain_eval_judge_suggestion FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_judge_suggestion_auditor ON brain_eval_judge_suggestion FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_judge_suggestion TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
