-- The ledger's baseline: roles, schema, the brain-eval ledger (seed 002) and its dashboards, the brain-eval harness (catalogs, brain versions, harness runs, judges' suggestions, the reference answer after the blind score), the takes-quality suite (seed 000), the work-quality suite (seed 003), eval capture (seed 001), seed 002's retention tiers with legal holds and the one purge path, the guards against a careful insider (issue 17), the tamper-evident journal (issue 18), runs CI can trust and retry, the by-month panel tables (issue 22), and the guards the owner role cannot lift.

-- Folded from the unreleased migrations 0001-0005 before 0.1.0, then from 0001 (baseline),
-- 0002 (work-quality), 0003 (harness), 0004 (retention) and 0009 (review), and last from 0005
-- (insiders), 0006 (journal), 0007 (runs), 0008 (bi), 0010 (write costs), 0011 (reference clock)
-- and 0012 (question verdict): each function and view version is installed once, from its own
-- file (\ir), and nothing superseded is installed at all (a trigger, policy or view a later
-- migration repointed is created on its final version); the later migrations' backfills went with
-- them, their added columns are at the end of their tables, in the order ALTER TABLE had put them
-- (column order is a contract of the seed tables). The tables are sealed and journalled once,
-- after the last of them exists. The code role (evalledger_code, NOLOGIN, no login its member)
-- owns the schema and everything in it: tables, views, functions, policies. evalledger_owner owns
-- nothing; it maintains the registries and purges through grants. The user who migrates owns the
-- event triggers (docs/guards.md).

-- =============================================================================================
-- Roles
-- =============================================================================================
-- Roles are cluster-wide, so they are created only where missing: several databases on one
-- server share them. None is superuser, none bypasses row-level security.
DO $roles$
DECLARE
    wanted text[] := ARRAY['evalledger_code:NOLOGIN', 'evalledger_owner:NOLOGIN', 'evalledger_runner:LOGIN',
                           'evalledger_reviewer:LOGIN', 'evalledger_revops:LOGIN',
                           'evalledger_auditor:LOGIN', 'evalledger_agent:LOGIN'];
    spec text;
BEGIN
    FOREACH spec IN ARRAY wanted LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = split_part(spec, ':', 1)) THEN
            EXECUTE format('CREATE ROLE %I %s NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE',
                           split_part(spec, ':', 1), split_part(spec, ':', 2));
        END IF;
    END LOOP;
END
$roles$;
-- A superuser acts as the code role (and the owner role, for the registries) without being a
-- member, so no login is the code role's; anyone else must be a member of both, and is then the
-- installer that owns the code (doctor says so).
DO $code$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('GRANT evalledger_code, evalledger_owner TO %I', current_user);
    END IF;
END
$code$;
-- The retention role: -- Only it (and a superuser) runs the purge. Cluster-wide, created where missing; NOLOGIN: the
-- installer acts as it (a superuser without membership; anyone else is made its member, as the
-- baseline makes the installer a member of the code and owner roles).
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'evalledger_retention') THEN
        CREATE ROLE evalledger_retention NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'evalledger_retention', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT evalledger_retention TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            -- A role created before by someone else, without the ADMIN option for the installer.
            RAISE NOTICE 'evalledger: % may not purge until it is granted evalledger_retention', current_user;
        END;
    END IF;
END
$roles$;

CREATE SCHEMA evalledger AUTHORIZATION evalledger_code;
REVOKE ALL ON SCHEMA evalledger FROM PUBLIC;
-- USAGE only: no application role, the owner role included, creates a name in the ledger's schema.
GRANT USAGE ON SCHEMA evalledger
    TO evalledger_owner, evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor,
       evalledger_retention;
-- Functions are not PUBLIC: a SECURITY DEFINER function would otherwise read past RLS for anyone.
ALTER DEFAULT PRIVILEGES FOR ROLE evalledger_code REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- Types
-- =============================================================================================
-- Why a run happened (seed 002, exactly as written).
CREATE TYPE eval_run_trigger AS ENUM ('pre_launch', 'quarterly', 'prompt_change', 'model_promotion', 'on_demand');
-- The rubric's verdict on a completed run.
CREATE TYPE eval_decision AS ENUM ('pass', 'pass_with_notes', 'conditional', 'fail');
-- No NaN or infinity anywhere (issue 17): every numeric and floating-point column CHECKs finite_v1
-- (<table>_<column>_finite), and the JSON objects the database reads as numbers json_numbers_v1,
-- so both come before the tables.
\ir ../sql/core/finite_v1.sql
\ir ../sql/core/json_numbers_v1.sql

-- =============================================================================================
-- Registries: targets, rubrics, reviewers, prompt tuners
-- =============================================================================================
-- What is under test: a brain, bot or feature is a row here, not a CHECK list.
CREATE TABLE target (
    target_id    varchar(16) NOT NULL,
    kind         text        NOT NULL,
    display_name text        NOT NULL,
    model_family text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT target_pkey PRIMARY KEY (target_id),
    CONSTRAINT target_id_format CHECK (target_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$'),
    CONSTRAINT target_kind_known CHECK (kind IN ('brain', 'bot', 'feature', 'corpus'))
);

-- A suite's policy as data; immutable, so a stricter rubric is a new row (a new epoch).
CREATE TABLE rubric (
    rubric_id   bigint GENERATED ALWAYS AS IDENTITY,
    suite       text        NOT NULL,
    version     text        NOT NULL,
    definition  jsonb       NOT NULL,
    fingerprint char(64)    NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT rubric_pkey PRIMARY KEY (rubric_id),
    CONSTRAINT rubric_suite_version_key UNIQUE (suite, version),
    CONSTRAINT rubric_definition_is_object CHECK (jsonb_typeof(definition) = 'object')
);

-- Which rubric a suite's runs are judged by when they name none: insert-only history that only a
-- migration writes (the owner role may register rubrics, never activate one), never "the newest".
CREATE TABLE rubric_activation (
    activation_id bigint      GENERATED ALWAYS AS IDENTITY,
    suite         text        NOT NULL,
    rubric_id     bigint      NOT NULL,
    reason        text        NOT NULL,
    activated_at  timestamptz NOT NULL DEFAULT now(),
    activated_by  name        NOT NULL DEFAULT session_user,
    CONSTRAINT rubric_activation_pkey PRIMARY KEY (activation_id),
    CONSTRAINT rubric_activation_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT rubric_activation_reason_not_blank CHECK (btrim(reason) <> '')
);

-- Human reviewers: a database role name mapped to the reviewer_user_id that runs carry.
CREATE TABLE reviewer (
    reviewer_user_id uuid        NOT NULL,
    role_name        name        NOT NULL,
    display_name     text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT reviewer_pkey PRIMARY KEY (reviewer_user_id),
    CONSTRAINT reviewer_role_name_key UNIQUE (role_name)
);

-- Who tunes each brain's prompt; readable by the owner alone, consulted by the independence check.
CREATE TABLE prompt_tuner (
    target_id     varchar(16) NOT NULL,
    user_id       uuid        NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT prompt_tuner_pkey PRIMARY KEY (target_id, user_id),
    CONSTRAINT prompt_tuner_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id)
);

-- =============================================================================================
-- The brain's outputs and the eval ledger (seed 002)
-- =============================================================================================
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
    CONSTRAINT brain_analysis_log_pkey PRIMARY KEY (analysis_id),
    CONSTRAINT brain_analysis_log_brain_fkey FOREIGN KEY (brain) REFERENCES target (target_id),
    -- production: a real user's request; eval: produced for a harness question.
    CONSTRAINT brain_analysis_log_origin_known CHECK (origin IN ('production', 'eval')),
    CONSTRAINT brain_analysis_log_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_analysis_log_sources_read_is_array CHECK (jsonb_typeof(sources_read) = 'array'),
    CONSTRAINT brain_analysis_log_claims_is_array CHECK (jsonb_typeof(claims) = 'array'),
    CONSTRAINT brain_analysis_log_tokens_not_negative CHECK (input_tokens >= 0 AND output_tokens >= 0),
    CONSTRAINT brain_analysis_log_cost_not_negative CHECK (token_cost_usd >= 0),
    CONSTRAINT brain_analysis_log_token_cost_usd_finite CHECK (finite_v1(token_cost_usd))
);

-- One explicit, audited import of historical runs: a run that started more than a day before it
-- is recorded names the import made in its own transaction (brain_eval_log_admit_v2), so a
-- backdated run is never an accident and always says who brought it in, when and why.
CREATE TABLE brain_eval_import (
    import_id   bigint      GENERATED ALWAYS AS IDENTITY,
    reason      text        NOT NULL,
    source_file text,
    imported_by name        NOT NULL DEFAULT session_user,
    txid        bigint      NOT NULL DEFAULT txid_current(),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_eval_import_pkey PRIMARY KEY (import_id),
    CONSTRAINT brain_eval_import_reason_not_blank CHECK (btrim(reason) <> '' AND reason !~ '[[:cntrl:]]'),
    CONSTRAINT brain_eval_import_source_file_not_blank CHECK (btrim(source_file) <> '')
);

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

-- BrainEvalQuestionScore: one row per (run, question). The runner (or, for a harness run, the
-- database from the brain's answer) inserts the automatic fields; the reviewer's fields are NULL
-- until the run's reviewer enters them, and question_passed is NULL until the question has every
-- field its criteria need. Completion requires all of them (brain_eval_log_decide_v2), so a
-- completed run's rows carry every field seed 002 requires.
CREATE TABLE brain_eval_question_score (
    question_score_id              uuid         NOT NULL DEFAULT gen_random_uuid(),
    eval_run_id                    uuid         NOT NULL,
    question_id                    varchar(16)  NOT NULL,
    brain_analysis_id              uuid         NOT NULL,
    question_type                  varchar(32)  NOT NULL,
    uses_stale_fixture             boolean      NOT NULL,
    citation_rate                  numeric(5,4) NOT NULL,
    hallucinations_detected        integer,
    total_claims                   integer,
    staleness_correctly_recognized boolean,
    diagnosis_accuracy_score       numeric(3,2),
    lever_mapping_violations       integer,
    confidence_distribution        jsonb        NOT NULL,
    narrative_coherence_rating     integer,
    reviewer_comments              text,
    question_passed                boolean,
    created_at                     timestamptz  NOT NULL DEFAULT now(),
    -- The tier clock: the run's own recording time, so retention reads a column, not the run.
    run_created_at                 timestamptz  NOT NULL,
    -- The run's reviewer, stamped at insert as the clock is (issue 20): the reviewer's policy
    -- compares the row's own column instead of collecting every run of the reviewer per statement.
    run_reviewer_user_id           uuid         NOT NULL,
    CONSTRAINT brain_eval_question_score_pkey PRIMARY KEY (question_score_id),
    -- No CASCADE: runs are append-only.
    CONSTRAINT brain_eval_question_score_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_question_score_analysis_fkey FOREIGN KEY (brain_analysis_id) REFERENCES brain_analysis_log (analysis_id),
    CONSTRAINT brain_eval_question_score_run_reviewer_fkey
        FOREIGN KEY (run_reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_question_score_question_once_per_run UNIQUE (eval_run_id, question_id),
    -- An analysis is one question's answer: its cost counts once.
    CONSTRAINT brain_eval_question_score_analysis_once UNIQUE (brain_analysis_id),
    CONSTRAINT brain_eval_question_score_question_type_known CHECK (question_type IN (
        'plan_diagnosis', 'coverage_gap', 'play_retrospective', 'forecast_bias', 'churn_diagnosis',
        'expansion_qualification', 'handoff_briefing', 'qbr_narrative')),
    CONSTRAINT brain_eval_question_score_citation_rate_range CHECK (citation_rate BETWEEN 0 AND 1),
    CONSTRAINT brain_eval_question_score_claims_consistent CHECK (
        total_claims >= 0 AND hallucinations_detected >= 0 AND hallucinations_detected <= total_claims),
    CONSTRAINT brain_eval_question_score_staleness_only_on_stale_fixture CHECK (
        staleness_correctly_recognized IS NULL OR uses_stale_fixture),
    CONSTRAINT brain_eval_question_score_diagnosis_scale CHECK (
        diagnosis_accuracy_score IS NULL OR diagnosis_accuracy_score IN (0.0, 0.5, 1.0)),
    CONSTRAINT brain_eval_question_score_lever_violations_not_negative CHECK (
        lever_mapping_violations IS NULL OR lever_mapping_violations >= 0),
    CONSTRAINT brain_eval_question_score_coherence_scale CHECK (
        narrative_coherence_rating IS NULL OR narrative_coherence_rating BETWEEN 1 AND 5),
    -- 4000 characters (docs/review-web.md): the web form and the terminal say so before anything is sent.
    CONSTRAINT brain_eval_question_score_comment_length CHECK (char_length(reviewer_comments) <= 4000),
    CONSTRAINT brain_eval_question_score_confidence_distribution_shape CHECK (
        jsonb_typeof(confidence_distribution) = 'object'
        AND confidence_distribution ?& ARRAY['high_confidence_pct', 'multi_source_pct', 'inference_pct', 'speculation_pct']
        AND jsonb_typeof(confidence_distribution -> 'high_confidence_pct') = 'number'
        AND jsonb_typeof(confidence_distribution -> 'multi_source_pct') = 'number'
        AND jsonb_typeof(confidence_distribution -> 'inference_pct') = 'number'
        AND jsonb_typeof(confidence_distribution -> 'speculation_pct') = 'number'
        AND (confidence_distribution ->> 'high_confidence_pct')::numeric BETWEEN 0 AND 100
        AND (confidence_distribution ->> 'multi_source_pct')::numeric BETWEEN 0 AND 100
        AND (confidence_distribution ->> 'inference_pct')::numeric BETWEEN 0 AND 100
        AND (confidence_distribution ->> 'speculation_pct')::numeric BETWEEN 0 AND 100),
    CONSTRAINT brain_eval_question_score_citation_rate_finite CHECK (finite_v1(citation_rate)),
    CONSTRAINT brain_eval_question_score_diagnosis_accuracy_score_finite CHECK (finite_v1(diagnosis_accuracy_score))
);

-- Who entered each reviewer value of a question row, when, and acting as which role: one row per
-- field changed, written only by the question row's own trigger (brain_eval_review_trail_v1).
CREATE TABLE brain_eval_review_entry (
    entry_id         bigint      GENERATED ALWAYS AS IDENTITY,
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    field            text        NOT NULL,
    value            jsonb       NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    acting_role      name        NOT NULL,
    entered_by       name        NOT NULL,
    entered_at       timestamptz NOT NULL DEFAULT now(),
    -- Whether the judges' suggestions for this question had been shown to the reviewer before.
    suggestions_shown boolean    NOT NULL,
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_review_entry_pkey PRIMARY KEY (entry_id),
    CONSTRAINT brain_eval_review_entry_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id),
    CONSTRAINT brain_eval_review_entry_reviewer_fkey FOREIGN KEY (reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_review_entry_field_known CHECK (field IN (
        'hallucinations_detected', 'total_claims', 'staleness_correctly_recognized', 'diagnosis_accuracy_score',
        'narrative_coherence_rating', 'reviewer_comments'))
);

-- When a reviewer first asked to see the judges' suggestions on a question (blind review: the
-- suggestions stay hidden until then); written only by brain_eval_show_suggestions_v2. The reveal
-- carries its transaction's id: the reviewer reads the suggestions only in a later transaction
-- (brain_eval_judge_suggestion_readers), so a rolled-back reveal showed nothing.
CREATE TABLE brain_eval_suggestion_shown (
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    shown_by         name        NOT NULL,
    shown_at         timestamptz NOT NULL DEFAULT now(),
    run_created_at   timestamptz NOT NULL,
    shown_txid       bigint      NOT NULL DEFAULT txid_current(),
    CONSTRAINT brain_eval_suggestion_shown_pkey PRIMARY KEY (eval_run_id, question_id),
    CONSTRAINT brain_eval_suggestion_shown_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id),
    CONSTRAINT brain_eval_suggestion_shown_reviewer_fkey FOREIGN KEY (reviewer_user_id)
        REFERENCES reviewer (reviewer_user_id)
);

