-- BrainEvalLog: one row per harness run.
CREATE TABLE brain_eval_log (
    eval_run_id                    uuid          NOT NULL DEFAULT gen_random_uuid(),
    run_trigger                    eval_run_trigger NOT NULL,
    brain_under_test               varchar(16)   NOT NULL,
    model_id                       varchar(64)   NOT NULL,
    system_prompt_hash             varchar(64)   NOT NULL,
    system_prompt_version_label    varchar(64),
    brain_view_contracts_hash      varchar(64)   NOT NULL,
    question_catalog_version       varchar(32)   NOT NULL,
    question_count                 integer       NOT NULL,
    started_at                     timestamptz   NOT NULL,
    completed_at                   timestamptz,
    reviewer_user_id               uuid          NOT NULL,
    reviewer_independence_verified boolean       NOT NULL,
    aggregated_scores              jsonb,
    hard_criteria_passed           boolean,
    soft_criteria_passed_count     integer,
    decision                       eval_decision,
    decision_rationale             text,
    calibration_notes              jsonb,
    token_cost_usd                 numeric(10,4),
    reviewer_hours_spent           numeric(5,2),
    created_at                     timestamptz   NOT NULL DEFAULT now(),
    rubric_id                      bigint        NOT NULL,
    import_id                      bigint,
    CONSTRAINT brain_eval_log_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_log_import_fkey FOREIGN KEY (import_id) REFERENCES brain_eval_import (import_id),
    CONSTRAINT brain_eval_log_brain_under_test_fkey FOREIGN KEY (brain_under_test) REFERENCES target (target_id),
    CONSTRAINT brain_eval_log_reviewer_fkey FOREIGN KEY (reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_log_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT brain_eval_log_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_eval_log_view_contracts_hash_is_sha256 CHECK (brain_view_contracts_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_eval_log_question_count_positive CHECK (question_count > 0),
    CONSTRAINT brain_eval_log_completed_after_start CHECK (completed_at IS NULL OR completed_at >= started_at),
    CONSTRAINT brain_eval_log_reviewer_independent CHECK (reviewer_independence_verified),
    CONSTRAINT brain_eval_log_reviewer_hours_not_negative CHECK (reviewer_hours_spent IS NULL OR reviewer_hours_spent >= 0),
    -- What the database computes at completion is absent while a run is in progress and
    -- required once it is complete.
    CONSTRAINT brain_eval_log_computed_iff_complete CHECK (
        (completed_at IS NULL AND aggregated_scores IS NULL AND hard_criteria_passed IS NULL
         AND soft_criteria_passed_count IS NULL AND decision IS NULL AND decision_rationale IS NULL
         AND token_cost_usd IS NULL)
        OR
        (completed_at IS NOT NULL AND aggregated_scores IS NOT NULL AND hard_criteria_passed IS NOT NULL
         AND soft_criteria_passed_count IS NOT NULL AND decision IS NOT NULL AND decision_rationale IS NOT NULL
         AND token_cost_usd IS NOT NULL)),
    CONSTRAINT brain_eval_log_aggregated_scores_keys CHECK (
        aggregated_scores IS NULL OR aggregated_scores ?& ARRAY[
            'citation_rate', 'hallucination_rate', 'staleness_recognition_rate', 'diagnosis_accuracy_mean',
            'lever_mapping_correctness', 'confidence_calibration_in_band', 'narrative_coherence_mean']),
    CONSTRAINT brain_eval_log_token_cost_usd_finite CHECK (finite_v1(token_cost_usd)),
    CONSTRAINT brain_eval_log_reviewer_hours_spent_finite CHECK (finite_v1(reviewer_hours_spent))
);

CREATE INDEX brain_eval_log_brain_started_idx ON brain_eval_log (brain_under_test, started_at DESC);

CREATE INDEX brain_eval_log_decision_started_idx ON brain_eval_log (decision, started_at DESC);

CREATE INDEX brain_eval_log_system_prompt_hash_idx ON brain_eval_log (system_prompt_hash);

-- A reviewer's policies look up its own runs (hot ones): one index range, not a scan of every run.
CREATE INDEX brain_eval_log_reviewer_idx ON brain_eval_log (reviewer_user_id, created_at);

CREATE INDEX brain_eval_log_import_idx ON brain_eval_log (import_id) WHERE import_id IS NOT NULL;

-- The tier policies, the plan and the purge read each table's tier clock.
CREATE INDEX brain_eval_log_created_idx ON brain_eval_log (created_at);

-- Lookups by key for what the admission triggers ask of open runs, for imports by transaction and
-- for a brain's prompts.
CREATE INDEX brain_eval_log_open_prompt_idx ON brain_eval_log (system_prompt_hash) WHERE completed_at IS NULL;

CREATE INDEX brain_eval_log_open_reviewer_idx ON brain_eval_log (reviewer_user_id) WHERE completed_at IS NULL;

-- The runner writes runs, question rows and analyses, reads them back, and completes runs (brain_eval_complete_v1: no UPDATE grant).
CREATE POLICY brain_eval_log_runner ON brain_eval_log TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT, INSERT ON brain_eval_log TO evalledger_runner;

-- A reviewer sees its own runs, their question rows and the analyses behind them, and scores
-- the reviewer-scored fields of those question rows.
CREATE POLICY brain_eval_log_reviewer ON brain_eval_log FOR SELECT TO evalledger_reviewer
    USING (created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
GRANT SELECT ON brain_eval_log TO evalledger_reviewer;

-- Hot-only reads: every role but the auditor reads an aging row only while its tier clock (the
-- database's own recording time) is in the hot tier (hot_tier_v1), a plain comparison of the row's
-- own column; a reviewer's own-run test reads its runs once per statement (an InitPlan over
-- brain_eval_log, never a lookup per row). RevOps reads the hot tier; auditors read everything the
-- ledger retains.
CREATE POLICY brain_eval_log_revops ON brain_eval_log FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_log_auditor ON brain_eval_log FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_log TO evalledger_revops, evalledger_auditor;

-- The failed-runs panel reads the latest 20 runs decided fail. Seed 002's (decision, started_at
-- DESC) cannot serve RevOps or a reviewer: enum_eq is not leakproof, so under their policies
-- decision = 'fail' is not an index condition, and they scanned every run. A partial index needs
-- no condition: every entry is a failed run, newest first, and the scan stops at the 20th the
-- reader may read.
CREATE INDEX brain_eval_log_failed_started_idx ON brain_eval_log (started_at DESC, eval_run_id DESC)
    WHERE decision = 'fail';

CREATE INDEX brain_eval_log_brain_first_idx ON brain_eval_log (brain_under_test, started_at)
    INCLUDE (created_at);

CREATE INDEX brain_eval_log_brain_recorded_idx ON brain_eval_log (brain_under_test, created_at);

CREATE INDEX brain_eval_log_brain_late_idx ON brain_eval_log (brain_under_test, started_at)
    INCLUDE (created_at) WHERE created_at - started_at > interval '24 hours';

-- One open run per brain, prompt and catalog (issue 37, item 2): a second is refused while the
-- first is open, so no one starts runs until one looks good. The index holds under every isolation
-- level and between racing sessions (the second waits for the first and fails once it commits);
-- brain_eval_log_15_one_open gives the message that names the open run.
CREATE UNIQUE INDEX brain_eval_log_one_open_idx ON brain_eval_log (brain_under_test, system_prompt_hash, question_catalog_version)
    WHERE completed_at IS NULL;
