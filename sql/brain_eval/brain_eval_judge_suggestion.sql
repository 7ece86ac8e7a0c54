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
    CONSTRAINT brain_eval_judge_suggestion_pkey PRIMARY KEY (suggestion_id),
    CONSTRAINT brain_eval_judge_suggestion_once UNIQUE (eval_run_id, question_id, model),
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
    CONSTRAINT brain_eval_judge_suggestion_cost_usd_finite CHECK (finite_v1(cost_usd))
);

CREATE POLICY brain_eval_judge_suggestion_runner ON brain_eval_judge_suggestion TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON brain_eval_judge_suggestion TO evalledger_runner;
GRANT INSERT (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind,
              error_message, input_tokens, output_tokens, cost_usd, latency_ms, attempts)
    ON brain_eval_judge_suggestion TO evalledger_runner;

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