-- The reviewer's own account of a run before it completes: the hours spent (self-reported, seed
-- 002) and calibration notes per dimension. Append-only; the latest row is the sign-off that
-- completion requires and copies onto the run (brain_eval_log_decide_v2).
CREATE TABLE brain_eval_run_review (
    review_id            bigint       GENERATED ALWAYS AS IDENTITY,
    eval_run_id          uuid         NOT NULL,
    reviewer_hours_spent numeric(5,2) NOT NULL,
    calibration_notes    jsonb,
    reviewer_user_id     uuid         NOT NULL,
    entered_by           name         NOT NULL,
    created_at           timestamptz  NOT NULL DEFAULT now(),
    run_created_at       timestamptz  NOT NULL,
    CONSTRAINT brain_eval_run_review_pkey PRIMARY KEY (review_id),
    CONSTRAINT brain_eval_run_review_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_run_review_reviewer_fkey FOREIGN KEY (reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_run_review_hours_range CHECK (reviewer_hours_spent >= 0),
    CONSTRAINT brain_eval_run_review_reviewer_hours_spent_finite CHECK (finite_v1(reviewer_hours_spent)),
    -- Notes per dimension: an object of non-blank strings (the admit trigger checks the keys).
    CONSTRAINT brain_eval_run_review_notes_shape CHECK (
        jsonb_typeof(calibration_notes) = 'object'
        AND NOT jsonb_path_exists(calibration_notes, '$.* ? (@.type() != "string" || @ like_regex "^\\s*$")'))
);

-- What a legal hold keeps past the purge horizon: a run, a brain, or a range of the tier clock;
-- exactly one. Insert-only: a hold is never re-pointed or edited; it is placed unreleased and
-- released by a row of legal_hold_release, with who and when. Who placed it is the database's to say.
CREATE TABLE legal_hold (
    hold_id     bigint      GENERATED ALWAYS AS IDENTITY,
    eval_run_id uuid,
    reason      text        NOT NULL,
    placed_at   timestamptz NOT NULL DEFAULT now(),
    released_at timestamptz,
    target_id   varchar(16),
    held_from   timestamptz,
    held_to     timestamptz,
    placed_by   name        NOT NULL DEFAULT session_user,
    CONSTRAINT legal_hold_pkey PRIMARY KEY (hold_id),
    CONSTRAINT legal_hold_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT legal_hold_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT legal_hold_one_scope CHECK (
        num_nonnulls(eval_run_id, target_id, held_from) = 1 AND (held_from IS NULL) = (held_to IS NULL)),
    CONSTRAINT legal_hold_range_ordered CHECK (held_from <= held_to),
    CONSTRAINT legal_hold_reason_not_blank CHECK (btrim(reason) <> ''),
    CONSTRAINT legal_hold_released_by_a_release_row CHECK (released_at IS NULL)
);

-- The release of a hold, once, with its reason: the hold's history is its rows, never an UPDATE.
-- It goes with its hold when the purge takes that (CASCADE: both are past the horizon by then).
CREATE TABLE legal_hold_release (
    hold_id     bigint      NOT NULL,
    reason      text        NOT NULL,
    released_at timestamptz NOT NULL DEFAULT now(),
    released_by name        NOT NULL DEFAULT session_user,
    CONSTRAINT legal_hold_release_pkey PRIMARY KEY (hold_id),
    CONSTRAINT legal_hold_release_hold_fkey FOREIGN KEY (hold_id) REFERENCES legal_hold (hold_id) ON DELETE CASCADE,
    CONSTRAINT legal_hold_release_reason_not_blank CHECK (btrim(reason) <> '')
);

-- =============================================================================================
-- takes-quality (seed 000): the corpus of takes, runs with their receipts, judge verdicts
-- =============================================================================================
-- The corpus: one row per take (a claim someone holds, with a kind, a weight and a source).
-- take_sha is the SHA-256 of the take's seven fields, so loading a file twice adds nothing.
CREATE TABLE take (
    take_id   bigint      GENERATED ALWAYS AS IDENTITY,
    take_sha  char(64)    NOT NULL,
    slug      text        NOT NULL,
    kind      text        NOT NULL,
    holder    text        NOT NULL,
    weight    numeric     NOT NULL,
    since     text        NOT NULL,
    source    text        NOT NULL,
    claim     text        NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT take_pkey PRIMARY KEY (take_id),
    CONSTRAINT take_sha_key UNIQUE (take_sha),
    CONSTRAINT take_sha_is_sha256 CHECK (take_sha ~ '^[0-9a-f]{64}$'),
    CONSTRAINT take_slug_format CHECK (slug ~ '^[^\s]+$'),
    CONSTRAINT take_kind_format CHECK (kind ~ '^[a-z][a-z0-9_-]*$'),
    CONSTRAINT take_holder_not_blank CHECK (btrim(holder) <> ''),
    CONSTRAINT take_weight_range CHECK (weight BETWEEN 0 AND 1),
    CONSTRAINT take_weight_finite CHECK (finite_v1(weight)),
    CONSTRAINT take_since_format CHECK (since ~ '^\d{4}(-\d{2}(-\d{2})?)?$'),
    CONSTRAINT take_source_not_blank CHECK (btrim(source) <> ''),
    CONSTRAINT take_claim_not_blank CHECK (btrim(claim) <> '')
);

-- One row per takes-quality run. An eval's identity is the seed's four fingerprints, then where
-- the sample was drawn from (scope_sha8, the database's), how the run is judged (judges: live or
-- recorded) and which judging of the eval it is (rerun: 0 the first, one more for each `--rerun`):
-- a second identical run is INSERT ... ON CONFLICT DO NOTHING. A run without completed_at was
-- stopped halfway; at completion the database computes the verdict and writes the whole receipt
-- (receipt_json). started_at (the receipt's ts, the trend's order) is the database's: no default
-- to tell apart from a supplied value, so the admission trigger refuses any and stamps now().
CREATE TABLE eval_takes_quality_runs (
    id            bigint       GENERATED ALWAYS AS IDENTITY,
    started_at    timestamptz  NOT NULL,
    completed_at  timestamptz,
    rubric_id     bigint       NOT NULL,
    target_id     varchar(16),
    corpus_source text         NOT NULL,
    corpus_path   text,
    slug_prefix   text,
    sample_limit  integer      NOT NULL,
    seed          bigint       NOT NULL,
    n_takes       integer      NOT NULL,
    corpus_sha8   char(8)      NOT NULL,
    prompt_sha8   char(8)      NOT NULL,
    models_sha8   char(8)      NOT NULL,
    rubric_sha8   char(8)      NOT NULL,
    models        text[]       NOT NULL,
    cycles_run    integer,
    verdict       text,
    overall_score numeric,
    cost_usd      numeric,
    receipt_json  jsonb,
    created_at    timestamptz  NOT NULL DEFAULT now(),
    scope_sha8    char(8),
    judges        text         DEFAULT 'live',
    rerun         integer      DEFAULT 0,
    CONSTRAINT eval_takes_quality_runs_pkey PRIMARY KEY (id),
    CONSTRAINT eval_takes_quality_runs_identity_key
        UNIQUE (corpus_sha8, prompt_sha8, models_sha8, rubric_sha8, scope_sha8, judges, rerun),
    CONSTRAINT eval_takes_quality_runs_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT eval_takes_quality_runs_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT eval_takes_quality_runs_source_known CHECK (corpus_source IN ('db', 'fs')),
    CONSTRAINT eval_takes_quality_runs_path_iff_fs CHECK ((corpus_path IS NOT NULL) = (corpus_source = 'fs')),
    CONSTRAINT eval_takes_quality_runs_sample_positive CHECK (sample_limit > 0 AND n_takes > 0 AND n_takes <= sample_limit),
    CONSTRAINT eval_takes_quality_runs_shas_are_hex CHECK (
        corpus_sha8 ~ '^[0-9a-f]{8}$' AND prompt_sha8 ~ '^[0-9a-f]{8}$'
        AND models_sha8 ~ '^[0-9a-f]{8}$' AND rubric_sha8 ~ '^[0-9a-f]{8}$'),
    CONSTRAINT eval_takes_quality_runs_verdict_known CHECK (verdict IN ('pass', 'fail', 'inconclusive')),
    CONSTRAINT eval_takes_quality_runs_completed_after_start CHECK (completed_at IS NULL OR completed_at >= started_at),
    -- What the database computes at completion is absent while the run is open, present after.
    CONSTRAINT eval_takes_quality_runs_computed_iff_complete CHECK (
        (completed_at IS NULL AND cycles_run IS NULL AND verdict IS NULL AND overall_score IS NULL
         AND cost_usd IS NULL AND receipt_json IS NULL)
        OR
        (completed_at IS NOT NULL AND cycles_run IS NOT NULL AND verdict IS NOT NULL
         AND cost_usd IS NOT NULL AND receipt_json IS NOT NULL)),
    CONSTRAINT eval_takes_quality_runs_judges_known CHECK (judges IN ('live', 'recorded')),
    CONSTRAINT eval_takes_quality_runs_scope_sha8_hex CHECK (scope_sha8 ~ '^[0-9a-f]{8}$'),
    CONSTRAINT eval_takes_quality_runs_rerun_not_negative CHECK (rerun >= 0),
    CONSTRAINT eval_takes_quality_runs_identity_whole
        CHECK (scope_sha8 IS NOT NULL AND judges IS NOT NULL AND rerun IS NOT NULL),
    CONSTRAINT eval_takes_quality_runs_overall_score_finite CHECK (finite_v1(overall_score)),
    CONSTRAINT eval_takes_quality_runs_cost_usd_finite CHECK (finite_v1(cost_usd))
);

-- One row per judge verdict: a model's reply (or failure) for one cycle of a run. The runner
-- inserts it as it arrives; the database decides whether it contributes and why not. Each judge's
-- calls in order: retry_no (the database's) numbers a judge's rows in a cycle; a row with
-- call_started is a call about to be sent, carrying the runner's estimate of its cost, which counts
-- when no answer follows. Costs are exact: no column rounds a part of a sum.
CREATE TABLE eval_takes_quality_judge_verdicts (
    verdict_id    bigint       GENERATED ALWAYS AS IDENTITY,
    run_id        bigint       NOT NULL,
    cycle         integer      NOT NULL,
    model         text         NOT NULL,
    family        text         NOT NULL,
    same_family   boolean      NOT NULL,
    recorded      boolean      NOT NULL,
    structured    boolean      NOT NULL DEFAULT false,
    response_json jsonb,
    raw_excerpt   text,
    scores        jsonb,
    feedback      text,
    improvements  jsonb,
    contributes   boolean      NOT NULL,
    error_kind    text,
    error_message text,
    input_tokens  integer      NOT NULL DEFAULT 0,
    output_tokens integer      NOT NULL DEFAULT 0,
    cost_usd      numeric      NOT NULL DEFAULT 0,
    latency_ms    integer      NOT NULL DEFAULT 0,
    attempts      integer      NOT NULL DEFAULT 0,
    created_at    timestamptz  NOT NULL DEFAULT now(),
    -- The tier clock: the run's own recording time (retention_clock_v1 stamps it).
    run_created_at timestamptz NOT NULL,
    retry_no           integer NOT NULL DEFAULT 0,
    call_started       boolean NOT NULL DEFAULT false,
    estimated_cost_usd numeric,
    CONSTRAINT eval_takes_quality_judge_verdicts_pkey PRIMARY KEY (verdict_id),
    -- Each judge's row once per retry.
    CONSTRAINT eval_takes_quality_judge_verdicts_once UNIQUE (run_id, cycle, model, retry_no),
    CONSTRAINT eval_takes_quality_judge_verdicts_run_fkey FOREIGN KEY (run_id) REFERENCES eval_takes_quality_runs (id),
    CONSTRAINT eval_takes_quality_judge_verdicts_cycle_positive CHECK (cycle >= 1),
    CONSTRAINT eval_takes_quality_judge_verdicts_error_kind_known CHECK (error_kind IN (
        'provider_error', 'budget_exhausted', 'parse_failed', 'incomplete_scores', 'out_of_scale')),
    CONSTRAINT eval_takes_quality_judge_verdicts_contributes_iff_no_error CHECK (
        contributes = (error_kind IS NULL) AND contributes = (scores IS NOT NULL)),
    CONSTRAINT eval_takes_quality_judge_verdicts_counts_not_negative CHECK (
        input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0 AND attempts >= 0),
    CONSTRAINT eval_takes_quality_judge_verdicts_estimate_iff_started
        CHECK ((estimated_cost_usd IS NOT NULL) = call_started AND estimated_cost_usd >= 0),
    CONSTRAINT eval_takes_quality_judge_verdicts_cost_usd_finite CHECK (finite_v1(cost_usd)),
    CONSTRAINT eval_takes_quality_judge_verdicts_estimated_cost_usd_finite CHECK (finite_v1(estimated_cost_usd))
);

-- =============================================================================================
-- Eval capture (seed 001): captured queries (monthly partitions), their keys, capture failures
-- =============================================================================================
-- capture_distinct_v1 is called by eval_candidates' CHECK constraints, so it comes first.
\ir ../sql/capture/capture_distinct_v1.sql
-- One captured query or search call (seed 001, row schema v1), partitioned by month of created_at.
CREATE TABLE eval_candidates (
    id                  bigint           GENERATED ALWAYS AS IDENTITY,
    tool_name           text             NOT NULL,
    query               text             NOT NULL,
    retrieved_slugs     text[]           NOT NULL DEFAULT '{}',
    retrieved_chunk_ids bigint[]         NOT NULL DEFAULT '{}',
    source_ids          text[]           NOT NULL DEFAULT '{}',
    expand_enabled      boolean,
    detail              text,
    detail_resolved     text,
    vector_enabled      boolean          NOT NULL,
    expansion_applied   boolean          NOT NULL,
    latency_ms          double precision NOT NULL,
    remote              boolean          NOT NULL,
    job_id              bigint,
    subagent_id         bigint,
    -- Stamped after the INSERT statement took the capture window lock (capture_window_lock_v2).
    created_at          timestamptz      NOT NULL DEFAULT clock_timestamp(),
    -- Client-generated, unique through eval_candidate_keys; never exported.
    capture_key         uuid             NOT NULL,
    CONSTRAINT eval_candidates_pkey PRIMARY KEY (created_at, id),
    CONSTRAINT eval_candidates_tool_name_known CHECK (tool_name IN ('query', 'search')),
    CONSTRAINT eval_candidates_query_max_50kb CHECK (octet_length(query) <= 51200),
    CONSTRAINT eval_candidates_detail_known CHECK (detail IN ('low', 'medium', 'high')),
    CONSTRAINT eval_candidates_detail_resolved_known CHECK (detail_resolved IN ('low', 'medium', 'high')),
    CONSTRAINT eval_candidates_expand_only_for_query CHECK (tool_name = 'query' OR expand_enabled IS NULL),
    CONSTRAINT eval_candidates_slugs_distinct CHECK (
        array_position(retrieved_slugs, NULL) IS NULL
        AND cardinality(retrieved_slugs) = cardinality(evalledger.capture_distinct_v1(retrieved_slugs))),
    CONSTRAINT eval_candidates_chunk_ids_not_null CHECK (array_position(retrieved_chunk_ids, NULL) IS NULL),
    CONSTRAINT eval_candidates_source_ids_distinct CHECK (
        array_position(source_ids, NULL) IS NULL
        AND cardinality(source_ids) = cardinality(evalledger.capture_distinct_v1(source_ids))),
    CONSTRAINT eval_candidates_arrays_one_dimensional CHECK (
        coalesce(array_ndims(retrieved_slugs), 1) = 1 AND coalesce(array_ndims(retrieved_chunk_ids), 1) = 1
        AND coalesce(array_ndims(source_ids), 1) = 1),
    CONSTRAINT eval_candidates_latency_finite CHECK (latency_ms >= 0 AND latency_ms < 'Infinity'::double precision),
    CONSTRAINT eval_candidates_latency_ms_finite CHECK (finite_v1(latency_ms::numeric)),
    CONSTRAINT eval_candidates_ids_not_negative CHECK (
        (job_id IS NULL OR job_id >= 0) AND (subagent_id IS NULL OR subagent_id >= 0))
) PARTITION BY RANGE (created_at);

-- Every capture_key ever written (with its row's created_at, for the purge): the UNIQUE key that
-- eval_candidates, being partitioned by time, cannot carry itself.
CREATE TABLE eval_candidate_keys (
    capture_key uuid        NOT NULL,
    created_at  timestamptz NOT NULL,
    CONSTRAINT eval_candidate_keys_pkey PRIMARY KEY (capture_key)
);

-- Why a capture did not reach eval_candidates (seed 001's companion audit table; read by doctor).
CREATE TABLE eval_capture_failures (
    failure_id  bigint      GENERATED ALWAYS AS IDENTITY,
    failure_key uuid        NOT NULL,
    reason      text        NOT NULL,
    occurred_at timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    tool_name   text,
    sqlstate    text,
    detail      text,
    capture_key uuid,
    CONSTRAINT eval_capture_failures_pkey PRIMARY KEY (failure_id),
    CONSTRAINT eval_capture_failures_failure_key_key UNIQUE (failure_key),
    CONSTRAINT eval_capture_failures_reason_known CHECK (
        reason IN ('db_down', 'rls_reject', 'check_violation', 'scrubber_exception', 'other')),
    CONSTRAINT eval_capture_failures_tool_name_known CHECK (tool_name IN ('query', 'search')),
    CONSTRAINT eval_capture_failures_sqlstate_format CHECK (sqlstate ~ '^[0-9A-Z]{5}$'),
    CONSTRAINT eval_capture_failures_detail_short CHECK (char_length(detail) <= 500)
);

-- The capture window lock (issue 17): writers take ROW EXCLUSIVE on this table, an export's bound
-- SHARE for an instant, a partition maker SHARE UPDATE EXCLUSIVE. It holds no rows. No application
-- role holds any privilege on it, so only the code role's functions lock it: no login can stall the
-- writers (as any login could hold a well-known advisory key).
CREATE TABLE capture_window (
    nothing boolean,
    CONSTRAINT capture_window_holds_no_rows CHECK (false)
);
REVOKE ALL ON capture_window FROM PUBLIC;
ALTER TABLE capture_window ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

-- =============================================================================================
-- The brain-eval harness: question catalogs, brain versions, harness runs, answers, suggestions
-- =============================================================================================
-- One row per question catalog version (seed 002's question_catalog_version, e.g. v28-2026Q2),
-- loaded whole from its document and never changed: a new quarter is a new version.
CREATE TABLE brain_eval_catalog (
    catalog_version varchar(32) NOT NULL,
    document        jsonb       NOT NULL,
    document_sha256 char(64)    NOT NULL,
    question_count  integer     NOT NULL,
    source_file     text,
    loaded_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_eval_catalog_pkey PRIMARY KEY (catalog_version),
    CONSTRAINT brain_eval_catalog_version_format CHECK (catalog_version ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'),
    CONSTRAINT brain_eval_catalog_document_is_object CHECK (jsonb_typeof(document) = 'object'),
    CONSTRAINT brain_eval_catalog_sha256_hex CHECK (document_sha256 ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_eval_catalog_has_questions CHECK (question_count > 0),
    CONSTRAINT brain_eval_catalog_source_file_is_a_name CHECK (source_file !~ '[/[:cntrl:]]' AND btrim(source_file) <> '')
);

-- One row per question of a catalog: what the brain is asked, the fixture sources it may read,
-- whether it deliberately uses stale data, and its own pass criteria. Read from the document.
CREATE TABLE brain_eval_catalog_question (
    catalog_version    varchar(32) NOT NULL,
    position           integer     NOT NULL,
    question_id        varchar(16) NOT NULL,
    question_type      varchar(32) NOT NULL,
    question_text      text        NOT NULL,
    sources            jsonb       NOT NULL,
    uses_stale_fixture boolean     NOT NULL,
    pass_criteria      jsonb       NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_eval_catalog_question_pkey PRIMARY KEY (catalog_version, question_id),
    CONSTRAINT brain_eval_catalog_question_position_key UNIQUE (catalog_version, position),
    CONSTRAINT brain_eval_catalog_question_catalog_fkey FOREIGN KEY (catalog_version)
        REFERENCES brain_eval_catalog (catalog_version),
    CONSTRAINT brain_eval_catalog_question_position_positive CHECK (position >= 1),
    CONSTRAINT brain_eval_catalog_question_id_format CHECK (question_id ~ '^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*$'),
    CONSTRAINT brain_eval_catalog_question_type_known CHECK (question_type IN (
        'plan_diagnosis', 'coverage_gap', 'play_retrospective', 'forecast_bias', 'churn_diagnosis',
        'expansion_qualification', 'handoff_briefing', 'qbr_narrative')),
    CONSTRAINT brain_eval_catalog_question_text_not_blank CHECK (btrim(question_text) <> ''),
    -- Every source has a string id (distinct within the question: the admit trigger checks).
    CONSTRAINT brain_eval_catalog_question_sources_shape CHECK (
        jsonb_typeof(sources) = 'array' AND jsonb_array_length(sources) > 0
        AND NOT jsonb_path_exists(sources, '$[*] ? (!(@.id.type() == "string"))')),
    -- A stale-fixture question is one that gives the brain at least one source marked stale.
    CONSTRAINT brain_eval_catalog_question_stale_iff_stale_source CHECK (
        uses_stale_fixture = jsonb_path_exists(sources, '$[*] ? (@.stale == true)')),
    -- The two criteria every question has, and the optional ones in their scales when present.
    CONSTRAINT brain_eval_catalog_question_pass_criteria_shape CHECK (
        jsonb_typeof(pass_criteria) = 'object'
        AND jsonb_typeof(pass_criteria -> 'max_hallucinations') = 'number'
        AND jsonb_typeof(pass_criteria -> 'min_citation_rate') = 'number'
        AND coalesce(jsonb_typeof(pass_criteria -> 'min_diagnosis_accuracy'), 'number') = 'number'
        AND coalesce(jsonb_typeof(pass_criteria -> 'min_narrative_coherence'), 'number') = 'number'
        AND coalesce(jsonb_typeof(pass_criteria -> 'max_lever_violations'), 'number') = 'number'
        AND jsonb_path_match(pass_criteria, '$.max_hallucinations >= 0 && $.min_citation_rate >= 0 && $.min_citation_rate <= 1')
        AND NOT jsonb_path_exists(pass_criteria, '$.min_diagnosis_accuracy ? (@ != 0 && @ != 0.5 && @ != 1)')
        AND NOT jsonb_path_exists(pass_criteria, '$.min_narrative_coherence ? (@ < 1 || @ > 5)')
        AND NOT jsonb_path_exists(pass_criteria, '$.max_lever_violations ? (@ < 0)'))
);

-- One row per version of a brain under test: its model, its system prompt (the text; the
-- database hashes it) and the lever enum its proposed actions must keep to. A new prompt, model
-- or lever set is a new version; nothing is edited.
CREATE TABLE brain_version (
    brain_version_id   bigint      GENERATED ALWAYS AS IDENTITY,
    target_id          varchar(16) NOT NULL,
    version            integer     NOT NULL,
    provider           varchar(16) NOT NULL,
    model_id           varchar(64) NOT NULL,
    system_prompt      text        NOT NULL,
    system_prompt_hash varchar(64) NOT NULL,
    version_label      varchar(64),
    levers             text[]      NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_version_pkey PRIMARY KEY (brain_version_id),
    CONSTRAINT brain_version_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT brain_version_number_key UNIQUE (target_id, version),
    -- The same configuration registered twice is the same version.
    CONSTRAINT brain_version_config_key UNIQUE (target_id, provider, model_id, system_prompt_hash, levers),
    CONSTRAINT brain_version_label_key UNIQUE (target_id, version_label),
    CONSTRAINT brain_version_number_positive CHECK (version >= 1),
    CONSTRAINT brain_version_provider_format CHECK (provider ~ '^[a-z][a-z0-9_-]*$'),
    CONSTRAINT brain_version_model_id_format CHECK (btrim(model_id) <> '' AND model_id !~ '[[:space:][:cntrl:]]'),
    CONSTRAINT brain_version_prompt_not_blank CHECK (btrim(system_prompt) <> ''),
    CONSTRAINT brain_version_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_version_label_not_blank CHECK (btrim(version_label) <> '' AND version_label !~ '[[:cntrl:]]'),
    CONSTRAINT brain_version_levers_format CHECK (
        array_position(levers, NULL) IS NULL AND coalesce(array_ndims(levers), 1) = 1
        AND (cardinality(levers) = 0 OR array_to_string(levers, ',') ~ '^[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*$'))
);

-- The prompts each brain owns (issue 17): registered by one of its versions, or carried by one of
-- its analyses (production or eval). Written only by brain_prompt_claim_v1; every rule that follows
-- the prompt rather than the label reads it by key (independence, levers, question needs, brain
-- holds). Reference data: never purged, readable by every reading role like brain_version.
CREATE TABLE brain_prompt (
    system_prompt_hash varchar(64) NOT NULL,
    target_id          varchar(16) NOT NULL,
    seen_as            text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_prompt_pkey PRIMARY KEY (system_prompt_hash, target_id),
    CONSTRAINT brain_prompt_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT brain_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    -- How the brain first showed the prompt: a registered version, or an analysis carrying it.
    CONSTRAINT brain_prompt_seen_as_known CHECK (seen_as IN ('version', 'analysis'))
);

-- One row per harness run (`evalledger run brain-eval`): the registered brain version it called,
-- the catalog and questions it asked, which views it hashed, from where, and whether its answers
-- are live or recorded.
CREATE TABLE brain_eval_harness_run (
    eval_run_id      uuid        NOT NULL,
    brain_version_id bigint      NOT NULL,
    catalog_version  varchar(32) NOT NULL,
    question_ids     text[]      NOT NULL,
    contracts        jsonb       NOT NULL,
    answers          text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- The tier clock: the run's own recording time (retention_clock_v1 stamps it).
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_harness_run_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_harness_run_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_harness_run_brain_version_fkey FOREIGN KEY (brain_version_id)
        REFERENCES brain_version (brain_version_id),
    CONSTRAINT brain_eval_harness_run_catalog_fkey FOREIGN KEY (catalog_version)
        REFERENCES brain_eval_catalog (catalog_version),
    -- Live calls, or the recordings shipped with the demo: a run is one or the other.
    CONSTRAINT brain_eval_harness_run_answers_known CHECK (answers IN ('live', 'recorded')),
    CONSTRAINT brain_eval_harness_run_questions_distinct CHECK (
        array_position(question_ids, NULL) IS NULL AND cardinality(question_ids) > 0
        AND cardinality(question_ids) = cardinality(evalledger.capture_distinct_v1(question_ids))),
    -- What `contracts hash --json` prints: the hash, its canonical form, the source, every view.
    CONSTRAINT brain_eval_harness_run_contracts_shape CHECK (
        jsonb_typeof(contracts) = 'object' AND contracts ?& ARRAY['brain_view_contracts_hash', 'source', 'views']
        AND jsonb_typeof(contracts -> 'views') = 'array' AND jsonb_array_length(contracts -> 'views') > 0)
);

-- One row per answer the brain gave in a harness run, pointing at the brain_analysis_log row that
-- holds it; a question with a row is not asked again when the run resumes. The automatic scores
-- are the database's, computed from the stored answer at INSERT.
CREATE TABLE brain_eval_harness_answer (
    eval_run_id              uuid         NOT NULL,
    question_id              varchar(16)  NOT NULL,
    analysis_id              uuid         NOT NULL,
    recorded                 boolean      NOT NULL,
    contract_error           text,
    latency_ms               integer      NOT NULL DEFAULT 0,
    attempts                 integer      NOT NULL DEFAULT 0,
    citation_rate            numeric(5,4) NOT NULL,
    confidence_distribution  jsonb        NOT NULL,
    lever_mapping_violations integer,
    created_at               timestamptz  NOT NULL DEFAULT now(),
    run_created_at           timestamptz  NOT NULL,
    CONSTRAINT brain_eval_harness_answer_pkey PRIMARY KEY (eval_run_id, question_id),
    CONSTRAINT brain_eval_harness_answer_run_fkey FOREIGN KEY (eval_run_id)
        REFERENCES brain_eval_harness_run (eval_run_id),
    CONSTRAINT brain_eval_harness_answer_analysis_key UNIQUE (analysis_id),
    CONSTRAINT brain_eval_harness_answer_analysis_fkey FOREIGN KEY (analysis_id)
        REFERENCES brain_analysis_log (analysis_id),
    CONSTRAINT brain_eval_harness_answer_contract_error_not_blank CHECK (btrim(contract_error) <> ''),
    CONSTRAINT brain_eval_harness_answer_counts_not_negative CHECK (latency_ms >= 0 AND attempts >= 0),
    CONSTRAINT brain_eval_harness_answer_citation_rate_range CHECK (citation_rate BETWEEN 0 AND 1),
    CONSTRAINT brain_eval_harness_answer_citation_rate_finite CHECK (finite_v1(citation_rate)),
    CONSTRAINT brain_eval_harness_answer_lever_violations_not_negative CHECK (lever_mapping_violations >= 0)
);

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

-- When a reviewer was first shown a question's reference answer; written only by
-- brain_eval_show_reference_v2, readable through brain_eval_reference_v2 only in a transaction
-- after the one that wrote it. entries_before: the question's last trail entry then, so every
-- reviewer value entered after seeing the reference is an entry with a higher entry_id.
CREATE TABLE brain_eval_reference_shown (
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    shown_by         name        NOT NULL,
    shown_at         timestamptz NOT NULL DEFAULT now(),
    shown_txid       bigint      NOT NULL,
    entries_before   bigint      NOT NULL,
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_reference_shown_pkey PRIMARY KEY (eval_run_id, question_id),
    -- The one CASCADE: the row goes with its question row, inside the purge only (the guard).
    CONSTRAINT brain_eval_reference_shown_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id) ON DELETE CASCADE,
    CONSTRAINT brain_eval_reference_shown_reviewer_fkey FOREIGN KEY (reviewer_user_id)
        REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_reference_shown_entries_not_negative CHECK (entries_before >= 0)
);
-- =============================================================================================
-- work-quality (seed 003): snapshots of judged work products and their judge verdicts
-- =============================================================================================
-- One row per snapshot: a judged run (origin 'run': the runner inserts it in progress, the judges'
-- verdicts follow, completion computes the aggregate) or a history file of the seed's own Go code
-- brought into the ledger (origin 'import': the database reads every column from the document).
-- (name, run_id) as in the store's file name, then how it was judged (judges), is the snapshot's
-- identity: a repeated run or a second import of the same file adds nothing. A snapshot keeps the
-- previous run's id and the comparison it made, and references no previous row, which may age out
-- before it: the chain of an active target must not pin its whole history.
CREATE TABLE eval_work_quality_snapshots (
    snapshot_id      bigint       GENERATED ALWAYS AS IDENTITY,
    origin           text         NOT NULL,
    rubric_id        bigint       NOT NULL,
    kind             text         NOT NULL,
    name             text         NOT NULL,
    persona          text         NOT NULL DEFAULT '',
    run_id           text         NOT NULL,
    at               timestamptz  NOT NULL,
    bot_family       text,
    bot_version      text         NOT NULL DEFAULT '',
    iterion_sha      text         NOT NULL DEFAULT '',
    task             text         NOT NULL DEFAULT '',
    outcome          text         NOT NULL DEFAULT '',
    evidence_digest  text         NOT NULL DEFAULT '',
    evidence_sha256  char(64),
    cost_usd         numeric      NOT NULL DEFAULT 0,
    tokens           bigint       NOT NULL DEFAULT 0,
    duration_ms      bigint       NOT NULL DEFAULT 0,
    iterations       bigint       NOT NULL DEFAULT 0,
    model_calls      bigint       NOT NULL DEFAULT 0,
    retries          bigint       NOT NULL DEFAULT 0,
    models           text[]       NOT NULL,
    prev_snapshot_id bigint,
    prev_run_id      text,
    completed_at     timestamptz,
    mean_scores      jsonb,
    disagreement     jsonb,
    note             text,
    comparison       jsonb,
    judges_cost_usd  numeric,
    snapshot_json    jsonb,
    source_file      text,
    created_at       timestamptz  NOT NULL DEFAULT now(),
    judges           text         DEFAULT 'live',
    CONSTRAINT eval_work_quality_snapshots_pkey PRIMARY KEY (snapshot_id),
    CONSTRAINT eval_work_quality_snapshots_identity_key UNIQUE (name, run_id, judges),
    CONSTRAINT eval_work_quality_snapshots_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT eval_work_quality_snapshots_origin_known CHECK (origin IN ('run', 'import')),
    CONSTRAINT eval_work_quality_snapshots_kind_known CHECK (kind IN ('bot', 'feature')),
    CONSTRAINT eval_work_quality_snapshots_name_not_blank CHECK (btrim(name) <> '' AND name !~ '[[:cntrl:]]'),
    CONSTRAINT eval_work_quality_snapshots_run_id_not_blank CHECK (btrim(run_id) <> '' AND run_id !~ '[[:cntrl:]]'),
    CONSTRAINT eval_work_quality_snapshots_bot_family_format CHECK (bot_family ~ '^[a-z][a-z0-9_-]*$'),
    CONSTRAINT eval_work_quality_snapshots_evidence_sha256_hex CHECK (evidence_sha256 ~ '^[0-9a-f]{64}$'),
    CONSTRAINT eval_work_quality_snapshots_metrics_not_negative CHECK (
        cost_usd >= 0 AND tokens >= 0 AND duration_ms >= 0 AND iterations >= 0 AND model_calls >= 0 AND retries >= 0),
    CONSTRAINT eval_work_quality_snapshots_run_has_panel CHECK (origin = 'import' OR cardinality(models) >= 1),
    CONSTRAINT eval_work_quality_snapshots_import_has_file CHECK ((origin = 'import') = (source_file IS NOT NULL)),
    CONSTRAINT eval_work_quality_snapshots_run_prev_whole CHECK (
        origin = 'import' OR (prev_snapshot_id IS NULL) = (prev_run_id IS NULL)),
    CONSTRAINT eval_work_quality_snapshots_completed_after_at CHECK (completed_at IS NULL OR completed_at >= at
        OR origin = 'import'),
    -- What the database computes at completion is absent while the run is open, present after;
    -- a comparison exactly when a run had a previous snapshot.
    CONSTRAINT eval_work_quality_snapshots_computed_iff_complete CHECK (
        (completed_at IS NULL AND mean_scores IS NULL AND note IS NULL AND comparison IS NULL
         AND judges_cost_usd IS NULL AND snapshot_json IS NULL)
        OR
        (completed_at IS NOT NULL AND mean_scores IS NOT NULL AND note IS NOT NULL AND judges_cost_usd IS NOT NULL
         AND snapshot_json IS NOT NULL)),
    CONSTRAINT eval_work_quality_snapshots_comparison_iff_prev CHECK (
        origin = 'import' OR completed_at IS NULL OR (comparison IS NULL) = (prev_snapshot_id IS NULL)),
    CONSTRAINT eval_work_quality_snapshots_judges_known CHECK (judges IN ('live', 'recorded')),
    CONSTRAINT eval_work_quality_snapshots_judges_whole CHECK (judges IS NOT NULL),
    CONSTRAINT eval_work_quality_snapshots_cost_usd_finite CHECK (finite_v1(cost_usd)),
    CONSTRAINT eval_work_quality_snapshots_judges_cost_usd_finite CHECK (finite_v1(judges_cost_usd)),
    CONSTRAINT eval_work_quality_snapshots_mean_scores_numbers CHECK (json_numbers_v1(mean_scores)),
    CONSTRAINT eval_work_quality_snapshots_disagreement_numbers CHECK (json_numbers_v1(disagreement)),
    -- An imported file's comparison: the history view and IsRegression read its deltas as numbers.
    CONSTRAINT eval_work_quality_snapshots_comparison_numbers CHECK (
        jsonb_typeof(comparison -> 'overall_delta') IS DISTINCT FROM 'string'
        AND jsonb_typeof(comparison -> 'value_delta') IS DISTINCT FROM 'string'
        AND coalesce(json_numbers_v1(comparison -> 'per_dimension'), true))
);

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
    CONSTRAINT eval_work_quality_judge_verdicts_pkey PRIMARY KEY (verdict_id),
    -- Each judge's row once per retry.
    CONSTRAINT eval_work_quality_judge_verdicts_once UNIQUE (snapshot_id, model, retry_no),
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
    CONSTRAINT eval_work_quality_judge_verdicts_estimated_cost_usd_finite CHECK (finite_v1(estimated_cost_usd))
);

-- =============================================================================================
-- Retention: the purges' markers (the code role's alone, so the owner role can neither purge nor
-- fake one) and the purge log
-- =============================================================================================
-- capture_purge_marker: the transaction id of a running retention_purge_v2() while it drops capture
-- partitions and deletes capture keys (deleted before it returns; xids are never reused); written
-- by that function alone.
CREATE TABLE evalledger.capture_purge_marker (
    txid bigint NOT NULL,
    CONSTRAINT capture_purge_marker_pkey PRIMARY KEY (txid)
);
REVOKE ALL ON evalledger.capture_purge_marker FROM PUBLIC;
-- Privileges keep everyone but this table's owner out; the policy lets that owner through FORCE.
CREATE POLICY capture_purge_marker_table_owner ON evalledger.capture_purge_marker
    USING (true) WITH CHECK (true);
ALTER TABLE evalledger.capture_purge_marker ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
-- retention_purge_marker: the transaction id of a running retention_purge_v2() (deleted before it
-- returns; xids are never reused); written by that function alone. Privileges keep everyone but
-- its owner out; the policy lets that owner through FORCE.
CREATE TABLE retention_purge_marker (
    txid bigint NOT NULL,
    CONSTRAINT retention_purge_marker_pkey PRIMARY KEY (txid)
);
REVOKE ALL ON retention_purge_marker FROM PUBLIC;
CREATE POLICY retention_purge_marker_table_owner ON retention_purge_marker USING (true) WITH CHECK (true);
ALTER TABLE retention_purge_marker ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
-- What the purge deleted: one row per table and run (or capture partition) per purge, stamped by
-- the database with who and when. Append-only and never purged; auditors read it.
CREATE TABLE retention_purge_log (
    purge_log_id   bigint      GENERATED ALWAYS AS IDENTITY,
    purged_at      timestamptz NOT NULL DEFAULT now(),
    purged_by      name        NOT NULL DEFAULT session_user,
    txid           bigint      NOT NULL DEFAULT txid_current(),
    table_name     text        NOT NULL,
    row_count      bigint      NOT NULL,
    eval_run_id    uuid,
    partition_name text,
    CONSTRAINT retention_purge_log_pkey PRIMARY KEY (purge_log_id),
    CONSTRAINT retention_purge_log_row_count_positive CHECK (row_count >= 0)
);
-- =============================================================================================
-- Run claims: one runner judges a run at a time
-- =============================================================================================
-- A claim is an uncommitted row (run_claim_commit_refused_v1): a second runner of the same run
-- waits on the first's transaction and then finds what it recorded, so no call is made twice.
CREATE TABLE run_claim (
    suite       text    NOT NULL,
    run_id      bigint  NOT NULL,
    claimed_by  name    NOT NULL DEFAULT session_user,
    backend_pid integer NOT NULL DEFAULT pg_backend_pid(),
    CONSTRAINT run_claim_pkey PRIMARY KEY (suite, run_id),
    CONSTRAINT run_claim_suite_known CHECK (suite IN ('takes-quality', 'work-quality'))
);

-- =============================================================================================
-- The by-month panel tables (issue 22; ledger tables: derived at completion, never written by a person)
-- =============================================================================================
-- One row per month key: a brain, a run trigger, the UTC month the runs started in (what the
-- dashboards' date range filters) and the UTC month they were recorded in (their tier clock's
-- month: a hot-tier reader reads the months wholly in the hot tier, whole_hot_months_from_v1),
-- and for runs the reviewer (a reviewer reads its own). Counters only, so months add up to any
-- span, and a span costs what its months cost: the number of rows is bounded by months x brains
-- x triggers (x reviewers for runs, x questions, x judges), not by the number of runs. The completion
-- trigger adds each run as it completes (brain_eval_by_month_complete_v1); the purge recounts the
-- months it took runs from (brain_eval_by_month_purge_v1); brain_eval_by_month_recount_v1 says
-- where a table differs from the rows (none, unless something went around the code role).
CREATE TABLE brain_eval_runs_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    reviewer_user_id         uuid             NOT NULL,
    runs                     bigint           NOT NULL,
    runs_pass                bigint           NOT NULL,
    runs_pass_with_notes     bigint           NOT NULL,
    runs_conditional         bigint           NOT NULL,
    runs_fail                bigint           NOT NULL,
    token_cost_usd           numeric          NOT NULL,
    reviewer_hours_spent     numeric          NOT NULL,
    runs_with_hours          bigint           NOT NULL,
    stale_questions          bigint           NOT NULL,
    stale_recognised         bigint           NOT NULL,
    runs_with_stale          bigint           NOT NULL,
    runs_all_recognised      bigint           NOT NULL,
    sev2_runs                bigint           NOT NULL,
    rating_1                 bigint           NOT NULL,
    rating_2                 bigint           NOT NULL,
    rating_3                 bigint           NOT NULL,
    rating_4                 bigint           NOT NULL,
    rating_5                 bigint           NOT NULL,
    CONSTRAINT brain_eval_runs_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, reviewer_user_id),
    CONSTRAINT brain_eval_runs_by_month_token_cost_usd_finite CHECK (finite_v1(token_cost_usd)),
    CONSTRAINT brain_eval_runs_by_month_reviewer_hours_spent_finite CHECK (finite_v1(reviewer_hours_spent))
);

CREATE TABLE brain_eval_questions_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    question_catalog_version varchar(32)      NOT NULL,
    question_id              varchar(16)      NOT NULL,
    runs_seen                bigint           NOT NULL,
    runs_failed              bigint           NOT NULL,
    CONSTRAINT brain_eval_questions_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, question_catalog_version, question_id)
);

CREATE TABLE brain_eval_agreement_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    judge_model              text             NOT NULL,
    unsupported_j0_r0        bigint           NOT NULL,
    unsupported_j0_r1        bigint           NOT NULL,
    unsupported_j0_r2        bigint           NOT NULL,
    unsupported_j1_r0        bigint           NOT NULL,
    unsupported_j1_r1        bigint           NOT NULL,
    unsupported_j1_r2        bigint           NOT NULL,
    unsupported_j2_r0        bigint           NOT NULL,
    unsupported_j2_r1        bigint           NOT NULL,
    unsupported_j2_r2        bigint           NOT NULL,
    diagnosis_j0_r0          bigint           NOT NULL,
    diagnosis_j0_r1          bigint           NOT NULL,
    diagnosis_j0_r2          bigint           NOT NULL,
    diagnosis_j1_r0          bigint           NOT NULL,
    diagnosis_j1_r1          bigint           NOT NULL,
    diagnosis_j1_r2          bigint           NOT NULL,
    diagnosis_j2_r0          bigint           NOT NULL,
    diagnosis_j2_r1          bigint           NOT NULL,
    diagnosis_j2_r2          bigint           NOT NULL,
    claims_pairs             bigint           NOT NULL,
    claims_abs_difference    bigint           NOT NULL,
    CONSTRAINT brain_eval_agreement_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, judge_model)
);

-- =============================================================================================
-- Tamper evidence (issue 18): the ledger's identity, the journal, sealed blocks, digests
-- =============================================================================================
-- One row: the id every digest and proof names, so a digest of one ledger is never checked
-- against another.
CREATE TABLE ledger_identity (
    ledger_id  uuid        NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_identity_pkey PRIMARY KEY (ledger_id)
);

-- One row per row version of a ledger table (or per statement and partition for captured queries,
-- and for multi-row deletes): what journal_row_v1, journal_deleted_v1 and journal_capture_v1 write,
-- and nothing else does. rows_root is the row's RFC 6962 leaf hash (several rows: the Merkle tree
-- hash of their leaves, each kept in row_leaves); column_fingerprints (hashtext of each non-NULL
-- column's canonical part) only help verify name the column that changed; txid is the writing
-- transaction's (txid_current(): 64 bits, as the purge log records it), which decides the block the
-- entry is sealed in (ledger_seal_v1).
-- No CHECK constraints: a journalled row version is written by a one-row statement, for which each
-- CHECK costs about 5 us of CPU to prepare (measured: four of them were a third of an entry's cost),
-- only the code role's functions write here, and verify checks every entry's shape itself.
CREATE TABLE ledger_journal (
    entry_id            bigint      GENERATED ALWAYS AS IDENTITY,
    table_name          text        NOT NULL,
    operation           text        NOT NULL,
    row_key             text        NOT NULL,
    row_count           integer     NOT NULL DEFAULT 1,
    rows_root           bytea       NOT NULL,
    row_leaves          bytea,
    column_fingerprints integer[],
    canon               text        NOT NULL DEFAULT 'canon-v1',
    txid                bigint      NOT NULL DEFAULT txid_current(),
    recorded_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_journal_pkey PRIMARY KEY (entry_id)
);

-- One row per sealed block: the entries of the transactions in [lo_txid, hi_txid), in entry order,
-- their leaves, their Merkle root, the header hash chained to the block before, and the ledger
-- root over every block hash so far (with the frontier of perfect subtrees the next seal extends).
CREATE TABLE ledger_block (
    block_id        bigint      NOT NULL,
    canon           text        NOT NULL,
    lo_txid         bigint      NOT NULL,
    hi_txid         bigint      NOT NULL,
    entry_count     bigint      NOT NULL,
    first_entry_id  bigint      NOT NULL,
    last_entry_id   bigint      NOT NULL,
    leaves          bytea       NOT NULL,
    merkle_root     bytea       NOT NULL,
    previous_hash   bytea       NOT NULL,
    block_hash      bytea       NOT NULL,
    ledger_root     bytea       NOT NULL,
    ledger_frontier bytea[]     NOT NULL,
    sealed_at       timestamptz NOT NULL,
    sealed_by       name        NOT NULL,
    CONSTRAINT ledger_block_pkey PRIMARY KEY (block_id),
    CONSTRAINT ledger_block_canon_known CHECK (canon = 'canon-v1'),
    CONSTRAINT ledger_block_number_positive CHECK (block_id >= 1),
    CONSTRAINT ledger_block_range_ordered CHECK (lo_txid < hi_txid),
    CONSTRAINT ledger_block_not_empty CHECK (entry_count >= 1 AND first_entry_id <= last_entry_id),
    CONSTRAINT ledger_block_a_leaf_per_entry CHECK (octet_length(leaves) = 32 * entry_count),
    CONSTRAINT ledger_block_hashes_are_sha256 CHECK (
        octet_length(merkle_root) = 32 AND octet_length(previous_hash) = 32 AND octet_length(block_hash) = 32
        AND octet_length(ledger_root) = 32)
);

-- Every digest taken (the digest itself is kept outside): doctor warns when none is recent.
CREATE TABLE ledger_digest (
    digest_id bigint      GENERATED ALWAYS AS IDENTITY,
    block_id  bigint      NOT NULL,
    taken_at  timestamptz NOT NULL DEFAULT now(),
    taken_by  name        NOT NULL DEFAULT session_user,
    CONSTRAINT ledger_digest_pkey PRIMARY KEY (digest_id),
    CONSTRAINT ledger_digest_block_fkey FOREIGN KEY (block_id) REFERENCES ledger_block (block_id)
);

-- =============================================================================================
-- Indexes (seed 002's six, then what joins, policies and the purge read)
-- =============================================================================================
CREATE INDEX brain_eval_log_brain_started_idx ON brain_eval_log (brain_under_test, started_at DESC);
CREATE INDEX brain_eval_log_decision_started_idx ON brain_eval_log (decision, started_at DESC);
CREATE INDEX brain_eval_log_system_prompt_hash_idx ON brain_eval_log (system_prompt_hash);
-- A reviewer's policies look up its own runs (hot ones): one index range, not a scan of every run.
CREATE INDEX brain_eval_log_reviewer_idx ON brain_eval_log (reviewer_user_id, created_at);
CREATE INDEX brain_eval_question_score_question_created_idx ON brain_eval_question_score (question_id, created_at DESC);
CREATE INDEX brain_eval_question_score_run_idx ON brain_eval_question_score (eval_run_id);
CREATE INDEX brain_eval_question_score_stale_fixture_idx ON brain_eval_question_score (uses_stale_fixture, staleness_correctly_recognized);
-- Foreign keys that the seed does not index but joins and the purge walk.
CREATE INDEX brain_eval_review_entry_question_idx ON brain_eval_review_entry (eval_run_id, question_id, entered_at);
CREATE INDEX brain_eval_suggestion_shown_reviewer_idx ON brain_eval_suggestion_shown (reviewer_user_id);
CREATE INDEX brain_eval_run_review_run_idx ON brain_eval_run_review (eval_run_id, created_at DESC);
CREATE INDEX brain_eval_log_import_idx ON brain_eval_log (import_id) WHERE import_id IS NOT NULL;
CREATE INDEX brain_analysis_log_prompt_hash_idx ON brain_analysis_log (system_prompt_hash);
-- The prompt comparison looks up each brain's latest production analysis: without this index
-- that is a scan of the whole (production-sized) analysis log.
CREATE INDEX brain_analysis_log_brain_produced_idx ON brain_analysis_log (brain, produced_at DESC);
-- --slug-prefix filters the corpus by LIKE 'prefix%'.
CREATE INDEX take_slug_prefix_idx ON take (slug text_pattern_ops);
-- trend reads completed runs newest first.
CREATE INDEX eval_takes_quality_runs_started_idx ON eval_takes_quality_runs (started_at DESC);
-- The export order, newest first (seed 001: created_at DESC, id DESC).
CREATE INDEX eval_candidates_export_idx ON eval_candidates (created_at DESC, id DESC);
-- Export with --tool.
CREATE INDEX eval_candidates_tool_export_idx ON eval_candidates (tool_name, created_at DESC, id DESC);
-- The purge walks keys by age.
CREATE INDEX eval_candidate_keys_created_idx ON eval_candidate_keys (created_at);
-- doctor counts the last 24 hours by reason.
CREATE INDEX eval_capture_failures_occurred_idx ON eval_capture_failures (occurred_at DESC, reason);
-- Production-vs-eval comparisons look a prompt hash up across brain versions.
CREATE INDEX brain_version_prompt_hash_idx ON brain_version (system_prompt_hash);
CREATE INDEX brain_eval_reference_shown_reviewer_idx ON brain_eval_reference_shown (reviewer_user_id);
CREATE INDEX brain_eval_reference_shown_run_created_idx ON brain_eval_reference_shown (run_created_at);
-- The previous snapshot and the history read a target's snapshots newest first.
CREATE INDEX eval_work_quality_snapshots_name_at_idx ON eval_work_quality_snapshots (name, at DESC);
-- `snapshot show RUN_ID` looks a run id up across targets.
CREATE INDEX eval_work_quality_snapshots_run_id_idx ON eval_work_quality_snapshots (run_id);
CREATE INDEX eval_work_quality_snapshots_prev_idx ON eval_work_quality_snapshots (prev_snapshot_id);
-- The tier policies, the plan and the purge read each table's tier clock.
CREATE INDEX brain_eval_log_created_idx ON brain_eval_log (created_at);
CREATE INDEX brain_eval_question_score_run_created_idx ON brain_eval_question_score (run_created_at);
CREATE INDEX brain_analysis_log_created_idx ON brain_analysis_log (created_at);
CREATE INDEX eval_takes_quality_runs_created_idx ON eval_takes_quality_runs (created_at);
CREATE INDEX eval_work_quality_snapshots_created_idx ON eval_work_quality_snapshots (created_at);
CREATE INDEX legal_hold_run_idx ON legal_hold (eval_run_id);
CREATE INDEX retention_purge_log_txid_idx ON retention_purge_log (txid);
-- Lookups by key for what the admission triggers ask of open runs, for imports by transaction and
-- for a brain's prompts.
CREATE INDEX brain_eval_log_open_prompt_idx ON brain_eval_log (system_prompt_hash) WHERE completed_at IS NULL;
CREATE INDEX brain_eval_log_open_reviewer_idx ON brain_eval_log (reviewer_user_id) WHERE completed_at IS NULL;
CREATE INDEX brain_eval_import_txid_idx ON brain_eval_import (txid);
CREATE INDEX brain_prompt_target_idx ON brain_prompt (target_id);
-- The ledger's identity is one row.
CREATE UNIQUE INDEX ledger_identity_one_row ON ledger_identity ((true));
-- Seals and verify read the journal by transaction id range; ids are handed out nearly in the order
-- rows are appended, so a BRIN index finds a range for almost nothing at each write.
CREATE INDEX ledger_journal_txid_idx ON ledger_journal USING brin (txid);
-- A hot-tier reader's months, and the purge's recount, find rows by their recording month.
CREATE INDEX brain_eval_runs_by_month_recorded_idx ON brain_eval_runs_by_month (recorded_month);
-- Prompt drift as a history looks up each brain's latest production analysis before each month's
-- end: production traffic alone, newest first (the eval analyses, 30 per run, are not in it).
CREATE INDEX brain_analysis_log_production_idx ON brain_analysis_log (brain, produced_at DESC)
    WHERE origin = 'production';
-- The work-quality panel reads the latest snapshots of every target newest first.
CREATE INDEX eval_work_quality_snapshots_at_idx ON eval_work_quality_snapshots (at DESC);

-- =============================================================================================
-- Functions shared by every suite: completion-once, windows, rubrics, callers
-- =============================================================================================
\ir ../sql/core/changed_columns_v1.sql
\ir ../sql/core/require_read_committed_v2.sql
\ir ../sql/core/require_fresh_snapshot_v1.sql
\ir ../sql/core/refuse_supplied_v1.sql
\ir ../sql/core/purge_horizon_v1.sql
\ir ../sql/core/hot_tier_v1.sql
-- Every window in UTC on the statement's clock (issue 17): no session TimeZone moves it, nor
-- does a transaction held open.
\ir ../sql/core/utc_ago_v1.sql
\ir ../sql/core/hot_tier_start_v1.sql
\ir ../sql/core/purge_horizon_at_v1.sql
\ir ../sql/core/backdating_window_v1.sql
\ir ../sql/core/guard_append_only_v1.sql
\ir ../sql/core/seal_tables_v2.sql
-- Migrations' own steps (the role they act as owns them): no one else runs them.
REVOKE EXECUTE ON PROCEDURE guard_append_only_v1(text[]), seal_tables_v2() FROM PUBLIC;
\ir ../triggers/core/complete_once_v1.sql
-- A run claim is an uncommitted row: committing one is refused.
\ir ../triggers/core/run_claim_commit_refused_v1.sql
\ir ../sql/core/runner_error_v1.sql
\ir ../sql/core/check_panel_v1.sql
\ir ../sql/core/require_open_v1.sql
\ir ../triggers/core/rubric_fingerprint_v1.sql
\ir ../sql/core/rubric_check_v2.sql
\ir ../triggers/core/rubric_admit_v2.sql
\ir ../triggers/core/rubric_activation_admit_v1.sql
\ir ../sql/core/active_rubric_v1.sql
\ir ../sql/core/rubric_admitted_v2.sql
\ir ../sql/core/judge_scores_v2.sql
\ir ../sql/core/caller_v1.sql
\ir ../triggers/core/legal_hold_release_admit_v1.sql
\ir ../sql/core/reviewer_id_of_v1.sql
-- What a definer helper may answer: only what its caller could read.
\ir ../sql/core/caller_reads_v1.sql
-- =============================================================================================
-- brain-eval: admission, reviewer independence, question rows, the decision
-- =============================================================================================
\ir ../triggers/brain_eval/prompt_tuner_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_log_admit_v2.sql
\ir ../triggers/brain_eval/brain_analysis_log_admit_v1.sql
-- Policy by the prompt (issue 17): who owns a prompt, its brains, its levers.
\ir ../sql/brain_eval/brain_prompt_claim_v1.sql
\ir ../sql/brain_eval/run_brains_v1.sql
\ir ../sql/brain_eval/brain_eval_levers_v1.sql
\ir ../sql/brain_eval/confidence_in_band_v1.sql
\ir ../sql/brain_eval/brain_eval_scores_v1.sql
\ir ../sql/brain_eval/criterion_met_v1.sql
\ir ../sql/brain_eval/shown_apart_v1.sql
\ir ../sql/brain_eval/criterion_miss_v1.sql
-- Automatic scores: one computation for harness and recorded runs.
\ir ../sql/brain_eval/brain_eval_claims_problem_v1.sql
\ir ../sql/brain_eval/brain_eval_answer_scores_v1.sql
\ir ../sql/brain_eval/lock_run_v1.sql
\ir ../sql/brain_eval/question_fields_needed_v1.sql
\ir ../sql/brain_eval/question_needs_v2.sql
\ir ../sql/brain_eval/question_passes_v2.sql
\ir ../sql/brain_eval/brain_eval_question_policy_v2.sql
\ir ../sql/brain_eval/brain_eval_decide_v2.sql
\ir ../triggers/brain_eval/brain_eval_log_decide_v2.sql
-- A question row: who may change what (the write trigger), then its verdict (the judge trigger,
-- a definer: no application role holds EXECUTE on the thresholds it reads).
\ir ../sql/brain_eval/brain_eval_question_verdict_v1.sql
\ir ../triggers/brain_eval/brain_eval_question_score_write_v4.sql
\ir ../triggers/brain_eval/brain_eval_question_score_judge_v1.sql
\ir ../triggers/brain_eval/brain_eval_review_trail_v1.sql
\ir ../triggers/brain_eval/brain_eval_review_entry_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_run_review_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_import_admit_v1.sql
-- =============================================================================================
-- brain-eval dashboards and audit views v1 (seed 002's six panels)
-- =============================================================================================
-- Each panel is a view over a SECURITY INVOKER SQL function (<panel>_rows_v1): a function called
-- from a view runs as the querying role, so RevOps (hot tier) and auditors (everything) each read
-- through their own row-level security on PostgreSQL 14 too, which has no security_invoker; the
-- functions are plain STABLE SQL, so the planner inlines them and filters push down. Without a SET
-- search_path (which would stop the inlining) their bodies name everything schema-qualified,
-- comparisons included (OPERATOR(pg_catalog.=)): an exact-type operator in a schema on the
-- reader's path would otherwise be picked over pg_catalog's, and run as the reader. Only
-- completed runs count. Where the
-- server has it (15+), the views also get security_invoker = true (belt and braces).
\ir ../sql/brain_eval/brain_quarterly_trend_rows_v1.sql
\ir ../sql/brain_eval/brain_quarterly_trend_v1.sql
\ir ../sql/brain_eval/most_failing_questions_rows_v1.sql
\ir ../sql/brain_eval/most_failing_questions_v1.sql
\ir ../sql/brain_eval/stale_fixture_pass_rate_rows_v1.sql
\ir ../sql/brain_eval/stale_fixture_pass_rate_v1.sql
\ir ../sql/brain_eval/reviewer_calibration_rows_v1.sql
\ir ../sql/brain_eval/reviewer_calibration_v1.sql
\ir ../sql/brain_eval/cost_per_run_rows_v1.sql
\ir ../sql/brain_eval/cost_per_run_v1.sql
\ir ../sql/brain_eval/prompt_drift_rows_v1.sql
\ir ../sql/brain_eval/prompt_drift_v1.sql
DO $invoker$
DECLARE
    v text;
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        FOREACH v IN ARRAY ARRAY['brain_quarterly_trend_v1', 'most_failing_questions_v1',
                                 'stale_fixture_pass_rate_v1', 'reviewer_calibration_v1',
                                 'cost_per_run_v1', 'prompt_drift_v1'] LOOP
            EXECUTE format('ALTER VIEW evalledger.%I SET (security_invoker = true)', v);
        END LOOP;
    END IF;
END
$invoker$;

-- =============================================================================================
-- takes-quality: admission, verdicts, the cycle verdict, the receipt
-- =============================================================================================
\ir ../triggers/takes_quality/takes_quality_run_admit_v2.sql
\ir ../triggers/takes_quality/takes_quality_verdict_admit_v2.sql
\ir ../sql/takes_quality/takes_quality_cycle_v1.sql
\ir ../sql/takes_quality/takes_quality_cycle_v2.sql
\ir ../sql/takes_quality/takes_quality_current_v1.sql
\ir ../triggers/takes_quality/takes_quality_run_identity_v1.sql
\ir ../triggers/takes_quality/takes_quality_verdict_sequence_v1.sql
\ir ../sql/takes_quality/takes_quality_receipt_v3.sql
\ir ../sql/takes_quality/takes_quality_complete_v1.sql
\ir ../triggers/takes_quality/takes_quality_run_decide_v2.sql
-- =============================================================================================
-- Eval capture: the window lock, dedupe, append-only, partitions, the NDJSON export
-- =============================================================================================
\ir ../triggers/capture/capture_window_lock_v2.sql
\ir ../triggers/capture/capture_dedupe_v1.sql
\ir ../triggers/capture/capture_refuse_change_v1.sql
\ir ../sql/capture/capture_purging_v1.sql
\ir ../sql/capture/capture_partition_expired_v2.sql
\ir ../sql/capture/capture_make_partition_v2.sql
\ir ../sql/capture/capture_ensure_partitions_v2.sql
\ir ../sql/capture/capture_export_bound_v2.sql
\ir ../sql/capture/eval_candidate_ndjson_row_v1.sql
\ir ../sql/capture/eval_candidate_ndjson_v1.sql
\ir ../sql/capture/eval_candidates_export_v1.sql
-- =============================================================================================
-- The brain-eval harness: catalogs, brain versions, answers, suggestions, the reference answer
-- =============================================================================================
\ir ../triggers/brain_eval/brain_eval_catalog_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_expand_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_question_admit_v1.sql
\ir ../triggers/brain_eval/brain_version_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_run_admit_v2.sql
\ir ../sql/brain_eval/brain_eval_open_harness_v2.sql
\ir ../sql/brain_eval/brain_eval_complete_v1.sql
\ir ../triggers/brain_eval/brain_eval_harness_answer_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_question_v1.sql
\ir ../triggers/brain_eval/brain_eval_judge_suggestion_admit_v2.sql
\ir ../sql/brain_eval/brain_eval_show_suggestions_v2.sql
\ir ../triggers/brain_eval/brain_eval_reference_shown_guard_v1.sql
\ir ../sql/brain_eval/brain_eval_show_reference_v2.sql
\ir ../sql/brain_eval/brain_eval_reference_v2.sql
-- =============================================================================================
-- work-quality: the policy, Compare and IsRegression, admission, completion, the history view
-- =============================================================================================
\ir ../sql/work_quality/work_quality_policy_v1.sql
\ir ../sql/work_quality/work_quality_compare_v1.sql
\ir ../sql/work_quality/work_quality_is_regression_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_admit_v2.sql
\ir ../triggers/work_quality/work_quality_import_verdicts_v1.sql
\ir ../triggers/work_quality/work_quality_verdict_admit_v2.sql
\ir ../sql/work_quality/work_quality_document_v1.sql
\ir ../sql/work_quality/work_quality_current_v1.sql
\ir ../sql/work_quality/work_quality_complete_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_identity_v1.sql
\ir ../triggers/work_quality/work_quality_verdict_sequence_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_decide_v3.sql
\ir ../sql/work_quality/work_quality_history_v1.sql
-- =============================================================================================
-- Retention: the tier clock, holds, what is due, the append-only guard, the plan and the purge
-- =============================================================================================
\ir ../triggers/core/retention_clock_v1.sql
\ir ../sql/core/retention_purging_v1.sql
\ir ../triggers/core/retention_purge_log_admit_v1.sql
-- UTC windows, READ COMMITTED, holds by the prompt, no snapshot chain pins (issue 17).
\ir ../sql/core/retention_held_v2.sql
\ir ../sql/core/retention_due_v2.sql
\ir ../triggers/core/refuse_change_v3.sql
\ir ../sql/core/retention_purge_v2.sql
\ir ../sql/core/retention_rows_v2.sql
\ir ../sql/core/retention_plan_v2.sql
-- =============================================================================================
-- The readers' side (issue 22): the by-month panel tables' upkeep, the panels v2 and the takes-quality trend
-- =============================================================================================
-- The completion trigger adds each run to its months as it completes; the purge recounts the months
-- it took runs from.
\ir ../sql/core/utc_month_v1.sql
\ir ../sql/core/whole_hot_months_from_v1.sql
\ir ../sql/core/cohen_kappa_v1.sql
\ir ../sql/core/weighted_kappa_v1.sql
\ir ../sql/core/agreement_measures_v1.sql
\ir ../sql/brain_eval/brain_eval_run_facts_v1.sql
\ir ../sql/brain_eval/brain_eval_question_facts_v1.sql
\ir ../sql/brain_eval/brain_eval_agreement_pairs_v1.sql
\ir ../sql/brain_eval/brain_eval_agreement_facts_v1.sql
\ir ../sql/brain_eval/brain_eval_by_month_add_v1.sql
\ir ../sql/brain_eval/brain_eval_by_month_recount_v1.sql
\ir ../triggers/brain_eval/brain_eval_by_month_complete_v1.sql
\ir ../triggers/brain_eval/brain_eval_by_month_purge_v1.sql
-- As in the _v1 panels, each view reads a SECURITY INVOKER function, so every reader reads
-- through its own row-level security on PostgreSQL 14 too. The functions over the by-month tables
-- set their search_path (they are aggregates of bounded size: nothing to push down); the per-run
-- ones are plain SQL with every operator schema-qualified, so a BI tool's filters push down.
-- Every _v1 view stays as it is: BI tools read them.
\ir ../sql/brain_eval/brain_trend_rows_v1.sql
\ir ../sql/brain_eval/most_failing_questions_rows_v2.sql
\ir ../sql/brain_eval/most_failing_questions_v2.sql
\ir ../sql/brain_eval/stale_fixture_pass_rate_rows_v2.sql
\ir ../sql/brain_eval/stale_fixture_pass_rate_v2.sql
\ir ../sql/brain_eval/stale_fixture_by_month_rows_v1.sql
\ir ../sql/brain_eval/stale_fixture_by_month_v1.sql
\ir ../sql/brain_eval/reviewer_calibration_rows_v2.sql
\ir ../sql/brain_eval/reviewer_calibration_v2.sql
\ir ../sql/brain_eval/cost_by_month_rows_v1.sql
\ir ../sql/brain_eval/cost_by_month_v1.sql
\ir ../sql/brain_eval/prompt_drift_rows_v2.sql
\ir ../sql/brain_eval/prompt_drift_v2.sql
\ir ../sql/brain_eval/judge_agreement_rows_v1.sql
\ir ../sql/brain_eval/judge_agreement_v1.sql
\ir ../sql/takes_quality/takes_quality_trend_rows_v1.sql
\ir ../sql/takes_quality/takes_quality_trend_v1.sql
DO $invoker$
DECLARE
    v text;
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        FOREACH v IN ARRAY ARRAY['most_failing_questions_v2', 'stale_fixture_pass_rate_v2', 'stale_fixture_by_month_v1',
                                 'reviewer_calibration_v2', 'cost_by_month_v1', 'prompt_drift_v2',
                                 'judge_agreement_v1', 'takes_quality_trend_v1'] LOOP
            EXECUTE format('ALTER VIEW evalledger.%I SET (security_invoker = true)', v);
        END LOOP;
    END IF;
END
$invoker$;

-- =============================================================================================
-- Tamper evidence (issue 18): canon-v1, the journal triggers, the seal, digests, the recompute
-- =============================================================================================
\ir ../sql/core/journal_refuse_v1.sql
\ir ../sql/core/journal_timestamp_v1.sql
\ir ../sql/core/journal_date_v1.sql
\ir ../sql/core/journal_number_v1.sql
\ir ../sql/core/journal_float_v1.sql
\ir ../sql/core/journal_exempt_v1.sql
\ir ../sql/core/journal_tables_v1.sql
\ir ../sql/core/journal_source_v1.sql
\ir ../sql/core/journal_leaf_v1.sql
\ir ../sql/core/ledger_merkle_root_v1.sql
\ir ../sql/core/journal_batch_v1.sql
\ir ../triggers/core/journal_row_v1.sql
\ir ../triggers/core/journal_deleted_v1.sql
\ir ../triggers/core/journal_capture_v1.sql
\ir ../sql/core/journal_attach_v1.sql
\ir ../sql/core/journal_coverage_v1.sql
\ir ../sql/core/ledger_entry_text_v1.sql
\ir ../sql/core/ledger_block_text_v1.sql
\ir ../sql/core/ledger_seal_v1.sql
\ir ../sql/core/ledger_digest_v1.sql
-- The recompute re-derives each suite's runs by the versions its triggers decide by.
\ir ../sql/core/ledger_recompute_brain_eval_v2.sql
\ir ../sql/core/ledger_recompute_takes_quality_v2.sql
\ir ../sql/core/ledger_recompute_work_quality_v2.sql
-- =============================================================================================
-- Triggers
-- =============================================================================================
-- Trigger names carry their firing order (PostgreSQL fires them alphabetically).
-- rubric_05_admit (the admission check) comes with the seed rubrics, below.
CREATE TRIGGER rubric_10_fingerprint BEFORE INSERT ON rubric
    FOR EACH ROW EXECUTE FUNCTION rubric_fingerprint_v1();
CREATE TRIGGER rubric_activation_10_admit BEFORE INSERT ON rubric_activation
    FOR EACH ROW EXECUTE FUNCTION rubric_activation_admit_v1();
CREATE TRIGGER legal_hold_release_10_admit BEFORE INSERT ON legal_hold_release
    FOR EACH ROW EXECUTE FUNCTION legal_hold_release_admit_v1();
CREATE TRIGGER prompt_tuner_10_admit BEFORE INSERT ON prompt_tuner
    FOR EACH ROW EXECUTE FUNCTION prompt_tuner_admit_v2();
CREATE TRIGGER brain_eval_log_10_admit BEFORE INSERT ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_admit_v2();
-- A changed computed column is refused as a value the caller may not supply.
CREATE TRIGGER brain_eval_log_10_guard_update BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('run', 'eval_run_id',
        '{aggregated_scores,hard_criteria_passed,soft_criteria_passed_count,decision,decision_rationale,token_cost_usd,reviewer_independence_verified,reviewer_hours_spent,calibration_notes}');
CREATE TRIGGER brain_eval_log_20_decide BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_decide_v2();
-- After the decision (brain_eval_log_20_decide, BEFORE) and before the journal (_90_).
CREATE TRIGGER brain_eval_log_30_by_month AFTER UPDATE OF completed_at ON brain_eval_log
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION brain_eval_by_month_complete_v1();
CREATE TRIGGER brain_eval_log_30_by_month_purge AFTER DELETE ON brain_eval_log
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION brain_eval_by_month_purge_v1();
CREATE TRIGGER brain_analysis_log_10_admit BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION brain_analysis_log_admit_v1();
CREATE TRIGGER brain_eval_question_score_10_write BEFORE INSERT OR UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v4();
CREATE TRIGGER brain_eval_question_score_15_judge BEFORE UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_judge_v1();
CREATE TRIGGER brain_eval_question_score_20_trail AFTER UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_review_trail_v1();
CREATE TRIGGER brain_eval_review_entry_10_admit BEFORE INSERT ON brain_eval_review_entry
    FOR EACH ROW EXECUTE FUNCTION brain_eval_review_entry_admit_v1();
CREATE TRIGGER brain_eval_run_review_10_admit BEFORE INSERT ON brain_eval_run_review
    FOR EACH ROW EXECUTE FUNCTION brain_eval_run_review_admit_v1();
CREATE TRIGGER brain_eval_import_10_admit BEFORE INSERT ON brain_eval_import
    FOR EACH ROW EXECUTE FUNCTION brain_eval_import_admit_v1();
CREATE TRIGGER eval_takes_quality_runs_10_admit BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_admit_v2();
CREATE TRIGGER eval_takes_quality_runs_10_guard_update BEFORE UPDATE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('takes-quality run', 'id');
CREATE TRIGGER eval_takes_quality_runs_15_identity BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_identity_v1();
CREATE TRIGGER eval_takes_quality_runs_20_decide BEFORE UPDATE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_decide_v2();
CREATE TRIGGER eval_takes_quality_judge_verdicts_05_sequence BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_sequence_v1();
CREATE TRIGGER eval_takes_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_admit_v2();
-- Statement-level: the window lock before any row is stamped (COPY included).
CREATE TRIGGER eval_candidates_05_window_lock BEFORE INSERT ON eval_candidates
    FOR EACH STATEMENT EXECUTE FUNCTION capture_window_lock_v2();
-- A capture_key written before makes the row a no-op (idempotent replay).
CREATE TRIGGER eval_candidates_10_dedupe BEFORE INSERT ON eval_candidates
    FOR EACH ROW EXECUTE FUNCTION capture_dedupe_v1();
CREATE TRIGGER brain_eval_catalog_10_admit BEFORE INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_admit_v1();
CREATE TRIGGER brain_eval_catalog_20_expand AFTER INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_expand_v1();
CREATE TRIGGER brain_eval_catalog_question_10_admit BEFORE INSERT ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_question_admit_v1();
CREATE TRIGGER brain_version_10_admit BEFORE INSERT ON brain_version
    FOR EACH ROW EXECUTE FUNCTION brain_version_admit_v2();
CREATE TRIGGER brain_eval_harness_run_10_admit BEFORE INSERT ON brain_eval_harness_run
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_run_admit_v2();
CREATE TRIGGER brain_eval_harness_answer_10_admit BEFORE INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_answer_admit_v2();
CREATE TRIGGER brain_eval_harness_answer_20_question AFTER INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_question_v1();
CREATE TRIGGER brain_eval_judge_suggestion_10_admit BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION brain_eval_judge_suggestion_admit_v2();
CREATE TRIGGER brain_eval_reference_shown_00_append_only BEFORE UPDATE OR DELETE ON brain_eval_reference_shown
    FOR EACH ROW EXECUTE FUNCTION brain_eval_reference_shown_guard_v1();
CREATE TRIGGER brain_eval_reference_shown_00_no_truncate BEFORE TRUNCATE ON brain_eval_reference_shown
    FOR EACH STATEMENT EXECUTE FUNCTION brain_eval_reference_shown_guard_v1();
CREATE TRIGGER eval_work_quality_snapshots_10_admit BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_admit_v2();
-- A changed computed column is refused as a value the caller may not supply.
CREATE TRIGGER eval_work_quality_snapshots_10_guard_update BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION complete_once_v1('work-quality snapshot', 'snapshot_id',
        '{mean_scores,disagreement,note,comparison,judges_cost_usd,snapshot_json,prev_snapshot_id,prev_run_id}');
CREATE TRIGGER eval_work_quality_snapshots_15_identity BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_identity_v1();
CREATE TRIGGER eval_work_quality_snapshots_20_decide BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_decide_v3();
CREATE TRIGGER eval_work_quality_snapshots_20_import_verdicts AFTER INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_import_verdicts_v1();
CREATE TRIGGER eval_work_quality_judge_verdicts_05_sequence BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_sequence_v1();
CREATE TRIGGER eval_work_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_admit_v2();
CREATE TRIGGER retention_purge_log_10_admit BEFORE INSERT ON retention_purge_log
    FOR EACH ROW EXECUTE FUNCTION retention_purge_log_admit_v1();
CREATE CONSTRAINT TRIGGER run_claim_90_commit_refused AFTER INSERT ON run_claim
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION run_claim_commit_refused_v1();
-- Every aging row carries the database's own recording time (a child row its parent's), which a
-- caller cannot supply: a tier policy is then a comparison of the row's own column.
CREATE TRIGGER brain_analysis_log_20_tier_clock BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER eval_capture_failures_20_tier_clock BEFORE INSERT ON eval_capture_failures
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER legal_hold_20_tier_clock BEFORE INSERT ON legal_hold
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER brain_eval_harness_run_20_tier_clock BEFORE INSERT ON brain_eval_harness_run
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER brain_eval_harness_answer_20_tier_clock BEFORE INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER brain_eval_judge_suggestion_20_tier_clock BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER eval_takes_quality_judge_verdicts_20_tier_clock BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER eval_work_quality_judge_verdicts_20_tier_clock BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

-- Append-only: every UPDATE a table does not explicitly allow (a run's or snapshot's completion),
-- every DELETE but the retention purge's (refuse_change_v3: inside retention_purge_v2, past the
-- horizon in UTC, under no hold, a brain's hold by the prompt), and every TRUNCATE are refused, for
-- every role. The journal's own tables and the run claims are never due (retention_due_v2 knows no
-- clock of theirs), so every change of theirs is refused. Row triggers are cloned
-- onto partitions; TRUNCATE triggers are not, so capture_ensure_partitions_v2 gives each capture
-- partition its own (capture_refuse_change_v1: capture rows leave with their partition).
CALL guard_append_only_v1(ARRAY[
    'target:UPDATE OR DELETE:refuse_change_v3', 'rubric:UPDATE OR DELETE:refuse_change_v3',
    'rubric_activation:UPDATE OR DELETE:refuse_change_v3',
    'reviewer:UPDATE OR DELETE:refuse_change_v3', 'prompt_tuner:UPDATE OR DELETE:refuse_change_v3',
    'brain_analysis_log:UPDATE OR DELETE:refuse_change_v3', 'brain_eval_log:DELETE:refuse_change_v3',
    'brain_eval_question_score:DELETE:refuse_change_v3', 'legal_hold:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_review_entry:UPDATE OR DELETE:refuse_change_v3', 'brain_eval_run_review:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_import:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_suggestion_shown:UPDATE OR DELETE:refuse_change_v3',
    'legal_hold_release:UPDATE OR DELETE:refuse_change_v3',
    'take:UPDATE OR DELETE:refuse_change_v3', 'eval_takes_quality_runs:DELETE:refuse_change_v3',
    'eval_takes_quality_judge_verdicts:UPDATE OR DELETE:refuse_change_v3',
    'eval_candidates:UPDATE OR DELETE:capture_refuse_change_v1',
    'eval_candidate_keys:UPDATE OR DELETE:refuse_change_v3',
    'eval_capture_failures:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_catalog:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_catalog_question:UPDATE OR DELETE:refuse_change_v3',
    'brain_version:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_harness_run:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_harness_answer:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_judge_suggestion:UPDATE OR DELETE:refuse_change_v3',
    'eval_work_quality_snapshots:DELETE:refuse_change_v3',
    'eval_work_quality_judge_verdicts:UPDATE OR DELETE:refuse_change_v3',
    'retention_purge_log:UPDATE OR DELETE:refuse_change_v3',
    'brain_prompt:UPDATE OR DELETE:refuse_change_v3',
    'ledger_identity:UPDATE OR DELETE:refuse_change_v3', 'ledger_journal:UPDATE OR DELETE:refuse_change_v3',
    'ledger_block:UPDATE OR DELETE:refuse_change_v3', 'ledger_digest:UPDATE OR DELETE:refuse_change_v3',
    'run_claim:UPDATE OR DELETE:refuse_change_v3']);

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- Every table: row-level security enabled and FORCEd (the code role that owns it is held to the
-- policies too: its definer functions see everything through *_code_all, the owner role through
-- *_owner_all), and every trigger ENABLE ALWAYS (with session_replication_role = replica an
-- ordinary trigger is skipped): seal_tables_v2, once every table and trigger exists (below, before
-- the journal). The owner role keeps only the privileges it uses (issue 17): SELECT everywhere
-- (the seal's), INSERT on the registries it maintains and the holds it places and releases, and
-- no UPDATE, DELETE or TRUNCATE, which the triggers refused anyway but which let it LOCK any table
-- ACCESS EXCLUSIVE and stall every reader; no INSERT where only the code role or the runner writes
-- (so it supplies no tier clock, no captured row's created_at or id). Owning nothing, it can alter
-- nothing.
GRANT INSERT ON target, rubric, reviewer, prompt_tuner, brain_version, brain_eval_catalog, brain_eval_import,
    legal_hold, legal_hold_release TO evalledger_owner;

-- Reference data every reading role needs.
CREATE POLICY target_read ON target FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY rubric_read ON rubric FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY rubric_activation_read ON rubric_activation FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON target, rubric, rubric_activation
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- The owner role registers rubrics but activates none: that is a migration's, audited step.

-- The runner writes runs, question rows and analyses, reads them back, and completes runs (brain_eval_complete_v1: no UPDATE grant).
CREATE POLICY brain_eval_log_runner ON brain_eval_log TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
CREATE POLICY brain_eval_question_score_runner ON brain_eval_question_score TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
CREATE POLICY brain_analysis_log_runner ON brain_analysis_log TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
CREATE POLICY reviewer_runner ON reviewer FOR SELECT TO evalledger_runner USING (true);
GRANT SELECT, INSERT ON brain_eval_log, brain_eval_question_score, brain_analysis_log TO evalledger_runner;
GRANT SELECT ON reviewer TO evalledger_runner;

-- A reviewer sees its own runs, their question rows and the analyses behind them, and scores
-- the reviewer-scored fields of those question rows.
CREATE POLICY brain_eval_log_reviewer ON brain_eval_log FOR SELECT TO evalledger_reviewer
    USING (created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
-- A question row carries its run's reviewer (run_reviewer_user_id, issue 20): one comparison per
-- row whatever the history, where collecting the reviewer's runs cost every statement, the one-row
-- UPDATE of a score among them, a scan of its history twice.
CREATE POLICY brain_eval_question_score_reviewer ON brain_eval_question_score TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND run_reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)))
    WITH CHECK (run_created_at >= evalledger.hot_tier_start_v1()
                AND run_reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
CREATE POLICY brain_analysis_log_reviewer ON brain_analysis_log FOR SELECT TO evalledger_reviewer
    USING (created_at >= evalledger.hot_tier_start_v1()
           AND analysis_id = ANY (ARRAY(SELECT q.brain_analysis_id FROM evalledger.brain_eval_question_score q)));
CREATE POLICY reviewer_self ON reviewer FOR SELECT TO evalledger_reviewer USING (role_name = current_user);
GRANT SELECT ON brain_eval_log, brain_analysis_log, reviewer TO evalledger_reviewer;
-- Every column of its question rows but question_passed (issue 17, class 8): a reviewer who read
-- each verdict as it scored could learn a question's thresholds by scoring, reading and rolling
-- back, with nothing on the record. The run's decision, once completed, is on brain_eval_log.
GRANT SELECT (question_score_id, eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture,
              citation_rate, hallucinations_detected, total_claims, staleness_correctly_recognized,
              diagnosis_accuracy_score, lever_mapping_violations, confidence_distribution,
              narrative_coherence_rating, reviewer_comments, created_at, run_created_at, run_reviewer_user_id)
    ON brain_eval_question_score TO evalledger_reviewer;
GRANT UPDATE (hallucinations_detected, total_claims, staleness_correctly_recognized, diagnosis_accuracy_score,
               narrative_coherence_rating, reviewer_comments)
    ON brain_eval_question_score TO evalledger_reviewer;
-- The reviewer reads the trail of its own entries and signs off its own runs (hours, notes).
CREATE POLICY brain_eval_review_entry_reviewer ON brain_eval_review_entry FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
CREATE POLICY brain_eval_run_review_reviewer ON brain_eval_run_review TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user))) WITH CHECK (true);
GRANT SELECT ON brain_eval_review_entry, brain_eval_run_review TO evalledger_reviewer;
-- Table-wide INSERT: every column but the run, hours and notes is the admit trigger's.
GRANT INSERT ON brain_eval_run_review TO evalledger_reviewer;
-- The trail is written by its trigger alone, and what was shown by its function alone: not even
-- the owner role inserts into them (it holds no INSERT there).
CREATE POLICY brain_eval_suggestion_shown_reviewer ON brain_eval_suggestion_shown FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
GRANT SELECT ON brain_eval_suggestion_shown TO evalledger_reviewer;

-- Hot-only reads: every role but the auditor reads an aging row only while its tier clock (the
-- database's own recording time) is in the hot tier (hot_tier_v1), a plain comparison of the row's
-- own column; a reviewer's own-run test reads its runs once per statement (an InitPlan over
-- brain_eval_log, never a lookup per row). RevOps reads the hot tier; auditors read everything the
-- ledger retains.
CREATE POLICY brain_eval_log_revops ON brain_eval_log FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_question_score_revops ON brain_eval_question_score FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_analysis_log_revops ON brain_analysis_log FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_log_auditor ON brain_eval_log FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_question_score_auditor ON brain_eval_question_score FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_analysis_log_auditor ON brain_analysis_log FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY legal_hold_auditor ON legal_hold FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_review_entry_revops ON brain_eval_review_entry FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_run_review_revops ON brain_eval_run_review FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_suggestion_shown_revops ON brain_eval_suggestion_shown FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_review_entry_auditor ON brain_eval_review_entry FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_run_review_auditor ON brain_eval_run_review FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_import_auditor ON brain_eval_import FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_suggestion_shown_auditor ON brain_eval_suggestion_shown FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY legal_hold_release_auditor ON legal_hold_release FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_log, brain_eval_question_score, brain_analysis_log TO evalledger_revops, evalledger_auditor;
GRANT SELECT ON legal_hold, legal_hold_release, brain_eval_import, brain_eval_suggestion_shown TO evalledger_auditor;
GRANT SELECT ON brain_eval_review_entry, brain_eval_run_review TO evalledger_revops, evalledger_auditor;
GRANT SELECT ON brain_eval_suggestion_shown TO evalledger_revops;

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON brain_quarterly_trend_v1, most_failing_questions_v1, stale_fixture_pass_rate_v1,
    reviewer_calibration_v1, cost_per_run_v1, prompt_drift_v1 FROM PUBLIC;
GRANT SELECT ON brain_quarterly_trend_v1, most_failing_questions_v1, stale_fixture_pass_rate_v1,
    reviewer_calibration_v1, cost_per_run_v1, prompt_drift_v1
    TO evalledger_revops, evalledger_auditor;
-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION brain_quarterly_trend_rows_v1(), most_failing_questions_rows_v1(),
    stale_fixture_pass_rate_rows_v1(), reviewer_calibration_rows_v1(), cost_per_run_rows_v1(),
    prompt_drift_rows_v1() TO evalledger_revops, evalledger_auditor;

-- The runner loads the corpus, starts runs, records verdicts, completes runs, and reads them
-- back; it writes only the columns it observes (the rest are the database's).
CREATE POLICY take_runner ON take TO evalledger_runner USING (true) WITH CHECK (true);
CREATE POLICY eval_takes_quality_runs_runner ON eval_takes_quality_runs TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
CREATE POLICY eval_takes_quality_judge_verdicts_runner ON eval_takes_quality_judge_verdicts TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON take, eval_takes_quality_runs, eval_takes_quality_judge_verdicts TO evalledger_runner;
GRANT INSERT (take_sha, slug, kind, holder, weight, since, source, claim) ON take TO evalledger_runner;
-- No started_at (the database's); the runner says how a run is judged and which judging it is.
GRANT INSERT (rubric_id, target_id, corpus_source, corpus_path, slug_prefix, sample_limit, seed,
              n_takes, corpus_sha8, prompt_sha8, models, judges, rerun) ON eval_takes_quality_runs TO evalledger_runner;
-- A call is recorded as it starts (call_started, with its estimated cost), its answer after.
GRANT INSERT (run_id, cycle, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
              input_tokens, output_tokens, cost_usd, latency_ms, attempts, call_started, estimated_cost_usd)
    ON eval_takes_quality_judge_verdicts TO evalledger_runner;

-- RevOps reads the hot tier; auditors read everything. Agents: nothing.
CREATE POLICY take_revops ON take FOR SELECT TO evalledger_revops USING (loaded_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_takes_quality_runs_revops ON eval_takes_quality_runs FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_takes_quality_judge_verdicts_revops ON eval_takes_quality_judge_verdicts FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY take_auditor ON take FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY eval_takes_quality_runs_auditor ON eval_takes_quality_runs FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY eval_takes_quality_judge_verdicts_auditor ON eval_takes_quality_judge_verdicts FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON take, eval_takes_quality_runs, eval_takes_quality_judge_verdicts TO evalledger_revops, evalledger_auditor;

-- The runner captures (INSERT of the input columns only: id and created_at are the database's)
-- and exports; it records failures. Nobody but the owner touches eval_candidate_keys.
CREATE POLICY eval_candidates_runner_read ON eval_candidates FOR SELECT TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_candidates_runner_insert ON eval_candidates FOR INSERT TO evalledger_runner WITH CHECK (true);
CREATE POLICY eval_capture_failures_runner_read ON eval_capture_failures FOR SELECT TO evalledger_runner
    USING (recorded_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_capture_failures_runner_insert ON eval_capture_failures FOR INSERT TO evalledger_runner WITH CHECK (true);
GRANT SELECT ON eval_candidates, eval_capture_failures TO evalledger_runner;
GRANT INSERT (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids, expand_enabled, detail,
              detail_resolved, vector_enabled, expansion_applied, latency_ms, remote, job_id, subagent_id,
              capture_key) ON eval_candidates TO evalledger_runner;
GRANT INSERT (failure_key, reason, occurred_at, tool_name, sqlstate, detail, capture_key)
    ON eval_capture_failures TO evalledger_runner;

-- RevOps reads the hot tier; auditors read everything retained. Agents: nothing.
CREATE POLICY eval_candidates_revops ON eval_candidates FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_capture_failures_revops ON eval_capture_failures FOR SELECT TO evalledger_revops
    USING (recorded_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_candidates_auditor ON eval_candidates FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY eval_capture_failures_auditor ON eval_capture_failures FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_candidates, eval_capture_failures TO evalledger_revops, evalledger_auditor;

-- Reference data, as target and rubric: the runner asks the questions and calls the brain, the
-- reviewer scores against the criteria, RevOps and auditors read. Brain agents and production
-- users: nothing.
CREATE POLICY brain_eval_catalog_read ON brain_eval_catalog FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY brain_eval_catalog_question_read ON brain_eval_catalog_question FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY brain_version_read ON brain_version FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_version TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT SELECT ON brain_eval_catalog, brain_eval_catalog_question
    TO evalledger_runner, evalledger_revops, evalledger_auditor;
-- A reviewer reads a catalog's questions, texts and sources, but not their pass criteria (the
-- expected findings among them) nor the catalog document that holds them too: those come through
-- brain_eval_reference_v2, after the blind score.
GRANT SELECT (catalog_version, document_sha256, question_count, source_file, loaded_at)
    ON brain_eval_catalog TO evalledger_reviewer;
GRANT SELECT (catalog_version, position, question_id, question_type, question_text, sources, uses_stale_fixture,
              created_at)
    ON brain_eval_catalog_question TO evalledger_reviewer;

-- Harness runs as seed 002's role table has runs: the runner inserts (the columns it observes)
-- and reads; a reviewer reads its own runs' records; RevOps the hot tier; auditors everything.
CREATE POLICY brain_eval_harness_run_runner ON brain_eval_harness_run TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
CREATE POLICY brain_eval_harness_answer_runner ON brain_eval_harness_answer TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON brain_eval_harness_run, brain_eval_harness_answer TO evalledger_runner;
GRANT INSERT (eval_run_id, brain_version_id, catalog_version, question_ids, contracts, answers)
    ON brain_eval_harness_run TO evalledger_runner;
GRANT INSERT (eval_run_id, question_id, analysis_id, recorded, contract_error, latency_ms, attempts)
    ON brain_eval_harness_answer TO evalledger_runner;
-- A reviewer's: its own runs' (brain_eval_log's own policies decide), in the hot tier.
CREATE POLICY brain_eval_harness_run_readers ON brain_eval_harness_run FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));
CREATE POLICY brain_eval_harness_run_revops ON brain_eval_harness_run FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_harness_run_auditor ON brain_eval_harness_run FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_harness_answer_readers ON brain_eval_harness_answer FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));
CREATE POLICY brain_eval_harness_answer_revops ON brain_eval_harness_answer FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_harness_answer_auditor ON brain_eval_harness_answer FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_harness_run, brain_eval_harness_answer
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
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
-- A reviewer reads the brain's answers in its own harness runs before any question row points at
-- them (the baseline's policy shows a reviewer only analyses its question rows point at).
CREATE POLICY brain_analysis_log_reviewer_harness ON brain_analysis_log FOR SELECT TO evalledger_reviewer
    USING (created_at >= evalledger.hot_tier_start_v1()
           AND analysis_id = ANY (ARRAY(SELECT a.analysis_id FROM evalledger.brain_eval_harness_answer a)));

-- What a reviewer was shown of the reference answer: the show function alone inserts it (the
-- guard refuses the rest; the owner role holds no INSERT there).

-- Who reads what was shown: the reviewer its own (hot tier), RevOps the hot tier, auditors everything.
CREATE POLICY brain_eval_reference_shown_reviewer ON brain_eval_reference_shown FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
CREATE POLICY brain_eval_reference_shown_revops ON brain_eval_reference_shown FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_reference_shown_auditor ON brain_eval_reference_shown FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_reference_shown TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- The runner starts snapshots, records verdicts, completes runs, imports history files and reads
-- them back; it writes only the columns it observes (the rest are the database's).
CREATE POLICY eval_work_quality_snapshots_runner ON eval_work_quality_snapshots TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
CREATE POLICY eval_work_quality_judge_verdicts_runner ON eval_work_quality_judge_verdicts TO evalledger_runner
    USING (snapshot_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON eval_work_quality_snapshots, eval_work_quality_judge_verdicts TO evalledger_runner;
GRANT INSERT (origin, rubric_id, kind, name, persona, run_id, bot_family, bot_version, iterion_sha, task, outcome,
              evidence_digest, evidence_sha256, cost_usd, tokens, duration_ms, iterations, model_calls, retries,
              models, snapshot_json, source_file, judges)
    ON eval_work_quality_snapshots TO evalledger_runner;
GRANT INSERT (snapshot_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
              input_tokens, output_tokens, cost_usd, latency_ms, attempts, call_started, estimated_cost_usd)
    ON eval_work_quality_judge_verdicts TO evalledger_runner;

-- RevOps reads the hot tier; auditors read everything. Agents: nothing.
CREATE POLICY eval_work_quality_snapshots_revops ON eval_work_quality_snapshots FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_work_quality_judge_verdicts_revops ON eval_work_quality_judge_verdicts FOR SELECT TO evalledger_revops
    USING (snapshot_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY eval_work_quality_snapshots_auditor ON eval_work_quality_snapshots FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY eval_work_quality_judge_verdicts_auditor ON eval_work_quality_judge_verdicts FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON eval_work_quality_snapshots, eval_work_quality_judge_verdicts TO evalledger_revops, evalledger_auditor;

-- The history view: RevOps and auditors, each under its own policies (a function a view calls is
-- executed with the reader's rights, so the reader needs EXECUTE on it and on what it calls).
REVOKE ALL ON work_quality_history_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_history_v1 TO evalledger_revops, evalledger_auditor;

-- The purge log: auditors read it.
CREATE POLICY retention_purge_log_auditor ON retention_purge_log FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON retention_purge_log TO evalledger_auditor;

-- The prompts each brain owns: reference data, as brain_version.
CREATE POLICY brain_prompt_read ON brain_prompt FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_prompt TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- A run claim is the runner's (run_claim_commit_refused_v1 keeps it uncommitted).
CREATE POLICY run_claim_runner ON run_claim TO evalledger_runner USING (true) WITH CHECK (true);
GRANT INSERT (suite, run_id) ON run_claim TO evalledger_runner;

-- The journal's own tables: only the code role writes them (through its functions); the owner role
-- reads them (verify reads as the owner role, the one application role that reads every ledger
-- table, prompt_tuner included); the auditor reads them too, but for prompt_tuner's entries, whose
-- keys would say who tunes which brain.
GRANT SELECT ON ledger_identity, ledger_journal, ledger_block, ledger_digest TO evalledger_auditor;
CREATE POLICY ledger_identity_auditor ON ledger_identity FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY ledger_journal_auditor ON ledger_journal FOR SELECT TO evalledger_auditor
    USING (table_name <> 'prompt_tuner');
CREATE POLICY ledger_block_auditor ON ledger_block FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY ledger_digest_auditor ON ledger_digest FOR SELECT TO evalledger_auditor USING (true);

-- The by-month panel tables: only the code role writes them (through its functions); the owner
-- role reads them (the seal's SELECT) and nothing more.
-- The auditor reads every month; RevOps the months wholly in the hot tier; a reviewer its own
-- runs' months wholly in the hot tier, in the runs table (the one keyed by reviewer). The
-- questions and agreement tables are not a reviewer's: they count other reviewers' runs, and the
-- agreement counts drafts a reviewer's policy on brain_eval_judge_suggestion would not show it.
CREATE POLICY brain_eval_runs_by_month_auditor ON brain_eval_runs_by_month FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_runs_by_month_revops ON brain_eval_runs_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
CREATE POLICY brain_eval_runs_by_month_reviewer ON brain_eval_runs_by_month FOR SELECT TO evalledger_reviewer
    USING (recorded_month >= evalledger.whole_hot_months_from_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
CREATE POLICY brain_eval_questions_by_month_auditor ON brain_eval_questions_by_month FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY brain_eval_questions_by_month_revops ON brain_eval_questions_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
CREATE POLICY brain_eval_agreement_by_month_auditor ON brain_eval_agreement_by_month FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY brain_eval_agreement_by_month_revops ON brain_eval_agreement_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
GRANT SELECT ON brain_eval_runs_by_month TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT SELECT ON brain_eval_questions_by_month, brain_eval_agreement_by_month TO evalledger_revops, evalledger_auditor;
-- The auditor reads the reviewer registry: who reviewed (display names) is part of the audit.
-- RevOps reads reviewer ids (the runs'); a reviewer reads itself (reviewer_self).
CREATE POLICY reviewer_auditor ON reviewer FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON reviewer TO evalledger_auditor;

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON most_failing_questions_v2, stale_fixture_pass_rate_v2, stale_fixture_by_month_v1, reviewer_calibration_v2,
    cost_by_month_v1, prompt_drift_v2, judge_agreement_v1, takes_quality_trend_v1 FROM PUBLIC;
GRANT SELECT ON stale_fixture_pass_rate_v2, stale_fixture_by_month_v1, reviewer_calibration_v2, cost_by_month_v1
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT SELECT ON most_failing_questions_v2, prompt_drift_v2, judge_agreement_v1, takes_quality_trend_v1
    TO evalledger_revops, evalledger_auditor;

-- Functions: nothing is PUBLIC. Roles get what their policies and triggers call on their behalf,
-- and what they call themselves: the runner a takes-quality cycle's verdict (the early stop), the
-- current verdicts and the receipt of a run still open, the capture partitions ahead, and the
-- export with the readers. No application role executes a question's thresholds
-- (brain_eval_question_policy_v2, question_passes_v2, brain_eval_question_verdict_v1): the judge
-- trigger, a definer, reads them (issue 17, class 8).
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA evalledger FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lock_run_v1(uuid), question_needs_v2(brain_eval_question_score, jsonb, text[]),
    question_fields_needed_v1(text, boolean, integer, integer, boolean, numeric, integer, integer, jsonb, text[]),
    run_brains_v1(varchar, varchar), brain_eval_levers_v1(varchar, varchar, jsonb), brain_eval_claims_problem_v1(jsonb),
    brain_eval_answer_scores_v1(jsonb, jsonb, jsonb, text[], boolean),
    refuse_supplied_v1(text, jsonb), changed_columns_v1(jsonb, jsonb, text[])
    TO evalledger_runner, evalledger_reviewer;
GRANT EXECUTE ON FUNCTION reviewer_id_of_v1(name) TO evalledger_reviewer;
-- Every role a tier policy or a window binds evaluates the windows itself.
GRANT EXECUTE ON FUNCTION utc_ago_v1(interval), hot_tier_v1(), hot_tier_start_v1(), purge_horizon_v1(),
    purge_horizon_at_v1(), backdating_window_v1()
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
-- A CHECK's function runs with the writer's rights: every role that writes a ledger row needs these.
GRANT EXECUTE ON FUNCTION finite_v1(numeric), json_numbers_v1(jsonb)
    TO evalledger_runner, evalledger_reviewer, evalledger_owner, evalledger_retention;
GRANT EXECUTE ON FUNCTION takes_quality_cycle_v2(bigint, integer), capture_ensure_partitions_v2(integer)
    TO evalledger_runner;
-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_current_v1(bigint), work_quality_current_v1(bigint),
    takes_quality_receipt_v3(bigint), eval_candidate_ndjson_v1(eval_candidates),
    eval_candidates_export_v1(timestamptz, timestamptz, text, bigint), capture_distinct_v1(text[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor;
-- The owner role runs what the writing roles run (its writes pass the same triggers) and nothing
-- more: it cannot purge captures, nor redefine anything (the code role owns every function).
DO $owner_execute$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = 'evalledger'::regnamespace
                AND (has_function_privilege('evalledger_runner', p.oid, 'EXECUTE')
                     OR has_function_privilege('evalledger_reviewer', p.oid, 'EXECUTE')) LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO evalledger_owner', f);
    END LOOP;
END
$owner_execute$;
-- Completion is the runner's, through functions (no role holds UPDATE on a run table, which would
-- let it lock the runs' rows: issue 17, class 7); granted after the owner role's copy of the
-- runner's functions, since the owner role completes nothing.
GRANT EXECUTE ON FUNCTION brain_eval_complete_v1(uuid, timestamptz), takes_quality_complete_v1(bigint),
    work_quality_complete_v1(bigint) TO evalledger_runner;
-- An export's bound is a lock only writers and readers of captures take: not the owner role's.
GRANT EXECUTE ON FUNCTION capture_export_bound_v2() TO evalledger_runner, evalledger_revops, evalledger_auditor;
-- The owner role registers rubrics, and the rubric trigger (its own rights) validates them.
GRANT EXECUTE ON FUNCTION rubric_check_v2(text, jsonb) TO evalledger_owner;
-- The owner role releases holds; the release trigger (its own rights) stamps them.
GRANT EXECUTE ON FUNCTION legal_hold_release_admit_v1() TO evalledger_owner;
-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_policy_v1(), work_quality_compare_v1(jsonb, jsonb, text),
    work_quality_is_regression_v1(jsonb, numeric)
    TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
GRANT EXECUTE ON FUNCTION work_quality_history_rows_v1() TO evalledger_revops, evalledger_auditor;
-- The reviewer asks to see suggestions, and the reference answer after its numbers are saved,
-- through these functions alone (blind review).
GRANT EXECUTE ON FUNCTION brain_eval_show_suggestions_v2(uuid, text), brain_eval_show_reference_v2(uuid, text),
    brain_eval_reference_v2(uuid, text) TO evalledger_reviewer;
-- The purge is the retention role's alone; the plan (counts only) also the auditor's and the owner's.
GRANT EXECUTE ON FUNCTION retention_purge_v2() TO evalledger_retention;
GRANT EXECUTE ON FUNCTION retention_plan_v2() TO evalledger_retention, evalledger_auditor, evalledger_owner;
-- Completion (the runner), the purge (the retention role), digests (the auditor, the owner) seal.
GRANT EXECUTE ON FUNCTION ledger_seal_v1(double precision)
    TO evalledger_runner, evalledger_owner, evalledger_retention, evalledger_auditor;
GRANT EXECUTE ON FUNCTION ledger_digest_v1(double precision), journal_coverage_v1(), journal_exempt_v1(text),
    journal_tables_v1() TO evalledger_owner, evalledger_auditor;
-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION whole_hot_months_from_v1(), utc_month_v1(timestamptz), criterion_met_v1(jsonb, numeric),
    brain_trend_rows_v1(text, date, date, text, integer),
    stale_fixture_pass_rate_rows_v2(text, date, date, text, integer),
    stale_fixture_by_month_rows_v1(text, date, date, text),
    reviewer_calibration_rows_v2(text, date, date, text, boolean),
    cost_by_month_rows_v1(text, date, date, text)
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION most_failing_questions_rows_v2(text, date, date, text), prompt_drift_rows_v2(text, date, date, text),
    cohen_kappa_v1(bigint[]), weighted_kappa_v1(bigint[]),
    agreement_measures_v1(bigint[], bigint[], bigint, bigint),
    brain_eval_agreement_pairs_v1(uuid[]), brain_eval_agreement_facts_v1(uuid[]),
    judge_agreement_rows_v1(text, date, date, text, boolean),
    takes_quality_trend_rows_v1(text, date, date, integer)
    TO evalledger_revops, evalledger_auditor;
-- The recount reads the whole ledger: an audit check, the auditor's and the owner role's.
GRANT EXECUTE ON FUNCTION brain_eval_by_month_recount_v1() TO evalledger_auditor, evalledger_owner;

-- This month and the next three exist from the start; writers extend the range as they run.
SELECT capture_ensure_partitions_v2(3);

-- =============================================================================================
-- The BI contract explains itself: a comment with its unit on every column of every view
-- =============================================================================================
-- The _v1 views' and the panel tables' columns get comments here (the _v2 views' come with their
-- files). Names carry units: *_rate 0-1, *_pct 0-100, *_usd US dollars, *_hours hours.
COMMENT ON COLUMN brain_quarterly_trend_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_quarterly_trend_v1.recency_rank IS 'Rank, 1 = the brain''s latest completed quarterly run, up to 8.';
COMMENT ON COLUMN brain_quarterly_trend_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN brain_quarterly_trend_v1.quarter IS 'Text YYYY-QN: the UTC quarter the run started in.';
COMMENT ON COLUMN brain_quarterly_trend_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN brain_quarterly_trend_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN brain_quarterly_trend_v1.model_id IS 'The model the brain ran on, e.g. claude-sonnet-4-6.';
COMMENT ON COLUMN brain_quarterly_trend_v1.system_prompt_hash IS 'SHA-256 hex of the brain''s system prompt.';
COMMENT ON COLUMN brain_quarterly_trend_v1.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN brain_quarterly_trend_v1.decision IS 'pass, pass_with_notes, conditional or fail, as the database decided.';
COMMENT ON COLUMN brain_quarterly_trend_v1.citation_rate IS 'Rate, 0-1: the mean of the questions'' citation_rate (share of numerical claims citing a source given). Exact; round for display.';
COMMENT ON COLUMN brain_quarterly_trend_v1.hallucination_rate IS 'Rate, 0-1: hallucinations_detected / total_claims over the run (NULL with no claims).';
COMMENT ON COLUMN brain_quarterly_trend_v1.staleness_recognition_rate IS 'Rate, 0-1: stale-fixture questions recognised / stale-fixture questions (NULL with none).';
COMMENT ON COLUMN brain_quarterly_trend_v1.diagnosis_accuracy_mean IS 'Score, 0-1 (each question 0, 0.5 or 1): the mean over questions of a diagnosis type (NULL with none).';
COMMENT ON COLUMN brain_quarterly_trend_v1.lever_mapping_correctness IS 'Rate, 0-1: questions with 0 lever violations / questions scored for it (AGT-902 only; NULL elsewhere).';
COMMENT ON COLUMN brain_quarterly_trend_v1.confidence_calibration_in_band IS 'Rate, 0-1: share of questions whose confidence distribution is in the rubric''s band.';
COMMENT ON COLUMN brain_quarterly_trend_v1.narrative_coherence_mean IS 'Score, 1-5: the mean reviewer narrative-coherence rating.';
COMMENT ON COLUMN most_failing_questions_v1.question_id IS 'The catalog question id, e.g. EVAL-Q01, over every brain and catalog version (most_failing_questions_v2 keeps them apart).';
COMMENT ON COLUMN most_failing_questions_v1.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN most_failing_questions_v1.runs_failed IS 'Count of those runs in which the question did not pass.';
COMMENT ON COLUMN most_failing_questions_v1.fail_pct IS 'Percent, 0-100, two decimals: 100 * runs_failed / runs_seen.';
COMMENT ON COLUMN most_failing_questions_v1.fail_rank IS 'Rank, 1 = most failing (SQL rank(): ties share a rank).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_questions IS 'Count of the run''s stale-fixture questions.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_recognised IS 'Count of stale-fixture questions recognised.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_missed IS 'Count of stale-fixture questions missed.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.all_recognised IS 'Boolean: every stale-fixture question recognised (NULL when the run had none).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.sev2_incident IS 'Boolean: at least one stale-fixture question missed (a sev-2 incident by seed 002).';
COMMENT ON COLUMN reviewer_calibration_v1.reviewer_user_id IS 'The reviewer (reviewer.reviewer_user_id).';
COMMENT ON COLUMN reviewer_calibration_v1.runs_reviewed IS 'Count of completed runs the reviewer reviewed.';
COMMENT ON COLUMN reviewer_calibration_v1.ratings IS 'Count of narrative-coherence ratings given.';
COMMENT ON COLUMN reviewer_calibration_v1.rating_1 IS 'Count of ratings of 1 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_2 IS 'Count of ratings of 2 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_3 IS 'Count of ratings of 3 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_4 IS 'Count of ratings of 4 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_5 IS 'Count of ratings of 5 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_mean IS 'Mean rating, 1-5 scale, four decimals.';
COMMENT ON COLUMN reviewer_calibration_v1.rating_stddev IS 'Sample standard deviation, in rating points (1-5 scale), four decimals; NULL with fewer than 2 ratings.';
COMMENT ON COLUMN cost_per_run_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN cost_per_run_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN cost_per_run_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN cost_per_run_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN cost_per_run_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN cost_per_run_v1.question_count IS 'Count of questions in the run.';
COMMENT ON COLUMN cost_per_run_v1.token_cost_usd IS 'USD: the token cost of the run''s brain calls, summed from its analyses.';
COMMENT ON COLUMN cost_per_run_v1.reviewer_hours_spent IS 'Hours: reported by the reviewer at sign-off (NULL if not reported).';
COMMENT ON COLUMN cost_per_run_v1.token_cost_per_question_usd IS 'USD per question, four decimals: token_cost_usd / question_count.';
COMMENT ON COLUMN prompt_drift_v1.brain IS 'The brain (target_id); brain_under_test in every other view and in prompt_drift_v2.';
COMMENT ON COLUMN prompt_drift_v1.production_prompt_hash IS 'SHA-256 hex of the prompt of the brain''s latest production analysis (NULL: none).';
COMMENT ON COLUMN prompt_drift_v1.production_last_seen_at IS 'When that production analysis was produced (timestamptz).';
COMMENT ON COLUMN prompt_drift_v1.eval_prompt_hash IS 'SHA-256 hex of the prompt of the brain''s last passing eval (pass or pass_with_notes).';
COMMENT ON COLUMN prompt_drift_v1.eval_prompt_version_label IS 'That run''s system_prompt_version_label, if any.';
COMMENT ON COLUMN prompt_drift_v1.eval_run_id IS 'That passing run.';
COMMENT ON COLUMN prompt_drift_v1.eval_decision IS 'Its decision: pass or pass_with_notes.';
COMMENT ON COLUMN prompt_drift_v1.eval_started_at IS 'When that run started (timestamptz).';
COMMENT ON COLUMN prompt_drift_v1.prompt_drift IS 'Boolean: production runs a prompt that is not the last one that passed (NULL without production traffic).';
COMMENT ON COLUMN work_quality_history_v1.name IS 'The target (a bot or feature) the snapshots are of.';
COMMENT ON COLUMN work_quality_history_v1.kind IS 'bot or feature.';
COMMENT ON COLUMN work_quality_history_v1.persona IS 'The persona the work was done for (empty when none).';
COMMENT ON COLUMN work_quality_history_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN work_quality_history_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN work_quality_history_v1.origin IS 'run (judged here) or import (a history file brought in).';
COMMENT ON COLUMN work_quality_history_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN work_quality_history_v1.models IS 'The judge panel, provider/model each.';
COMMENT ON COLUMN work_quality_history_v1.efficacy IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the efficacy dimension.';
COMMENT ON COLUMN work_quality_history_v1.completeness IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the completeness dimension.';
COMMENT ON COLUMN work_quality_history_v1.output_quality IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the output_quality dimension.';
COMMENT ON COLUMN work_quality_history_v1.restraint IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the restraint dimension.';
COMMENT ON COLUMN work_quality_history_v1.reliability IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the reliability dimension.';
COMMENT ON COLUMN work_quality_history_v1.value_for_money IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the value_for_money dimension.';
COMMENT ON COLUMN work_quality_history_v1.overall IS 'Score, 0-1: the overall mean over the dimensions.';
COMMENT ON COLUMN work_quality_history_v1.prev_run_id IS 'The run id of the previous snapshot it is compared with (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.overall_delta IS 'Score points (0-1 scale): overall minus the previous snapshot''s overall.';
COMMENT ON COLUMN work_quality_history_v1.value_delta IS 'Score points (0-1 scale): value_for_money minus the previous snapshot''s.';
COMMENT ON COLUMN work_quality_history_v1.verdict IS 'better, same or worse against the previous snapshot (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.regression IS 'Boolean: a regression at the policy''s default tolerance (work_quality_is_regression_v1).';
COMMENT ON COLUMN work_quality_history_v1.regression_reasons IS 'Why it is a regression, one phrase each (empty when it is not).';
COMMENT ON COLUMN work_quality_history_v1.cost_usd IS 'USD: what the assessed run cost (its own price metric).';
COMMENT ON COLUMN work_quality_history_v1.tokens IS 'Count of tokens the assessed run used.';
COMMENT ON COLUMN work_quality_history_v1.duration_ms IS 'Milliseconds the assessed run took.';
COMMENT ON COLUMN work_quality_history_v1.iterations IS 'Count of the assessed run''s iterations.';
COMMENT ON COLUMN work_quality_history_v1.model_calls IS 'Count of the assessed run''s model calls.';
COMMENT ON COLUMN work_quality_history_v1.retries IS 'Count of the assessed run''s retries.';
COMMENT ON COLUMN work_quality_history_v1.judges_cost_usd IS 'USD: what the judges'' calls cost.';
COMMENT ON COLUMN work_quality_history_v1.note IS 'The database''s one-line note on the snapshot.';
-- The panel tables' columns.
COMMENT ON COLUMN brain_eval_runs_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_runs_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_runs_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_runs_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_runs_by_month.reviewer_user_id IS 'The runs'' reviewer.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs IS 'Count of completed runs.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_pass IS 'Count decided pass.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_pass_with_notes IS 'Count decided pass_with_notes.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_conditional IS 'Count decided conditional.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_fail IS 'Count decided fail.';
COMMENT ON COLUMN brain_eval_runs_by_month.token_cost_usd IS 'USD: the runs'' token_cost_usd, summed.';
COMMENT ON COLUMN brain_eval_runs_by_month.reviewer_hours_spent IS 'Hours: the reviewer hours reported, summed (0 when none reported).';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_with_hours IS 'Count of runs whose reviewer reported hours.';
COMMENT ON COLUMN brain_eval_runs_by_month.stale_questions IS 'Count of stale-fixture questions.';
COMMENT ON COLUMN brain_eval_runs_by_month.stale_recognised IS 'Count of them recognised.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_with_stale IS 'Count of runs with a stale-fixture question.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_all_recognised IS 'Count of runs that recognised all their stale-fixture questions.';
COMMENT ON COLUMN brain_eval_runs_by_month.sev2_runs IS 'Count of runs with a stale-fixture miss (sev-2).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_1 IS 'Count of narrative-coherence ratings of 1 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_2 IS 'Count of narrative-coherence ratings of 2 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_3 IS 'Count of narrative-coherence ratings of 3 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_4 IS 'Count of narrative-coherence ratings of 4 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_5 IS 'Count of narrative-coherence ratings of 5 (scale 1-5).';
COMMENT ON COLUMN brain_eval_questions_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_questions_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_questions_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_questions_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_questions_by_month.question_catalog_version IS 'The catalog version the runs used.';
COMMENT ON COLUMN brain_eval_questions_by_month.question_id IS 'The catalog question.';
COMMENT ON COLUMN brain_eval_questions_by_month.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN brain_eval_questions_by_month.runs_failed IS 'Count of those in which it did not pass.';
COMMENT ON COLUMN brain_eval_agreement_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_agreement_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_agreement_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_agreement_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_agreement_by_month.judge_model IS 'The judge model, provider:model.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r0 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r1 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r2 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r0 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r1 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r2 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r0 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r1 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r2 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.claims_pairs IS 'Count of blind pairs of total claims (judge''s against reviewer''s).';
COMMENT ON COLUMN brain_eval_agreement_by_month.claims_abs_difference IS 'Claims (a count): the sum of |judge total_claims - reviewer total_claims| over those pairs.';

-- =============================================================================================
-- Seed data: the brains of seed 002, the brain-eval v1, takes-quality v1.0 and v1.1 and work-quality v1.0 rubrics
-- =============================================================================================
INSERT INTO target (target_id, kind, display_name, model_family) VALUES
    ('AGT-901', 'brain', 'Pipeline brain (diagnosis)', 'anthropic'),
    ('AGT-902', 'brain', 'Action brain (diagnosis and proposed levers)', 'anthropic');

-- Soft thresholds are not in seed 002; these defaults are documented in docs/rubrics.md.
INSERT INTO rubric (suite, version, definition) VALUES ('brain-eval', 'v1', $rubric$
{
  "suite": "brain-eval",
  "version": "v1",
  "dimensions": [
    {"key": "citation_rate", "label": "citation rate", "scored_by": "automatic", "aggregate": "mean of question citation_rate", "unit": "rate"},
    {"key": "hallucination_rate", "label": "hallucination rate", "scored_by": "reviewer", "aggregate": "sum(hallucinations_detected) / sum(total_claims)", "unit": "rate"},
    {"key": "staleness_recognition_rate", "label": "staleness recognition", "scored_by": "reviewer", "aggregate": "recognised / stale-fixture questions", "unit": "rate"},
    {"key": "diagnosis_accuracy_mean", "label": "diagnosis accuracy", "scored_by": "reviewer", "aggregate": "mean of scored questions", "unit": "score"},
    {"key": "lever_mapping_correctness", "label": "lever mapping", "scored_by": "automatic", "aggregate": "questions with 0 violations / questions scored", "unit": "rate"},
    {"key": "confidence_calibration_in_band", "label": "confidence calibration", "scored_by": "automatic", "aggregate": "questions whose confidence distribution is in band", "unit": "rate"},
    {"key": "narrative_coherence_mean", "label": "narrative coherence", "scored_by": "reviewer", "aggregate": "mean rating 1-5", "unit": "score"}
  ],
  "hard_criteria": [
    {"key": "hallucination_rate", "label": "hallucination rate", "op": "<=", "threshold": 0.02, "unit": "rate"},
    {"key": "staleness_recognition_rate", "label": "staleness recognition", "op": ">=", "threshold": 1.0, "unit": "rate"},
    {"key": "lever_mapping_correctness", "label": "lever mapping", "op": ">=", "threshold": 1.0, "unit": "rate", "applies_to": ["AGT-902"]}
  ],
  "soft_criteria": [
    {"key": "citation_rate", "label": "citation rate", "op": ">=", "threshold": 0.95, "unit": "rate"},
    {"key": "diagnosis_accuracy_mean", "label": "diagnosis accuracy", "op": ">=", "threshold": 0.75, "unit": "score"},
    {"key": "confidence_calibration_in_band", "label": "confidence calibration", "op": ">=", "threshold": 0.80, "unit": "rate", "target_label": "band"},
    {"key": "narrative_coherence_mean", "label": "narrative coherence", "op": ">=", "threshold": 4.0, "unit": "score"}
  ],
  "confidence_band": {"high_confidence_pct": [40, 75], "speculation_pct_max": 10},
  "diagnosis_question_types": ["plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis"],
  "question_pass": {
    "max_hallucinations": 0,
    "min_citation_rate": 0.90,
    "min_diagnosis_accuracy": 0.5,
    "min_narrative_coherence": 3,
    "max_lever_violations": 0,
    "lever_mapping_applies_to": ["AGT-902"]
  },
  "decision_ladder": [
    {"min_soft_passed": 4, "decision": "pass"},
    {"min_soft_passed": 3, "decision": "pass_with_notes"},
    {"min_soft_passed": 2, "decision": "conditional"},
    {"min_soft_passed": 0, "decision": "fail"}
  ],
  "hard_failure_decision": "fail"
}
$rubric$);

-- Seed 000's rule as data: 5 dimensions scored 1-10 by each judge; pass when every dimension's
-- mean is >= 7 and its minimum across contributing models >= 5; inconclusive when fewer than
-- 2/3 of the panel contributed complete scores. The judge instructions are rendered into the
-- prompt templates (suites/takes_quality/templates/).
INSERT INTO rubric (suite, version, definition) VALUES ('takes-quality', 'v1.0', $rubric$
{
  "suite": "takes-quality",
  "version": "v1.0",
  "scale": {"min": 1, "max": 10},
  "dimensions": [
    {"key": "accuracy", "label": "accuracy", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each claim stated correctly and faithfully to what its source supports?"},
    {"key": "attribution", "label": "attribution", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each take attributed to the right holder, and is its source named and plausible?"},
    {"key": "weight_calibration", "label": "weight calibration", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Does each weight (0 to 1) match how firmly the holder holds the claim and how well it is supported?"},
    {"key": "kind_classification", "label": "kind classification", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each take's kind right (a fact is verifiable, a take is an opinion, a bet is a prediction, a hunch is a weak belief)?"},
    {"key": "signal_density", "label": "signal density", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Does each take carry a specific, non-trivial claim worth keeping, rather than filler or a duplicate?"}
  ],
  "pass_rule": {"every_dim_mean_at_least": 7, "every_dim_min_at_least": 5},
  "quorum": {"min_contributing_fraction": [2, 3]},
  "judge_instructions": "You are a strict, independent reviewer of a knowledge base's takes layer. A take is one claim someone holds, recorded with its kind, holder, weight (0 to 1), the date since when it is held, and its source. Judge the sample as a whole: score every dimension from the scale's minimum (very poor) to its maximum (excellent), using whole numbers. Be critical: reserve 9 and 10 for samples with no visible problems. Name concrete improvements to the extraction that produced these takes.",
  "max_improvements": 5
}
$rubric$);

-- Each suite's first rubric is active from the start; a later one becomes active only by a
-- migration that inserts its activation with a reason.
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'baseline: the first rubric of the suite'
  FROM rubric r WHERE (r.suite, r.version) IN (('brain-eval', 'v1'), ('takes-quality', 'v1.0'))
 ORDER BY r.rubric_id;
\ir ../sql/work_quality/work_quality_rubric_v1.sql
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'work-quality: the first rubric of the suite'
  FROM rubric r WHERE (r.suite, r.version) = ('work-quality', 'v1.0');
-- Every rubric from here on is checked at admission as policy (rubric_check_v2). The seed rubrics
-- above were admitted under the rules of their day, which v1.0's panel predates: v1.1, the first
-- rubric admitted under today's, carries seed 000's panel (three models, two or more families) and
-- is active in v1.0's stead (issue 17).
CREATE TRIGGER rubric_05_admit BEFORE INSERT ON rubric
    FOR EACH ROW EXECUTE FUNCTION rubric_admit_v2();
INSERT INTO rubric (suite, version, definition)
SELECT 'takes-quality', 'v1.1',
       r.definition || jsonb_build_object('version', 'v1.1', 'panel', jsonb_build_object('min_models', 3, 'min_families', 2))
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.0');
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'issue 17: a panel of at least three models from at least two families (seed 000, cross-family)'
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.1');
-- The ledger's identity: the id every digest and proof names.
INSERT INTO ledger_identity DEFAULT VALUES;

-- =============================================================================================
-- Sealing and the journal: once every table, trigger and seed row exists
-- =============================================================================================
-- Row-level security enabled and forced on every table, its _owner_all and _code_all policies,
-- the owner role's SELECT, every trigger ENABLE ALWAYS; then the journal (docs/ledger.md) covers
-- every ledger table, the seed rows as BASELINE entries.
CALL seal_tables_v2();
CALL journal_attach_v1();
REVOKE EXECUTE ON PROCEDURE journal_attach_v1() FROM PUBLIC;
-- Compares the suites' runs by the keys the journal gives them: after the key functions exist.
\ir ../sql/core/ledger_recompute_v3.sql
GRANT EXECUTE ON FUNCTION ledger_recompute_v3() TO evalledger_owner, evalledger_auditor;

RESET ROLE;

-- =============================================================================================
-- Guards no application role can lift: the event triggers (where a superuser installs)
-- =============================================================================================
-- The event-trigger functions live in a schema of their own, owned by the user who migrates.
CREATE SCHEMA evalledger_guard;
REVOKE ALL ON SCHEMA evalledger_guard FROM PUBLIC;
COMMENT ON SCHEMA evalledger_guard IS 'evalledger: event-trigger functions, out of every application role''s reach';
\ir ../triggers/core/ddl_guard_v1.sql
\ir ../triggers/core/drop_guard_v1.sql
REVOKE EXECUTE ON FUNCTION evalledger_guard.ddl_guard_v1(), evalledger_guard.drop_guard_v1() FROM PUBLIC;

-- Where the migrating user is a superuser, the event triggers refuse DDL on the ledger that no
-- migration runs (docs/guards.md). Elsewhere (managed servers) there are none, and the installer,
-- a member of the code role, could lift any guard: `evalledger doctor` says which are missing.
DO $install$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'evalledger: not a superuser: guard event triggers not installed';
        RETURN;
    END IF;
    CREATE EVENT TRIGGER evalledger_ddl_guard_v1 ON ddl_command_end
        EXECUTE FUNCTION evalledger_guard.ddl_guard_v1();
    CREATE EVENT TRIGGER evalledger_drop_guard_v1 ON sql_drop
        EXECUTE FUNCTION evalledger_guard.drop_guard_v1();
    ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS;
    ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
END
$install$;

-- =============================================================================================
-- Large objects (issue 17): no role of the ledger needs to create one, and any login could
-- (stored outside every table, unguarded and unpurged). Revoked from PUBLIC where a superuser
-- installs (the functions are pg_catalog's); elsewhere `evalledger doctor` warns.
-- =============================================================================================
DO $large_objects$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'evalledger: not a superuser: any login may still create large objects (lo_create)';
        RETURN;
    END IF;
    REVOKE EXECUTE ON FUNCTION pg_catalog.lo_create(oid), pg_catalog.lo_creat(integer),
        pg_catalog.lo_from_bytea(oid, bytea), pg_catalog.lo_import(text), pg_catalog.lo_import(text, oid) FROM PUBLIC;
END
$large_objects$;
