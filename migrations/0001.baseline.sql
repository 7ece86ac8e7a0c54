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
-- finite_v1: a number the ledger can hold: not NaN and not infinite (NULL stays NULL). Every numeric
-- and floating-point column of a ledger table has a CHECK calling it (<table>_<column>_finite), so
-- no NaN or infinity enters the append-only ledger, where it could never be repaired.
CREATE FUNCTION evalledger.finite_v1(x numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT x OPERATOR(pg_catalog.<>) 'NaN'::numeric
       AND x OPERATOR(pg_catalog.<) 'Infinity'::numeric AND x OPERATOR(pg_catalog.>) '-Infinity'::numeric
$$;

-- json_numbers_v1: an object whose every value is a JSON number (JSON has no NaN or infinity, so
-- such an object holds only finite numbers); NULL for NULL. For the JSON fields the database reads
-- as numbers, where a string "NaN" would otherwise cast to one.
CREATE FUNCTION evalledger.json_numbers_v1(doc jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.jsonb_typeof(doc) OPERATOR(pg_catalog.=) 'object'
       AND NOT pg_catalog.jsonb_path_exists(doc, '$.* ? (@.type() != "number")')
$$;

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
-- capture_distinct_v1: the distinct elements of a text array (order not kept), for the "deduplicated" CHECKs of seed 001.
CREATE FUNCTION evalledger.capture_distinct_v1(items text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT i), '{}') FROM unnest(items) AS i
$$;

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
-- changed_columns_v1: the columns whose value differs between two versions of a row, leaving
-- out those an UPDATE may change; NULL when nothing else changed.
CREATE FUNCTION evalledger.changed_columns_v1(new_row jsonb, old_row jsonb, allowed text[])
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(n.key, ', ' ORDER BY n.key)
      FROM jsonb_each(new_row) n JOIN jsonb_each(old_row) o USING (key)
     WHERE n.value IS DISTINCT FROM o.value AND n.key <> ALL (allowed);
$$;

-- require_read_committed_v2: a definer function that decides or deletes after waiting on a lock
-- must then read with a fresh snapshot, which READ COMMITTED alone takes: under REPEATABLE READ or
-- SERIALIZABLE the snapshot predates the wait, and the check would miss what it waited for (a
-- legal hold, a tuner, a run). Raises naming what was attempted.
CREATE FUNCTION evalledger.require_read_committed_v2(action text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: % runs under READ COMMITTED, not %', action,
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = format('%s in a READ COMMITTED transaction (the default isolation level)', action);
    END IF;
END;
$$;

-- require_fresh_snapshot_v1: a completion that waited for the rows locking its run (question rows,
-- verdicts) must then read them: only READ COMMITTED gives the trigger a snapshot taken after the
-- wait; an older one would decide without them.
CREATE FUNCTION evalledger.require_fresh_snapshot_v1(run_kind text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: a % is completed under READ COMMITTED, not %', run_kind,
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'set completed_at in a READ COMMITTED transaction';
    END IF;
END;
$$;

-- refuse_supplied_v1: raise when a caller supplied any of the values the database computes.
CREATE FUNCTION evalledger.refuse_supplied_v1(table_name text, computed jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    supplied text;
BEGIN
    SELECT string_agg(key, ', ' ORDER BY key) INTO supplied
      FROM jsonb_each(computed) WHERE value <> 'null'::jsonb;
    IF supplied IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: %.% computed by the database: leave it out', table_name, supplied
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'decisions, aggregates and computed flags are policy, not input';
    END IF;
END;
$$;

-- purge_horizon_v1: how long the ledger keeps a row before it may be purged (seed 002: 7 years);
-- the ledger's purge rule and the capture purge both ask this one function.
CREATE FUNCTION evalledger.purge_horizon_v1() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT interval '7 years' $$;

-- hot_tier_v1: how far back RevOps reads (seed 002's hot tier); every RevOps policy asks this
-- one function. IMMUTABLE and plain SQL, so the planner folds it into a constant: a policy
-- costs what it cost with the literal.
CREATE FUNCTION evalledger.hot_tier_v1() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT interval '24 months' $$;

-- Every window in UTC on the statement's clock (issue 17): no session TimeZone moves it, nor
-- does a transaction held open.
-- utc_ago_v1: the instant `span` before the statement's start on the database's clock, counted in
-- UTC: months and days are calendar steps of UTC, never of the session's TimeZone (which any login
-- may set, to a crafted POSIX zone as much as to a real one), and the statement's start, never the
-- transaction's (a session that holds a transaction open does not keep an old window). Plain SQL
-- with every operator schema-qualified, so the planner inlines it into a policy as a stable
-- expression: an index still serves the comparison, and no operator on a reader's path is picked.
CREATE FUNCTION evalledger.utc_ago_v1(span interval) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.timezone('UTC',
               pg_catalog.timezone('UTC', pg_catalog.statement_timestamp()) OPERATOR(pg_catalog.-) span)
$$;

-- hot_tier_start_v1: where the hot tier begins (hot_tier_v1() before now, in UTC: utc_ago_v1); every
-- read policy on an aging table compares a row's tier clock with this one function.
CREATE FUNCTION evalledger.hot_tier_start_v1() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT evalledger.utc_ago_v1(evalledger.hot_tier_v1())
$$;

-- purge_horizon_at_v1: the instant before which a row is past the purge horizon (purge_horizon_v1()
-- before now, in UTC: utc_ago_v1); the purge, its guard and the plan all ask this one function.
CREATE FUNCTION evalledger.purge_horizon_at_v1() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT evalledger.utc_ago_v1(evalledger.purge_horizon_v1())
$$;

-- backdating_window_v1: how long before its recording a run (or an analysis) may have started
-- without an audited import: one day, counted in UTC (utc_ago_v1), so no session TimeZone
-- stretches it.
CREATE FUNCTION evalledger.backdating_window_v1() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT interval '1 day' $$;

-- guard_append_only_v1: per 'table:EVENTS:function' spec, the <table>_00_append_only row trigger
-- BEFORE EVENTS and the <table>_00_no_truncate statement trigger, both running that function.
CREATE PROCEDURE evalledger.guard_append_only_v1(specs text[])
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    spec text;
    t text;
BEGIN
    FOREACH spec IN ARRAY specs LOOP
        t := split_part(spec, ':', 1);
        EXECUTE format('CREATE TRIGGER %I BEFORE %s ON evalledger.%I FOR EACH ROW EXECUTE FUNCTION evalledger.%I()',
                       t || '_00_append_only', split_part(spec, ':', 2), t, split_part(spec, ':', 3));
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON evalledger.%I FOR EACH STATEMENT EXECUTE FUNCTION evalledger.%I()',
                       t || '_00_no_truncate', t, split_part(spec, ':', 3));
    END LOOP;
END;
$$;

-- seal_tables_v2: idempotent, so every migration calls it; each ledger table (partitions aside)
-- not yet under row-level security gets it enabled and FORCEd, its <t>_owner_all and <t>_code_all
-- policies where missing and the owner role's SELECT (no more: a migration grants INSERT on a
-- registry the owner role maintains; UPDATE, DELETE or TRUNCATE would let it LOCK the table
-- against every reader, issue 17); every trigger turns ENABLE ALWAYS in that same ALTER TABLE,
-- since the DDL guard checks both on the table each ALTER TABLE leaves.
CREATE PROCEDURE evalledger.seal_tables_v2()
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.relname, NOT c.relrowsecurity AS fresh,
                    (SELECT string_agg(format(', ENABLE ALWAYS TRIGGER %I', tg.tgname), '' ORDER BY tg.tgname)
                       FROM pg_trigger tg WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal) AS always
               FROM pg_class c
              WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                AND (NOT (c.relrowsecurity AND c.relforcerowsecurity)
                     OR EXISTS (SELECT 1 FROM pg_trigger tg
                                 WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal AND tg.tgenabled <> 'A'))
              ORDER BY c.relname LOOP
        EXECUTE format('ALTER TABLE evalledger.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY%s',
                       t.relname, coalesce(t.always, ''));
        CONTINUE WHEN NOT t.fresh;
        IF NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = format('evalledger.%I', t.relname)::regclass
                                                   AND p.polname = t.relname || '_owner_all') THEN
            EXECUTE format('CREATE POLICY %I ON evalledger.%I TO evalledger_owner USING (true) WITH CHECK (true)',
                           t.relname || '_owner_all', t.relname);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = format('evalledger.%I', t.relname)::regclass
                                                   AND p.polname = t.relname || '_code_all') THEN
            EXECUTE format('CREATE POLICY %I ON evalledger.%I TO evalledger_code USING (true) WITH CHECK (true)',
                           t.relname || '_code_all', t.relname);
        END IF;
        EXECUTE format('GRANT SELECT ON evalledger.%I TO evalledger_owner', t.relname);
    END LOOP;
END;
$$;

-- Migrations' own steps (the role they act as owns them): no one else runs them.
REVOKE EXECUTE ON PROCEDURE guard_append_only_v1(text[]), seal_tables_v2() FROM PUBLIC;
-- complete_once_v1: the only UPDATE a run accepts is its completion: completed_at set once, from
-- NULL, to a time not in the future, with every other column as it was. Every suite's run table uses it; its
-- trigger arguments are how a message names a run ('run', 'takes-quality run'), the run's key
-- column and, optionally, a text[] of the columns the database computes, a change to which is
-- refused as a value the caller may not supply.
CREATE FUNCTION evalledger.complete_once_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    changed text;
BEGIN
    IF OLD.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: % % is complete: % is append-only',
                TG_ARGV[0], to_jsonb(OLD) ->> TG_ARGV[1], TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    changed := evalledger.changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY['completed_at']);
    IF changed IS NOT NULL THEN
        IF TG_NARGS > 2 AND string_to_array(changed, ', ') && TG_ARGV[2]::text[] THEN
            PERFORM evalledger.refuse_supplied_v1(TG_TABLE_NAME, jsonb_build_object(changed, true));
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: only completed_at may be set, not %', TG_TABLE_NAME, changed
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.completed_at IS NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is set once, to a time'
            USING ERRCODE = 'not_null_violation', COLUMN = 'completed_at';
    END IF;
    IF NEW.completed_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: completed_at % is in the future', NEW.completed_at
            USING ERRCODE = 'check_violation', COLUMN = 'completed_at';
    END IF;
    RETURN NEW;
END;
$$;

-- A run claim is an uncommitted row: committing one is refused.
-- run_claim_commit_refused_v1: a run claim is a row no transaction commits. A runner inserts its
-- claim in a transaction it keeps open while it judges the run and then rolls back; a second
-- runner inserting the same claim waits on the first's transaction, so two identical runs never
-- make the same call twice. The claim ends with its transaction, whether it rolls back, its
-- connection drops or its process is killed, so no claim outlives its runner; this deferred
-- trigger refuses the commit that would leave one behind. Only roles with INSERT on the table
-- (the runner, the owner) can take a claim: unlike an advisory lock, no reader can hold one up.
CREATE FUNCTION evalledger.run_claim_commit_refused_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'evalledger: a run claim lasts as long as its transaction: roll it back, never commit it'
        USING ERRCODE = 'invalid_transaction_termination';
END;
$$;

-- runner_error_v1: true when the runner reports a judge call that failed or was not made (what
-- only the runner can see: provider_error, budget_exhausted); false when it reports none; raises
-- for any other kind, which is the database's to decide from the reply.
CREATE FUNCTION evalledger.runner_error_v1(error_kind text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF error_kind IS NOT NULL AND error_kind NOT IN ('provider_error', 'budget_exhausted') THEN
        RAISE EXCEPTION 'evalledger: error_kind % is the database''s to decide', error_kind
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'error_kind';
    END IF;
    RETURN error_kind IS NOT NULL;
END;
$$;

-- check_panel_v1: a judge panel is at least one provider:model id, none twice; raises naming the
-- run kind (e.g. 'takes-quality run') and the offending model otherwise.
CREATE FUNCTION evalledger.check_panel_v1(run_kind text, models text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    bad text;
BEGIN
    IF cardinality(models) IS NULL OR cardinality(models) = 0 THEN
        RAISE EXCEPTION 'evalledger: a % needs a panel of at least one model', run_kind
            USING ERRCODE = 'check_violation', COLUMN = 'models';
    END IF;
    SELECT m INTO bad FROM unnest(models) m WHERE m IS NULL OR m !~ '^[a-z]+:\S+$' LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: model % is not a provider:model id', coalesce(quote_literal(bad), 'NULL')
            USING ERRCODE = 'check_violation', COLUMN = 'models';
    END IF;
    SELECT m INTO bad FROM unnest(models) m GROUP BY m HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: model % is on the panel twice', bad
            USING ERRCODE = 'check_violation', COLUMN = 'models';
    END IF;
END;
$$;

-- require_open_v1: a run is inserted in progress (completed_at NULL) and completed later, once;
-- raises naming the run kind ('run', 'takes-quality run') and what to insert before completing.
CREATE FUNCTION evalledger.require_open_v1(run_kind text, completed_at timestamptz, rows_first text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: a % is inserted in progress: completed_at must be NULL', run_kind
            USING ERRCODE = 'check_violation', COLUMN = 'completed_at',
                  HINT = format('insert its %s, then set completed_at', rows_first);
    END IF;
END;
$$;

-- rubric_fingerprint_v1: a rubric's fingerprint is the SHA-256 of its canonical definition, so
-- two rows with the same policy share it and any change of policy changes it.
CREATE FUNCTION evalledger.rubric_fingerprint_v1() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.fingerprint := encode(sha256(convert_to(NEW.definition::text, 'UTF8')), 'hex');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- rubric_check_v2: what is wrong with a rubric definition (NULL when nothing): the fields its
-- suite's decision code reads are present and typed, and seed 002's hard criteria (hallucination
-- rate <= 2%, staleness recognition = 100%, lever mapping = 100% for AGT-902) are never loosened,
-- and a missed hard criterion decides fail; a judged suite (takes-quality, work-quality) has a
-- numeric scale its judges' scores must keep to; takes-quality's panel policy is never below seed
-- 000's three frontier models, nor single-family (the design's cross-family panel). Policy is
-- validated when it is written, and again when a run is admitted under it (rubric_admitted_v2).
CREATE FUNCTION evalledger.rubric_check_v2(suite text, definition jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    item jsonb;
    hard jsonb;
    field text;
    problem text;
BEGIN
    IF definition ->> 'suite' IS DISTINCT FROM suite THEN
        RETURN format('definition.suite is %s, not %s', coalesce(definition ->> 'suite', 'missing'), suite);
    END IF;
    IF jsonb_typeof(definition -> 'dimensions') IS DISTINCT FROM 'array'
       OR jsonb_array_length(definition -> 'dimensions') = 0 THEN
        RETURN 'dimensions must be a non-empty array';
    END IF;
    SELECT format('dimensions[%s].key must be a non-empty string', n - 1) INTO problem
      FROM jsonb_array_elements(definition -> 'dimensions') WITH ORDINALITY x(d, n)
     WHERE jsonb_typeof(d -> 'key') IS DISTINCT FROM 'string' OR d ->> 'key' = '' ORDER BY n LIMIT 1;
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    CASE suite
    WHEN 'brain-eval' THEN
        IF definition ->> 'hard_failure_decision' IS DISTINCT FROM 'fail' THEN
            RETURN format('hard_failure_decision must be fail, not %s', coalesce(definition ->> 'hard_failure_decision', 'missing'));
        END IF;
        FOREACH field IN ARRAY ARRAY['hard_criteria', 'soft_criteria', 'decision_ladder'] LOOP
            IF jsonb_typeof(definition -> field) IS DISTINCT FROM 'array' THEN
                RETURN format('%s must be an array', field);
            END IF;
        END LOOP;
        IF jsonb_typeof(definition -> 'diagnosis_question_types') IS DISTINCT FROM 'array'
           OR jsonb_path_exists(definition, '$.diagnosis_question_types[*] ? (@.type() != "string")') THEN
            RETURN 'diagnosis_question_types must be an array of question types (which have a diagnosis to score)';
        END IF;
        FOR item IN SELECT c FROM jsonb_array_elements((definition -> 'hard_criteria') || (definition -> 'soft_criteria')) c LOOP
            IF jsonb_typeof(item -> 'key') IS DISTINCT FROM 'string' OR item ->> 'op' IS NULL
               OR item ->> 'op' NOT IN ('<=', '>=') OR jsonb_typeof(item -> 'threshold') IS DISTINCT FROM 'number' THEN
                RETURN format('criterion %s needs a key, an op (<= or >=) and a numeric threshold', item);
            END IF;
        END LOOP;
        FOR item IN SELECT s FROM jsonb_array_elements(definition -> 'decision_ladder') s LOOP
            IF jsonb_typeof(item -> 'min_soft_passed') IS DISTINCT FROM 'number'
               OR item ->> 'decision' IS NULL
               OR item ->> 'decision' NOT IN ('pass', 'pass_with_notes', 'conditional', 'fail') THEN
                RETURN format('decision_ladder step %s needs a numeric min_soft_passed and a decision', item);
            END IF;
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(definition -> 'decision_ladder') s
                        WHERE (s ->> 'min_soft_passed')::numeric = 0) THEN
            RETURN 'decision_ladder needs a step at min_soft_passed 0';
        END IF;
        FOR hard IN SELECT h::jsonb FROM unnest(ARRAY[
                '{"key": "hallucination_rate", "op": "<=", "threshold": 0.02}',
                '{"key": "staleness_recognition_rate", "op": ">=", "threshold": 1.0}',
                '{"key": "lever_mapping_correctness", "op": ">=", "threshold": 1.0, "brain": "AGT-902"}']) h LOOP
            IF NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements(definition -> 'hard_criteria') c
                 WHERE c ->> 'key' = hard ->> 'key' AND c ->> 'op' = hard ->> 'op'
                   AND CASE hard ->> 'op' WHEN '<=' THEN (c ->> 'threshold')::numeric <= (hard ->> 'threshold')::numeric
                                          ELSE (c ->> 'threshold')::numeric >= (hard ->> 'threshold')::numeric END
                   AND CASE WHEN hard ? 'brain' THEN NOT c ? 'applies_to' OR (c -> 'applies_to') ? (hard ->> 'brain')
                            ELSE NOT c ? 'applies_to' END) THEN
                RETURN format('hard criterion %s %s %s is required (seed 002)', hard ->> 'key', hard ->> 'op', hard ->> 'threshold');
            END IF;
        END LOOP;
        IF jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,1}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,speculation_pct_max}') IS DISTINCT FROM 'number' THEN
            RETURN 'confidence_band needs numeric high_confidence_pct [low, high] and speculation_pct_max';
        END IF;
        SELECT format('question_pass.%s must be a number', k) INTO problem
          FROM unnest(ARRAY['max_hallucinations', 'min_citation_rate', 'min_diagnosis_accuracy',
                            'min_narrative_coherence', 'max_lever_violations']) k
         WHERE jsonb_typeof(definition -> 'question_pass' -> k) IS DISTINCT FROM 'number' LIMIT 1;
        RETURN problem;
    WHEN 'takes-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,every_dim_mean_at_least}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{pass_rule,every_dim_min_at_least}') IS DISTINCT FROM 'number' THEN
            RETURN 'pass_rule needs numeric every_dim_mean_at_least and every_dim_min_at_least';
        END IF;
        IF jsonb_typeof(definition #> '{quorum,min_contributing_fraction,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{quorum,min_contributing_fraction,1}') IS DISTINCT FROM 'number'
           OR (definition #>> '{quorum,min_contributing_fraction,1}')::numeric <= 0 THEN
            RETURN 'quorum.min_contributing_fraction needs [numerator, positive denominator]';
        END IF;
        IF jsonb_typeof(definition #> '{panel,min_models}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{panel,min_families}') IS DISTINCT FROM 'number'
           OR (definition #>> '{panel,min_models}')::numeric < 3
           OR (definition #>> '{panel,min_families}')::numeric < 2
           OR (definition #>> '{panel,min_families}')::numeric > (definition #>> '{panel,min_models}')::numeric
           OR (definition #>> '{panel,min_models}')::numeric <> trunc((definition #>> '{panel,min_models}')::numeric)
           OR (definition #>> '{panel,min_families}')::numeric <> trunc((definition #>> '{panel,min_families}')::numeric) THEN
            RETURN 'panel needs whole numbers min_models >= 3 (seed 000: three frontier models) and '
                   'min_families >= 2 (a cross-family panel), no more families than models';
        END IF;
        RETURN NULL;
    WHEN 'work-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{compare,same_band}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{compare,regress_tolerance}') IS DISTINCT FROM 'number' THEN
            RETURN 'compare needs numeric same_band and regress_tolerance';
        END IF;
        RETURN NULL;
    ELSE
        RETURN format('no suite %s', suite);
    END CASE;
END;
$$;

-- rubric_admit_v2: a rubric row is validated policy (rubric_check_v2) before it is stored.
CREATE FUNCTION evalledger.rubric_admit_v2() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    problem text := evalledger.rubric_check_v2(NEW.suite, NEW.definition);
BEGIN
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: rubric % %: %', NEW.suite, NEW.version, problem
            USING ERRCODE = 'check_violation', COLUMN = 'definition', CONSTRAINT = 'rubric_definition_valid';
    END IF;
    RETURN NEW;
END;
$$;

-- rubric_activation_admit_v1: an activation names a rubric of its own suite; when and by whom
-- (the session's login, not a role it acts as) are the database's.
CREATE FUNCTION evalledger.rubric_activation_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id AND r.suite = NEW.suite) THEN
        RAISE EXCEPTION 'evalledger: rubric % is not a % rubric', NEW.rubric_id, NEW.suite
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id';
    END IF;
    NEW.activated_at := now();
    NEW.activated_by := session_user;
    RETURN NEW;
END;
$$;

-- active_rubric_v1: the rubric a run of the suite is judged by when it names none: the one its
-- latest activation names (never merely the newest row), NULL when none was ever activated.
CREATE FUNCTION evalledger.active_rubric_v1(suite text) RETURNS bigint
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT a.rubric_id FROM evalledger.rubric_activation a
     WHERE a.suite = active_rubric_v1.suite
     ORDER BY a.activation_id DESC LIMIT 1;
$$;

-- rubric_admitted_v2: the rubric a new run of the suite is judged by: the one it names, which
-- must be of that suite and activated at some time, else the active one; and it must pass today's
-- rubric check (rubric_check_v2: a judged suite's scale, takes-quality's panel policy), so an older
-- rubric that predates a rule judges no new run; raises otherwise.
CREATE FUNCTION evalledger.rubric_admitted_v2(suite text, named bigint) RETURNS bigint
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    chosen bigint := coalesce(named, evalledger.active_rubric_v1(suite));
    problem text;
BEGIN
    IF chosen IS NULL OR NOT EXISTS (
        SELECT 1 FROM evalledger.rubric_activation a WHERE a.rubric_id = chosen AND a.suite = rubric_admitted_v2.suite) THEN
        RAISE EXCEPTION 'evalledger: rubric % is not an activated % rubric', coalesce(chosen::text, 'NULL'), suite
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id',
                  HINT = 'a rubric is activated by a migration (evalledger.rubric_activation), never by being newest';
    END IF;
    SELECT evalledger.rubric_check_v2(r.suite, r.definition) INTO problem FROM evalledger.rubric r WHERE r.rubric_id = chosen;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: rubric % judges no new % run: %', chosen, suite, problem
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id', CONSTRAINT = 'rubric_definition_valid',
                  HINT = 'name the suite''s active rubric (or none)';
    END IF;
    RETURN chosen;
END;
$$;

-- judge_scores_v2: the contribution rule every judged suite shares. A judge's reply contributes
-- when every dimension of the rubric is present (flat, or under "scores"), a number, and within
-- the rubric's scale: then {"scores": {dimension: number, ...}} in rubric order; otherwise
-- {"error_kind", "error_message"} saying why not (parse_failed, incomplete_scores, out_of_scale).
-- A rubric without a numeric scale admits no score: out_of_scale, never an unchecked number.
CREATE FUNCTION evalledger.judge_scores_v2(reply jsonb, policy jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    dims text[] := ARRAY(SELECT d ->> 'key'
                           FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n) ORDER BY n);
    lo numeric := (policy -> 'scale' ->> 'min')::numeric;
    hi numeric := (policy -> 'scale' ->> 'max')::numeric;
    container jsonb;
    missing text[];
    dim text;
    value jsonb;
    scores jsonb := '{}';
BEGIN
    IF lo IS NULL OR hi IS NULL THEN
        RETURN jsonb_build_object('error_kind', 'out_of_scale', 'error_message', 'the rubric has no scale');
    END IF;
    IF reply IS NULL OR jsonb_typeof(reply) <> 'object' THEN
        RETURN jsonb_build_object('error_kind', 'parse_failed', 'error_message', 'no JSON object in the reply');
    END IF;
    container := CASE WHEN jsonb_typeof(reply -> 'scores') = 'object' THEN reply -> 'scores' ELSE reply END;
    missing := ARRAY(SELECT d FROM unnest(dims) WITH ORDINALITY u(d, n)
                      WHERE coalesce(jsonb_typeof(container -> d), 'null') = 'null' ORDER BY n);
    IF cardinality(missing) > 0 THEN
        RETURN jsonb_build_object('error_kind', 'incomplete_scores',
                                  'error_message', format('missing [%s]', array_to_string(missing, ', ')));
    END IF;
    FOREACH dim IN ARRAY dims LOOP
        value := container -> dim;
        IF jsonb_typeof(value) <> 'number' OR (value #>> '{}')::numeric NOT BETWEEN lo AND hi THEN
            RETURN jsonb_build_object('error_kind', 'out_of_scale',
                                      'error_message', format('%s = %s (scale %s-%s)', dim, value::text, lo, hi));
        END IF;
        scores := scores || jsonb_build_object(dim, trim_scale((value #>> '{}')::numeric));
    END LOOP;
    RETURN jsonb_build_object('scores', scores);
END;
$$;

-- caller_v1: the role a statement runs as outside any SECURITY DEFINER function (its SET ROLE, else
-- the login), which definer code cannot read from current_user: it is how helpers refuse what the
-- caller cannot see.
CREATE FUNCTION evalledger.caller_v1() RETURNS name
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE current_setting('role') WHEN 'none' THEN session_user ELSE current_setting('role') END::name;
$$;

-- legal_hold_release_admit_v1: a release is stamped by the database, when and by whom (the
-- session's login, not a role it acts as), so the hold's history says who let it go.
CREATE FUNCTION evalledger.legal_hold_release_admit_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.released_at := now();
    NEW.released_by := session_user;
    RETURN NEW;
END;
$$;

-- reviewer_id_of_v1: the reviewer_user_id of a database role, asked about itself (NULL for
-- anyone else, and for another role than the caller's: reviewers do not look each other up).
CREATE FUNCTION evalledger.reviewer_id_of_v1(role_name name) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.reviewer_user_id FROM evalledger.reviewer r
     WHERE r.role_name = reviewer_id_of_v1.role_name AND r.role_name = evalledger.caller_v1();
$$;

-- What a definer helper may answer: only what its caller could read.
-- caller_reads_v1: whether the caller (caller_v1: its SET ROLE, else its login) may read a row of
-- the given tier clock and, for a brain-eval run's rows, of the given reviewer: what the read
-- policies say (auditors and the owner role everything; the runner and RevOps the hot tier; a
-- reviewer its own hot runs). Definer helpers read past the policies and ask this before they
-- answer, so they answer only about what their caller could read itself, and a refusal reads the
-- same for a row the caller cannot see as for one that does not exist.
CREATE FUNCTION evalledger.caller_reads_v1(clock timestamptz, reviewer uuid) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT clock IS NOT NULL
       AND (pg_has_role(evalledger.caller_v1(), 'evalledger_auditor', 'USAGE')
            OR pg_has_role(evalledger.caller_v1(), 'evalledger_owner', 'USAGE')
            OR (clock >= evalledger.hot_tier_start_v1()
                AND (pg_has_role(evalledger.caller_v1(), 'evalledger_runner', 'USAGE')
                     OR pg_has_role(evalledger.caller_v1(), 'evalledger_revops', 'USAGE')
                     OR (reviewer IS NOT NULL
                         AND reviewer = (SELECT r.reviewer_user_id FROM evalledger.reviewer r
                                          WHERE r.role_name = evalledger.caller_v1())))))
$$;

-- =============================================================================================
-- brain-eval: admission, reviewer independence, question rows, the decision
-- =============================================================================================
-- prompt_tuner_admit_v2: a prompt tuner may not be registered while reviewing an open run of the
-- same brain, or of a prompt that brain owns (brain_prompt: it registered the prompt or carried it
-- in an analysis), looked up by key. The target row is taken FOR NO KEY UPDATE, which waits for (and
-- is waited on by) a run insert's FOR SHARE, so the two checks always see each other's committed rows.
CREATE FUNCTION evalledger.prompt_tuner_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_read_committed_v2('a prompt tuner''s registration (reviewer independence)');
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.target_id FOR NO KEY UPDATE;
    IF EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                WHERE l.reviewer_user_id = NEW.user_id AND l.completed_at IS NULL
                  AND (l.brain_under_test = NEW.target_id
                       OR EXISTS (SELECT 1 FROM evalledger.brain_prompt p
                                   WHERE p.system_prompt_hash = l.system_prompt_hash AND p.target_id = NEW.target_id))) THEN
        RAISE EXCEPTION 'evalledger: % reviews an open run of %: complete it before registering them as a prompt tuner',
                NEW.user_id, NEW.target_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'prompt_tuner_not_reviewing_open_run';
    END IF;
    NEW.registered_at := now();
    RETURN NEW;
END;
$$;

-- brain_eval_log_admit_v2: a new run starts in progress, with nothing the database computes or
-- the reviewer enters supplied by the caller, started neither in the future nor more than a day
-- (in UTC, by the statement's clock: utc_ago_v1) before it is recorded unless an import in the
-- same transaction says it is historical, under an activated rubric, over a loaded question
-- catalog, of a prompt its brain registered, and with a reviewer independent of every brain that
-- owns that prompt (brain_prompt, read by key). A refusal for independence names neither the brain
-- nor who tunes it: the runner may not read the tuner registry.
CREATE FUNCTION evalledger.brain_eval_log_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_open_v1('run', NEW.completed_at, 'question rows');
    PERFORM evalledger.refuse_supplied_v1(
        'brain_eval_log',
        jsonb_build_object(
            'reviewer_independence_verified', NEW.reviewer_independence_verified,
            'aggregated_scores', NEW.aggregated_scores,
            'hard_criteria_passed', NEW.hard_criteria_passed,
            'soft_criteria_passed_count', NEW.soft_criteria_passed_count,
            'decision', NEW.decision,
            'decision_rationale', NEW.decision_rationale,
            'token_cost_usd', NEW.token_cost_usd));
    IF NEW.reviewer_hours_spent IS NOT NULL OR NEW.calibration_notes IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: brain_eval_log.reviewer_hours_spent and calibration_notes are the reviewer''s to enter, not the runner''s'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'the run''s reviewer signs off with them (evalledger review finish); completion copies them onto the run';
    END IF;
    IF NEW.started_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: started_at % is in the future', NEW.started_at
            USING ERRCODE = 'check_violation', COLUMN = 'started_at', CONSTRAINT = 'brain_eval_log_started_not_in_future';
    END IF;
    IF NEW.started_at < evalledger.utc_ago_v1(evalledger.backdating_window_v1()) AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i
            WHERE i.import_id = NEW.import_id AND i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: started_at % is more than a day before the run is recorded', NEW.started_at
            USING ERRCODE = 'check_violation', COLUMN = 'started_at', CONSTRAINT = 'brain_eval_log_started_recently',
                  HINT = 'historical runs are recorded through an import (evalledger brain-eval record --historical REASON)';
    END IF;
    IF NEW.import_id IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i
            WHERE i.import_id = NEW.import_id AND i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: import % was not made in this transaction', NEW.import_id
            USING ERRCODE = 'check_violation', COLUMN = 'import_id', CONSTRAINT = 'brain_eval_log_import_in_transaction';
    END IF;

    NEW.rubric_id := evalledger.rubric_admitted_v2('brain-eval', NEW.rubric_id);
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = NEW.question_catalog_version) THEN
        RAISE EXCEPTION 'evalledger: question catalog % is not loaded', NEW.question_catalog_version
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'question_catalog_version',
                  CONSTRAINT = 'brain_eval_log_catalog_loaded',
                  HINT = 'load it first (evalledger catalog load FILE): its stale-fixture questions and sources are policy';
    END IF;

    -- The prompt under review is one its brain registered (`brain add`); independence is asked of
    -- the tuners of every brain that owns it (brain_prompt). Holding their target rows FOR SHARE makes
    -- a concurrent prompt-tuner registration (FOR NO KEY UPDATE) wait for this run or run first, and
    -- holding the prompt's registry rows FOR SHARE does the same for a brain taking the prompt on
    -- (brain_prompt_claim_v1, FOR UPDATE): never both unseen by the other.
    PERFORM evalledger.require_read_committed_v2('a run''s admission (reviewer independence)');
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_version v
                    WHERE v.target_id = NEW.brain_under_test AND v.system_prompt_hash = NEW.system_prompt_hash) THEN
        RAISE EXCEPTION 'evalledger: % has no registered version with system prompt %',
                NEW.brain_under_test, NEW.system_prompt_hash
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'system_prompt_hash',
                  CONSTRAINT = 'brain_eval_log_prompt_registered',
                  HINT = 'register the brain version with evalledger brain add';
    END IF;
    PERFORM 1 FROM evalledger.target t
     WHERE t.target_id IN (SELECT p.target_id FROM evalledger.brain_prompt p
                            WHERE p.system_prompt_hash = NEW.system_prompt_hash)
     ORDER BY t.target_id FOR SHARE;
    PERFORM 1 FROM evalledger.brain_prompt p WHERE p.system_prompt_hash = NEW.system_prompt_hash
     ORDER BY p.target_id FOR SHARE;
    -- The reviewer must exist before independence is asked: the refusal below would otherwise
    -- tell the runner who tunes a prompt, for any uuid it tries (it may not read the registry).
    IF NOT EXISTS (SELECT 1 FROM evalledger.reviewer r WHERE r.reviewer_user_id = NEW.reviewer_user_id) THEN
        RAISE EXCEPTION 'evalledger: no reviewer %', NEW.reviewer_user_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_fkey';
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.prompt_tuner t JOIN evalledger.brain_prompt p USING (target_id)
                WHERE t.user_id = NEW.reviewer_user_id AND p.system_prompt_hash = NEW.system_prompt_hash) THEN
        RAISE EXCEPTION 'evalledger: reviewer % is not independent of this run''s system prompt', NEW.reviewer_user_id
            USING ERRCODE = 'check_violation', COLUMN = 'reviewer_user_id',
                  CONSTRAINT = 'brain_eval_log_reviewer_independent',
                  HINT = 'pick a reviewer who tunes no brain that owns this prompt';
    END IF;
    NEW.reviewer_independence_verified := true;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- brain_analysis_log_admit_v1: an analysis (production traffic, or a brain's eval answer) is
-- produced neither in the future nor more than a day (in UTC, by the statement's clock) before it
-- is recorded, unless an audited import (brain_eval_import) was made in the same transaction: a
-- caller's produced_at never answers a run it predates, nor stays "latest" from 2099. Its brain
-- then owns its prompt (brain_prompt_claim_v1), for independence, levers and holds by key.
CREATE FUNCTION evalledger.brain_analysis_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.produced_at := coalesce(NEW.produced_at, now());
    IF NEW.produced_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: produced_at % is in the future', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at',
                  CONSTRAINT = 'brain_analysis_log_produced_not_in_future';
    END IF;
    IF NEW.produced_at < evalledger.utc_ago_v1(evalledger.backdating_window_v1()) AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i WHERE i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: produced_at % is more than a day before the analysis is recorded', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at',
                  CONSTRAINT = 'brain_analysis_log_produced_recently',
                  HINT = 'historical analyses are recorded through an import made in the same transaction '
                         '(evalledger brain-eval record --historical REASON)';
    END IF;
    -- An unknown brain or a malformed hash is left to the row's own foreign key and CHECK.
    IF NEW.system_prompt_hash ~ '^[0-9a-f]{64}$'
       AND EXISTS (SELECT 1 FROM evalledger.target t WHERE t.target_id = NEW.brain) THEN
        PERFORM evalledger.brain_prompt_claim_v1(NEW.brain, NEW.system_prompt_hash, 'analysis');
    END IF;
    RETURN NEW;
END;
$$;

-- Policy by the prompt (issue 17): who owns a prompt, its brains, its levers.
-- brain_prompt_claim_v1: brain `brain` shows system prompt `prompt_hash` (a version registers it,
-- or one of its analyses carries it): recorded once in brain_prompt, the registry every rule that
-- follows the prompt rather than the label reads by key (independence, lever mapping, question
-- needs, brain legal holds). A brain may not take on a prompt while a run of that prompt under
-- another brain is open: that run's reviewer was found independent of the prompt's brains as they
-- were, and its lever policy was fixed when it was admitted. The new claim locks the prompt's
-- registry rows FOR UPDATE; a run's admission holds them FOR SHARE, so whichever commits first is
-- seen by the other (under READ COMMITTED, which this checks).
CREATE FUNCTION evalledger.brain_prompt_claim_v1(brain varchar, prompt_hash varchar, seen_as text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM evalledger.brain_prompt p
                WHERE p.system_prompt_hash = prompt_hash AND p.target_id = brain) THEN
        RETURN;
    END IF;
    PERFORM evalledger.require_read_committed_v2('a brain taking on a prompt');
    PERFORM 1 FROM evalledger.brain_prompt p WHERE p.system_prompt_hash = prompt_hash
     ORDER BY p.target_id FOR UPDATE;
    IF EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                WHERE l.system_prompt_hash = prompt_hash AND l.completed_at IS NULL AND l.brain_under_test <> brain) THEN
        RAISE EXCEPTION 'evalledger: % cannot take on system prompt % while a run of it under another brain is open',
                brain, prompt_hash
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_prompt_no_open_run_of_another_brain',
                  HINT = 'complete that run first: its reviewer and its lever policy were decided without this brain';
    END IF;
    INSERT INTO evalledger.brain_prompt (system_prompt_hash, target_id, seen_as)
    VALUES (prompt_hash, brain, seen_as)
    ON CONFLICT ON CONSTRAINT brain_prompt_pkey DO NOTHING;
END;
$$;

-- run_brains_v1: the brains a run (or an analysis) of label `brain` and system prompt `prompt_hash`
-- belongs to: its label and every brain that registered the prompt or carried it in an analysis
-- (brain_prompt, by key; reference data every reading role may read). Policy follows the prompt, not the label: the lever mapping, the question
-- needs, the hard criteria that apply to a brain, and a legal hold on a brain all ask this.
CREATE FUNCTION evalledger.run_brains_v1(brain varchar, prompt_hash varchar) RETURNS text[]
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT ARRAY(SELECT b FROM (SELECT brain::text AS b
                                UNION
                                SELECT p.target_id::text FROM evalledger.brain_prompt p
                                 WHERE p.system_prompt_hash = prompt_hash) x
                  WHERE b IS NOT NULL ORDER BY b)
$$;

-- brain_eval_levers_v1: the lever enum the proposed actions of a run's answers must keep to, or NULL
-- where the rubric maps levers for none of the run's brains (run_brains_v1: its label and every
-- brain of its prompt). The levers are those every registered version of a lever-mapped brain with
-- this prompt has (the strictest reading where two disagree); none when no such version exists, so
-- that every proposed action then counts as outside the levers: unknown levers are not met.
CREATE FUNCTION evalledger.brain_eval_levers_v1(brain varchar, prompt_hash varchar, policy jsonb) RETURNS text[]
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH mapped AS (
        SELECT b FROM unnest(evalledger.run_brains_v1(brain, prompt_hash)) b
         WHERE coalesce(policy #> '{question_pass,lever_mapping_applies_to}' ? b, false)
    ),
    versions AS (
        SELECT v.levers FROM evalledger.brain_version v
         WHERE v.system_prompt_hash = prompt_hash AND v.target_id IN (SELECT b FROM mapped)
    )
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM mapped) THEN NULL
                ELSE ARRAY(SELECT l FROM versions, unnest(versions.levers) l
                            GROUP BY l HAVING count(*) = (SELECT count(*) FROM versions) ORDER BY l) END
$$;

-- confidence_in_band_v1: a question's confidence distribution lies inside the rubric's band.
CREATE FUNCTION evalledger.confidence_in_band_v1(dist jsonb, band jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (dist ->> 'high_confidence_pct')::numeric
               BETWEEN (band -> 'high_confidence_pct' ->> 0)::numeric AND (band -> 'high_confidence_pct' ->> 1)::numeric
       AND (dist ->> 'speculation_pct')::numeric <= (band ->> 'speculation_pct_max')::numeric;
$$;

-- brain_eval_scores_v1: the seven aggregated_scores of a run, computed from its question rows,
-- exact (the decision compares these; rounding is for display). A score with nothing to measure
-- is null: no claims, no stale-fixture question, no lever mapping, no diagnosis-type question.
CREATE FUNCTION evalledger.brain_eval_scores_v1(run_id uuid, band jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'citation_rate', avg(q.citation_rate),
        'hallucination_rate', sum(q.hallucinations_detected)::numeric / nullif(sum(q.total_claims), 0),
        'staleness_recognition_rate',
            count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized)::numeric
                / nullif(count(*) FILTER (WHERE q.uses_stale_fixture), 0),
        'diagnosis_accuracy_mean', avg(q.diagnosis_accuracy_score),
        'lever_mapping_correctness',
            count(*) FILTER (WHERE q.lever_mapping_violations = 0)::numeric
                / nullif(count(q.lever_mapping_violations), 0),
        'confidence_calibration_in_band',
            avg(CASE WHEN evalledger.confidence_in_band_v1(q.confidence_distribution, band) THEN 1 ELSE 0 END),
        'narrative_coherence_mean', avg(q.narrative_coherence_rating))
      FROM evalledger.brain_eval_question_score q
     WHERE q.eval_run_id = run_id;
$$;

-- criterion_met_v1: value against a rubric criterion's operator and threshold.
CREATE FUNCTION evalledger.criterion_met_v1(criterion jsonb, value numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE criterion ->> 'op'
             WHEN '>=' THEN value >= (criterion ->> 'threshold')::numeric
             WHEN '<=' THEN value <= (criterion ->> 'threshold')::numeric
           END;
$$;

-- shown_apart_v1: value rounded to `digits` decimals for a rationale, or to as many more as it takes
-- (up to 12) to tell it from `other` when the rounding would print them the same: a missed
-- threshold never reads as met ("2% above the 2% limit" is 2.00004%).
CREATE FUNCTION evalledger.shown_apart_v1(value numeric, other numeric, digits integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT trim_scale(round(value, coalesce(
               (SELECT d FROM generate_series(digits, 12) AS d
                 WHERE round(value, d) IS DISTINCT FROM round(other, d) ORDER BY d LIMIT 1), digits)))::text;
$$;

-- criterion_miss_v1: a missed criterion as a phrase for the rationale, e.g. "citation rate 3pp below
-- 95%", or, for a score with nothing to measure (null), what was missing: never counted as met.
CREATE FUNCTION evalledger.criterion_miss_v1(criterion jsonb, value numeric) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH c AS (
        SELECT criterion ->> 'label' AS label,
               (criterion ->> 'threshold')::numeric AS threshold,
               criterion ->> 'unit' = 'rate' AS is_rate,
               criterion ->> 'op' AS op)
    SELECT CASE
             WHEN value IS NULL THEN
                 format('%s unmeasurable (%s)', label, CASE criterion ->> 'key'
                     WHEN 'hallucination_rate' THEN 'no claims in the run'
                     WHEN 'staleness_recognition_rate' THEN 'no stale-fixture question in the run'
                     WHEN 'lever_mapping_correctness' THEN 'no lever mapping scored'
                     WHEN 'diagnosis_accuracy_mean' THEN 'no question of a diagnosis type in the run'
                     ELSE 'nothing in the run to measure it' END)
             WHEN op = '<=' AND is_rate THEN
                 format('%s %s%% above the %s%% limit', label,
                        evalledger.shown_apart_v1(value * 100, threshold * 100, 2), trim_scale(round(threshold * 100, 2)))
             WHEN op = '<=' THEN
                 format('%s %s above the %s limit', label, evalledger.shown_apart_v1(value, threshold, 2),
                        trim_scale(threshold))
             WHEN is_rate THEN
                 format('%s %spp below %s', label, evalledger.shown_apart_v1((threshold - value) * 100, 0, 1),
                        coalesce(criterion ->> 'target_label', trim_scale(round(threshold * 100, 2)) || '%'))
             ELSE
                 format('%s %s below %s', label, evalledger.shown_apart_v1(threshold - value, 0, 2),
                        coalesce(criterion ->> 'target_label', trim_scale(threshold)::text))
           END
      FROM c;
$$;

-- Automatic scores: one computation for harness and recorded runs.
-- brain_eval_claims_problem_v1: what keeps the database from scoring an answer's claims (NULL when
-- nothing): the answer contract's claims are an array of objects, each with `numerical` true or
-- false, `source_ids` an array of source ids (strings), and `confidence` one of high, multi_source,
-- inference or speculation. Citation rate and the confidence distribution are computed from exactly
-- these, so an answer that lacks them cannot be scored, and is not taken.
CREATE FUNCTION evalledger.brain_eval_claims_problem_v1(claims jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
             WHEN jsonb_typeof(claims) IS DISTINCT FROM 'array' THEN 'claims is not an array'
             ELSE (SELECT format('claim %s needs numerical (true or false), source_ids (a list of source ids) and '
                                 'confidence (high, multi_source, inference or speculation)', n - 1)
                     FROM jsonb_array_elements(claims) WITH ORDINALITY x(c, n)
                    WHERE jsonb_typeof(c) IS DISTINCT FROM 'object'
                       OR jsonb_typeof(c -> 'numerical') IS DISTINCT FROM 'boolean'
                       OR jsonb_typeof(c -> 'source_ids') IS DISTINCT FROM 'array'
                       OR jsonb_path_exists(c, '$.source_ids[*] ? (@.type() != "string")')
                       OR coalesce(c ->> 'confidence', '') NOT IN ('high', 'multi_source', 'inference', 'speculation')
                    ORDER BY n LIMIT 1)
           END
$$;

-- brain_eval_answer_scores_v1: an answer's automatic scores, computed by the database from what the
-- analysis row holds, the same for a harness run and a recorded one: citation_rate (numerical claims
-- citing at least one source, and only sources given for the question, over numerical claims; 1 when
-- there are none), the confidence distribution (percent of claims per confidence label), and, where
-- `levers` is not NULL (the rubric maps levers for one of the run's brains), the proposed actions
-- whose action_type is not one of them. An answer that broke the contract scores nothing: 0, all
-- zero, and (where levers apply) 1 violation. Unrounded but for the stored scales (4 and 2 decimals).
CREATE FUNCTION evalledger.brain_eval_answer_scores_v1(claims jsonb, given jsonb, actions jsonb, levers text[],
                                                       broke_contract boolean) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN broke_contract THEN jsonb_build_object(
                    'citation_rate', 0,
                    'confidence_distribution', jsonb_build_object('high_confidence_pct', 0, 'multi_source_pct', 0,
                                                                  'inference_pct', 0, 'speculation_pct', 0),
                    'lever_mapping_violations', CASE WHEN levers IS NOT NULL THEN 1 END)
           ELSE jsonb_build_object(
                    'citation_rate', CASE WHEN c.numerical = 0 THEN 1 ELSE round(c.cited::numeric / c.numerical, 4) END,
                    'confidence_distribution', jsonb_build_object(
                        'high_confidence_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.high / c.total, 2) END,
                        'multi_source_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.multi / c.total, 2) END,
                        'inference_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.inference / c.total, 2) END,
                        'speculation_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.speculation / c.total, 2) END),
                    'lever_mapping_violations', CASE WHEN levers IS NOT NULL THEN (
                        SELECT count(*) FROM jsonb_array_elements(
                                   CASE jsonb_typeof(actions) WHEN 'array' THEN actions ELSE '[]' END) AS p
                         WHERE (p ->> 'action_type') IS NULL OR NOT (p ->> 'action_type') = ANY (levers)) END)
           END
      FROM (SELECT count(*) FILTER (WHERE (x ->> 'numerical')::boolean) AS numerical,
                   count(*) FILTER (WHERE (x ->> 'numerical')::boolean
                                      AND jsonb_array_length(x -> 'source_ids') > 0
                                      AND NOT EXISTS (
                                          SELECT 1 FROM jsonb_array_elements_text(x -> 'source_ids') AS s(id)
                                           WHERE NOT jsonb_path_exists(coalesce(given, '[]'), '$[*] ? (@.id == $id)',
                                                                       jsonb_build_object('id', s.id)))) AS cited,
                   count(*) AS total,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'high') AS high,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'multi_source') AS multi,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'inference') AS inference,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'speculation') AS speculation
              FROM jsonb_array_elements(CASE WHEN broke_contract OR jsonb_typeof(claims) IS DISTINCT FROM 'array'
                                             THEN '[]' ELSE claims END) AS x) c
$$;

-- lock_run_v1: lock a run FOR SHARE so its completion cannot slip between a question row's
-- check and its write. SECURITY DEFINER because locking needs UPDATE rights no application role
-- holds (docs/guards.md, section 21); so it locks only a run the caller may read (caller_reads_v1:
-- the runner a hot run, a reviewer its own hot runs), and does nothing, as for a run that does not
-- exist, for any other: it neither blocks another's completion or purge nor reveals a run.
CREATE FUNCTION evalledger.lock_run_v1(run_id uuid) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = run_id
       AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id)
       FOR SHARE OF l;
$$;

-- question_fields_needed_v1: question_needs_v2's rule over the fields it reads, for callers that
-- read a question row column by column (the reviewer's queue and question list).
CREATE FUNCTION evalledger.question_fields_needed_v1(
    question_type text, uses_stale_fixture boolean, hallucinations_detected integer, total_claims integer,
    staleness_correctly_recognized boolean, diagnosis_accuracy_score numeric, narrative_coherence_rating integer,
    lever_mapping_violations integer, policy jsonb, brains text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_remove(ARRAY[
        CASE WHEN hallucinations_detected IS NULL THEN 'hallucinations_detected' END,
        CASE WHEN total_claims IS NULL THEN 'total_claims' END,
        CASE WHEN uses_stale_fixture AND staleness_correctly_recognized IS NULL
             THEN 'staleness_correctly_recognized' END,
        CASE WHEN diagnosis_accuracy_score IS NULL
              AND coalesce(policy -> 'diagnosis_question_types' ? question_type, false)
             THEN 'diagnosis_accuracy_score' END,
        CASE WHEN narrative_coherence_rating IS NULL THEN 'narrative_coherence_rating' END,
        CASE WHEN lever_mapping_violations IS NULL
              AND coalesce(policy #> '{question_pass,lever_mapping_applies_to}' ?| brains, false)
             THEN 'lever_mapping_violations' END], NULL);
$$;

-- question_needs_v2: the fields a question row still lacks for its criteria, in the order a
-- reviewer enters them: the reviewer's counts and coherence always, staleness on a stale-fixture
-- question, diagnosis accuracy where the rubric says the question type has it, lever violations
-- where the rubric maps levers for one of the run's brains (run_brains_v1: the label and every
-- brain of the prompt, not the label alone). Empty when the row is whole. The rule is
-- question_fields_needed_v1's, which takes the fields one by one: a reviewer, who may not read a
-- row's question_passed before its run completes, cannot pass the whole row.
CREATE FUNCTION evalledger.question_needs_v2(
    q evalledger.brain_eval_question_score, policy jsonb, brains text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT evalledger.question_fields_needed_v1(
        q.question_type, q.uses_stale_fixture, q.hallucinations_detected, q.total_claims,
        q.staleness_correctly_recognized, q.diagnosis_accuracy_score, q.narrative_coherence_rating,
        q.lever_mapping_violations, policy, brains);
$$;

-- question_passes_v2: a question row against its pass criteria (the catalog question's own, over
-- the rubric's question_pass defaults), compared on exact values. NULL while the row lacks a field
-- its criteria need (question_needs_v2); never true for an answer that broke the contract, nor for
-- one with no claims to check: evidence that cannot be measured does not pass. The lever criterion
-- applies where the rubric maps levers for one of the run's brains (its prompt's, not its label's).
CREATE FUNCTION evalledger.question_passes_v2(
    q evalledger.brain_eval_question_score, policy jsonb, brains text[], criteria jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    WITH p AS (SELECT (policy -> 'question_pass') || coalesce(nullif(criteria, 'null'::jsonb), '{}') AS c)
    SELECT CASE
             WHEN cardinality(evalledger.question_needs_v2(q, policy, brains)) > 0 THEN NULL
             ELSE NOT coalesce((c ->> 'answer_broke_contract')::boolean, false)
              AND q.total_claims > 0
              AND q.hallucinations_detected <= (c ->> 'max_hallucinations')::numeric
              AND q.citation_rate >= (c ->> 'min_citation_rate')::numeric
              AND (NOT q.uses_stale_fixture OR q.staleness_correctly_recognized)
              AND (NOT coalesce(policy -> 'diagnosis_question_types' ? q.question_type, false)
                   OR q.diagnosis_accuracy_score >= (c ->> 'min_diagnosis_accuracy')::numeric)
              AND q.narrative_coherence_rating >= (c ->> 'min_narrative_coherence')::numeric
              AND (NOT coalesce((policy #> '{question_pass,lever_mapping_applies_to}') ?| brains, false)
                   OR q.lever_mapping_violations <= (c ->> 'max_lever_violations')::numeric)
           END
      FROM p;
$$;

-- brain_eval_question_policy_v2: what a question row of a run is judged by: its run's rubric
-- (`policy`), the run's brains (`brains`: its label and every brain of its prompt), how many claims
-- the stored answer holds (`answer_claims`, the bound of the reviewer's counts) and, for a harness
-- run, the catalog question's own pass thresholds with whether its answer broke the contract
-- (`criteria`; never its expected findings, which a reviewer reads only once its numbers are saved,
-- recorded: brain_eval_show_reference_v2). SECURITY DEFINER (read once past the caller's policies, which would otherwise scan
-- the caller's runs for every table joined), so it answers only about a run its caller may read
-- (caller_reads_v1): NULL for any other, as for a run that does not exist. Its parameters are named
-- with the function's name: brain_analysis_log has a column `question` too.
CREATE FUNCTION evalledger.brain_eval_question_policy_v2(run_id uuid, question text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'policy', r.definition,
        'brains', to_jsonb(evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash)),
        'answer_claims', (SELECT jsonb_array_length(a.claims)
                            FROM evalledger.brain_eval_question_score q
                            JOIN evalledger.brain_analysis_log a ON a.analysis_id = q.brain_analysis_id
                           WHERE q.eval_run_id = brain_eval_question_policy_v2.run_id AND q.question_id = brain_eval_question_policy_v2.question),
        'criteria', (SELECT (c.pass_criteria - 'expected_findings'::text) || jsonb_build_object('answer_broke_contract', a.contract_error IS NOT NULL)
                       FROM evalledger.brain_eval_harness_run h
                       JOIN evalledger.brain_eval_catalog_question c
                         ON c.catalog_version = h.catalog_version AND c.question_id = brain_eval_question_policy_v2.question
                       LEFT JOIN evalledger.brain_eval_harness_answer a
                         ON a.eval_run_id = h.eval_run_id AND a.question_id = brain_eval_question_policy_v2.question
                      WHERE h.eval_run_id = brain_eval_question_policy_v2.run_id))
      FROM evalledger.brain_eval_log l JOIN evalledger.rubric r USING (rubric_id)
     WHERE l.eval_run_id = brain_eval_question_policy_v2.run_id AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id);
$$;

-- brain_eval_decide_v2: the computed columns of a completed run (aggregates, criteria, decision,
-- rationale, cost), read from the rubric the run names, every threshold compared on exact values
-- and an unmeasurable score counted as missed. One function so the trigger and the tests that
-- explain a decision read the same policy. A hard criterion that applies to some brains applies when
-- any of the run's brains (run_brains_v1: its label and every brain of its prompt) is one of them.
CREATE FUNCTION evalledger.brain_eval_decide_v2(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    policy jsonb;
    brains text[] := evalledger.run_brains_v1(run.brain_under_test, run.system_prompt_hash);
    scores jsonb;
    criterion jsonb;
    value numeric;
    hard_passed boolean := true;
    hard_misses text[] := '{}';
    soft_misses text[] := '{}';
    soft_passed int := 0;
    soft_total int := 0;
    decided text;
    label text;
    rationale text;
BEGIN
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    scores := evalledger.brain_eval_scores_v1(run.eval_run_id, policy -> 'confidence_band');

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'hard_criteria') LOOP
        CONTINUE WHEN criterion ? 'applies_to' AND NOT (criterion -> 'applies_to') ?| brains;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        -- Unmeasurable (null) is not met: missing evidence never passes.
        IF NOT coalesce(evalledger.criterion_met_v1(criterion, value), false) THEN
            hard_passed := false;
            hard_misses := hard_misses || evalledger.criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'soft_criteria') LOOP
        soft_total := soft_total + 1;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        IF coalesce(evalledger.criterion_met_v1(criterion, value), false) THEN
            soft_passed := soft_passed + 1;
        ELSE
            soft_misses := soft_misses || evalledger.criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    IF hard_passed THEN
        SELECT step ->> 'decision' INTO decided
          FROM jsonb_array_elements(policy -> 'decision_ladder') step
         WHERE (step ->> 'min_soft_passed')::int <= soft_passed
         ORDER BY (step ->> 'min_soft_passed')::int DESC LIMIT 1;
    ELSE
        decided := policy ->> 'hard_failure_decision';
    END IF;
    label := upper(left(decided, 1)) || replace(substr(decided, 2), '_', ' ');

    IF NOT hard_passed THEN
        rationale := format('%s: hard criteria missed: %s', label, array_to_string(hard_misses, '; '))
            || CASE WHEN cardinality(soft_misses) > 0
                    THEN '; also ' || array_to_string(soft_misses, '; ') ELSE '' END || '.';
    ELSIF cardinality(soft_misses) = 0 THEN
        rationale := format('%s: all hard criteria passed; all %s soft criteria within threshold.', label, soft_total);
    ELSE
        rationale := format('%s: %s; all hard criteria passed', label, array_to_string(soft_misses, '; '))
            || CASE WHEN decided = 'fail'
                    THEN format(', but only %s of %s soft criteria within threshold', soft_passed, soft_total)
                    ELSE '' END || '.';
    END IF;

    RETURN jsonb_build_object(
        'aggregated_scores', scores,
        'hard_criteria_passed', hard_passed,
        'soft_criteria_passed_count', soft_passed,
        'decision', decided,
        'decision_rationale', rationale,
        'token_cost_usd', (SELECT coalesce(sum(a.token_cost_usd), 0)
                             FROM evalledger.brain_eval_question_score q
                             JOIN evalledger.brain_analysis_log a ON a.analysis_id = q.brain_analysis_id
                            WHERE q.eval_run_id = run.eval_run_id));
END;
$$;

-- brain_eval_log_decide_v2: on completion, check the run is whole and write what it decided. Whole
-- means: question_count question rows; each with every field its criteria need (question_needs_v2, the
-- lever field where the rubric maps levers for a brain of the run's prompt);
-- every stale-fixture question its catalog version declares (the catalog is loaded: admission requires it); and the
-- reviewer's sign-off (brain_eval_run_review), whose hours and notes are copied onto the run. One
-- refusal lists everything missing, by question id.
CREATE FUNCTION evalledger.brain_eval_log_decide_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    policy jsonb;
    brains text[] := evalledger.run_brains_v1(NEW.brain_under_test, NEW.system_prompt_hash);
    scored int;
    missing text[] := '{}';
    stale_missing text;
    signed evalledger.brain_eval_run_review;
    computed jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('run');
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;
    SELECT count(*) INTO scored FROM evalledger.brain_eval_question_score q WHERE q.eval_run_id = NEW.eval_run_id;
    IF scored <> NEW.question_count THEN
        missing := missing || format('question_count is %s but %s questions are recorded', NEW.question_count, scored);
    END IF;
    missing := missing || ARRAY(
        SELECT format('%s: %s', n.question_id, array_to_string(n.needs, ', '))
          FROM (SELECT q.question_id, evalledger.question_needs_v2(q, policy, brains) AS needs
                  FROM evalledger.brain_eval_question_score q
                 WHERE q.eval_run_id = NEW.eval_run_id) n
         WHERE cardinality(n.needs) > 0
         ORDER BY n.question_id);
    SELECT string_agg(c.question_id, ', ' ORDER BY c.position) INTO stale_missing
      FROM evalledger.brain_eval_catalog_question c
     WHERE c.catalog_version = NEW.question_catalog_version AND c.uses_stale_fixture
       AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q
                        WHERE q.eval_run_id = NEW.eval_run_id AND q.question_id = c.question_id);
    IF stale_missing IS NOT NULL THEN
        missing := missing || format('stale-fixture questions of the catalog not in the run: %s', stale_missing);
    END IF;
    SELECT v.* INTO signed FROM evalledger.brain_eval_run_review v
     WHERE v.eval_run_id = NEW.eval_run_id ORDER BY v.created_at DESC, v.review_id DESC LIMIT 1;
    IF signed.review_id IS NULL THEN
        missing := missing || 'the reviewer''s sign-off (hours spent: evalledger review finish)'::text;
    END IF;
    IF cardinality(missing) > 0 THEN
        RAISE EXCEPTION 'evalledger: run % is not complete: %', NEW.eval_run_id, array_to_string(missing, '; ')
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_log_complete_run_is_whole',
                  HINT = 'the run''s reviewer enters what is missing (evalledger review), then complete it again';
    END IF;

    computed := evalledger.brain_eval_decide_v2(NEW);
    NEW.aggregated_scores := computed -> 'aggregated_scores';
    NEW.hard_criteria_passed := (computed ->> 'hard_criteria_passed')::boolean;
    NEW.soft_criteria_passed_count := (computed ->> 'soft_criteria_passed_count')::int;
    NEW.decision := (computed ->> 'decision')::evalledger.eval_decision;
    NEW.decision_rationale := computed ->> 'decision_rationale';
    NEW.token_cost_usd := (computed ->> 'token_cost_usd')::numeric;
    NEW.reviewer_hours_spent := signed.reviewer_hours_spent;
    NEW.calibration_notes := signed.calibration_notes;
    RETURN NEW;
END;
$$;

-- A question row: who may change what (the write trigger), then its verdict (the judge trigger,
-- a definer: no application role holds EXECUTE on the thresholds it reads).
-- brain_eval_question_verdict_v1: a question row's question_passed, by what the row is judged by
-- (`judged_by`, as brain_eval_question_policy_v2 gives it: its run's rubric, the run's brains, the
-- catalog question's own thresholds; its caller reads that once for its other checks too) and
-- question_passes_v2. The one rule both the write path
-- (brain_eval_question_score_judge_v1) and the ledger's recompute (ledger_recompute_v3) decide a
-- question row by, so a verdict is re-derived by the very SQL that decided it. No role may call it:
-- given a row of one's own making it would answer whether those numbers pass, an oracle for the
-- thresholds that a reviewer must not read before scoring (docs/guards.md section 22).
CREATE FUNCTION evalledger.brain_eval_question_verdict_v1(q evalledger.brain_eval_question_score, judged_by jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.question_passes_v2(q, judged_by -> 'policy',
                                         ARRAY(SELECT jsonb_array_elements_text(judged_by -> 'brains')),
                                         judged_by -> 'criteria')
$$;

-- brain_eval_question_score_write_v4: brain_eval_question_score_write_v3 without the part that reads
-- what a row is judged by (issue 17, class 8): on UPDATE it checks only who may change what, and the
-- row is then judged by brain_eval_question_score_judge_v1, the next BEFORE UPDATE trigger, which
-- reads the question's pass thresholds with the code role's rights so that the reviewer never can.
-- As v3: question rows join only runs in progress, as the run's loaded catalog describes the
-- question, with an analysis that is this run's brain, model and prompt answering this question
-- since the run started. The automatic fields are the database's: citation rate, confidence
-- distribution and lever violations are computed here from the analysis (its claims, the sources the
-- catalog gives the question, its proposed actions, and the lever enum of the prompt's lever-mapped
-- brain: brain_eval_answer_scores_v1, as for a harness answer), and a supplied value that disagrees
-- is refused. The reviewer's fields are NULL at insert; afterwards only the run's own reviewer enters
-- them, until completion. A row carries its run's clock and reviewer, stamped at insert from the run.
-- A harness run's rows are the database's, made from the brain's answers
-- (brain_eval_harness_question_v1). SECURITY INVOKER: current_user is the reviewer, or the code role
-- when the harness trigger inserts.
CREATE FUNCTION evalledger.brain_eval_question_score_write_v4() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    analysis evalledger.brain_analysis_log;
    asked evalledger.brain_eval_catalog_question;
    computed jsonb;
    policy jsonb;
    changed text;
    supplied text;
    disagrees text;
BEGIN
    PERFORM evalledger.lock_run_v1(NEW.eval_run_id);
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF NOT FOUND THEN
        -- Not left to the foreign key: session_replication_role = replica skips that check.
        RAISE EXCEPTION 'evalledger: no run %: a question row belongs to a run', NEW.eval_run_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'eval_run_id',
                  CONSTRAINT = 'brain_eval_question_score_run_fkey';
    END IF;
    IF run.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: run % is complete: its question rows are final', run.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    IF TG_OP = 'INSERT' THEN
        PERFORM evalledger.refuse_supplied_v1('brain_eval_question_score',
                                   jsonb_build_object('question_passed', NEW.question_passed));
        supplied := concat_ws(', ',
            CASE WHEN NEW.hallucinations_detected IS NOT NULL THEN 'hallucinations_detected' END,
            CASE WHEN NEW.total_claims IS NOT NULL THEN 'total_claims' END,
            CASE WHEN NEW.staleness_correctly_recognized IS NOT NULL THEN 'staleness_correctly_recognized' END,
            CASE WHEN NEW.diagnosis_accuracy_score IS NOT NULL THEN 'diagnosis_accuracy_score' END,
            CASE WHEN NEW.narrative_coherence_rating IS NOT NULL THEN 'narrative_coherence_rating' END,
            CASE WHEN NEW.reviewer_comments IS NOT NULL THEN 'reviewer_comments' END);
        IF supplied <> '' THEN
            RAISE EXCEPTION 'evalledger: brain_eval_question_score.% is the reviewer''s to enter, not the runner''s', supplied
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'insert the question row without it; the run''s reviewer enters it (evalledger review score)';
        END IF;
        IF current_user <> 'evalledger_code'
           AND EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_run h WHERE h.eval_run_id = run.eval_run_id) THEN
            RAISE EXCEPTION 'evalledger: run % is a harness run: its question rows come from the brain''s answers', run.eval_run_id
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'insert the answer (brain_eval_harness_answer); the database makes its question row';
        END IF;
        SELECT a.* INTO analysis FROM evalledger.brain_analysis_log a WHERE a.analysis_id = NEW.brain_analysis_id;
        IF analysis.analysis_id IS NULL OR analysis.origin <> 'eval' OR analysis.brain <> run.brain_under_test
           OR analysis.model_id <> run.model_id OR analysis.system_prompt_hash <> run.system_prompt_hash
           OR analysis.question_id IS DISTINCT FROM NEW.question_id THEN
            RAISE EXCEPTION 'evalledger: analysis % is not an eval answer of run %''s brain, model and prompt to %',
                    NEW.brain_analysis_id, run.eval_run_id, NEW.question_id
                USING ERRCODE = 'check_violation', COLUMN = 'brain_analysis_id',
                      CONSTRAINT = 'brain_eval_question_score_analysis_of_the_run';
        END IF;
        IF analysis.produced_at < run.started_at THEN
            RAISE EXCEPTION 'evalledger: analysis % was produced at %, before run % started at %', NEW.brain_analysis_id,
                    to_char(analysis.produced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), run.eval_run_id,
                    to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                USING ERRCODE = 'check_violation', COLUMN = 'brain_analysis_id',
                      CONSTRAINT = 'brain_eval_question_score_analysis_during_the_run';
        END IF;
        -- The run's catalog is loaded (its admission requires it): a question is one of it, as the
        -- catalog describes it.
        SELECT c.* INTO asked FROM evalledger.brain_eval_catalog_question c
         WHERE c.catalog_version = run.question_catalog_version AND c.question_id = NEW.question_id
           AND c.question_type = NEW.question_type AND c.uses_stale_fixture = NEW.uses_stale_fixture;
        IF asked.question_id IS NULL THEN
            RAISE EXCEPTION 'evalledger: catalog % has no question % of type % with uses_stale_fixture %',
                    run.question_catalog_version, NEW.question_id, NEW.question_type, NEW.uses_stale_fixture
                USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_question_score_as_its_catalog_says',
                      HINT = 'the question type and stale-fixture flag are the catalog''s (evalledger catalog show)';
        END IF;
        IF current_user <> 'evalledger_code' THEN
            disagrees := evalledger.brain_eval_claims_problem_v1(analysis.claims);
            IF disagrees IS NOT NULL THEN
                RAISE EXCEPTION 'evalledger: analysis % cannot be scored: %', NEW.brain_analysis_id, disagrees
                    USING ERRCODE = 'check_violation', COLUMN = 'brain_analysis_id',
                          CONSTRAINT = 'brain_eval_question_score_answer_scorable',
                          HINT = 'the database computes citation rate and confidence from the answer''s claims';
            END IF;
            SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
            computed := evalledger.brain_eval_answer_scores_v1(
                analysis.claims, asked.sources, analysis.proposed_actions,
                evalledger.brain_eval_levers_v1(run.brain_under_test, run.system_prompt_hash, policy), false);
            SELECT string_agg(format('%s %s (the answer gives %s)', f.field, f.supplied, f.computed), ', ' ORDER BY f.n)
              INTO disagrees
              FROM (VALUES
                      (1, 'citation_rate', to_jsonb(NEW.citation_rate), computed -> 'citation_rate'),
                      (2, 'confidence_distribution', to_jsonb(NEW.confidence_distribution), computed -> 'confidence_distribution'),
                      (3, 'lever_mapping_violations', to_jsonb(NEW.lever_mapping_violations),
                       computed -> 'lever_mapping_violations')) AS f(n, field, supplied, computed)
             WHERE f.supplied IS NOT NULL AND f.supplied <> 'null'::jsonb AND f.supplied <> f.computed;
            IF disagrees IS NOT NULL THEN
                RAISE EXCEPTION 'evalledger: brain_eval_question_score.%: computed by the database from the answer',
                        disagrees
                    USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_question_score_automatic_scores_computed',
                          HINT = 'leave the automatic scores out, or give what the answer''s claims and actions give';
            END IF;
            NEW.citation_rate := (computed ->> 'citation_rate')::numeric;
            NEW.confidence_distribution := computed -> 'confidence_distribution';
            NEW.lever_mapping_violations := (computed ->> 'lever_mapping_violations')::integer;
        END IF;
        NEW.created_at := now();
        NEW.run_created_at := run.created_at;
        NEW.run_reviewer_user_id := run.reviewer_user_id;
    ELSE
        changed := evalledger.changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY[
            'hallucinations_detected', 'total_claims', 'staleness_correctly_recognized', 'diagnosis_accuracy_score',
            'narrative_coherence_rating', 'reviewer_comments']);
        IF changed IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: only reviewer-scored fields of a question row change, not %', changed
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF evalledger.reviewer_id_of_v1(current_user) IS DISTINCT FROM run.reviewer_user_id THEN
            RAISE EXCEPTION 'evalledger: only the run''s reviewer scores its questions'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    RETURN NEW;
END;
$$;

-- brain_eval_question_score_judge_v1: judges a question row the run's reviewer has just changed
-- (BEFORE UPDATE, after brain_eval_question_score_write_v4 has checked who may change what):
-- diagnosis accuracy only on the question types the rubric scores it on, never more supported claims
-- (total minus hallucinations) than the stored answer holds, and question_passed computed
-- (brain_eval_question_verdict_v1). SECURITY DEFINER, so it reads the question's pass thresholds
-- with the code role's rights: the reviewer holds EXECUTE on neither the policy helper nor the
-- verdict, and may not attach this function to a table of its own either (CREATE TRIGGER needs
-- EXECUTE, which no role holds). What the refusals say is the reviewer's own input and the answer
-- it reads; they name no threshold.
CREATE FUNCTION evalledger.brain_eval_question_score_judge_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    judged_by jsonb := evalledger.brain_eval_question_policy_v2(NEW.eval_run_id, NEW.question_id);
BEGIN
    IF NEW.diagnosis_accuracy_score IS NOT NULL
       AND NOT coalesce(judged_by #> '{policy,diagnosis_question_types}' ? NEW.question_type, false) THEN
        RAISE EXCEPTION 'evalledger: diagnosis accuracy does not apply to a % question (%): leave it out',
                NEW.question_type, NEW.question_id
            USING ERRCODE = 'check_violation', COLUMN = 'diagnosis_accuracy_score',
                  CONSTRAINT = 'brain_eval_question_score_diagnosis_only_where_it_applies',
                  HINT = 'seed 002: it is NULL for question types where this dimension does not apply';
    END IF;
    IF NEW.total_claims - NEW.hallucinations_detected > (judged_by ->> 'answer_claims')::integer THEN
        RAISE EXCEPTION 'evalledger: % supported claims (% total, % unsupported) on %, whose answer holds % claims',
                NEW.total_claims - NEW.hallucinations_detected, NEW.total_claims, NEW.hallucinations_detected,
                NEW.question_id, judged_by ->> 'answer_claims'
            USING ERRCODE = 'check_violation', COLUMN = 'total_claims',
                  CONSTRAINT = 'brain_eval_question_score_claims_within_answer',
                  HINT = 'a claim the answer does not list is unsupported: count it as a hallucination too';
    END IF;
    NEW.question_passed := evalledger.brain_eval_question_verdict_v1(NEW, judged_by);
    RETURN NEW;
END;
$$;

-- brain_eval_review_trail_v1: after a reviewer's UPDATE of a question row, one trail row per field
-- it changed: the value, the reviewer, the role the statement ran as, the login behind it, and
-- whether the judges' suggestions on the question had been shown first (blind review).
-- SECURITY DEFINER: the trail takes rows from this function alone (brain_eval_review_entry_admit_v1).
CREATE FUNCTION evalledger.brain_eval_review_trail_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_review_entry
           (eval_run_id, question_id, field, value, reviewer_user_id, acting_role, entered_by, suggestions_shown,
            run_created_at)
    SELECT NEW.eval_run_id, NEW.question_id, f.field, f.value, l.reviewer_user_id, evalledger.caller_v1(),
           session_user, EXISTS (SELECT 1 FROM evalledger.brain_eval_suggestion_shown s
                                  WHERE s.eval_run_id = NEW.eval_run_id AND s.question_id = NEW.question_id),
           NEW.run_created_at
      FROM (VALUES
              (1, 'hallucinations_detected', to_jsonb(NEW.hallucinations_detected),
               NEW.hallucinations_detected IS DISTINCT FROM OLD.hallucinations_detected),
              (2, 'total_claims', to_jsonb(NEW.total_claims), NEW.total_claims IS DISTINCT FROM OLD.total_claims),
              (3, 'staleness_correctly_recognized', to_jsonb(NEW.staleness_correctly_recognized),
               NEW.staleness_correctly_recognized IS DISTINCT FROM OLD.staleness_correctly_recognized),
              (4, 'diagnosis_accuracy_score', to_jsonb(NEW.diagnosis_accuracy_score),
               NEW.diagnosis_accuracy_score IS DISTINCT FROM OLD.diagnosis_accuracy_score),
              (5, 'narrative_coherence_rating', to_jsonb(NEW.narrative_coherence_rating),
               NEW.narrative_coherence_rating IS DISTINCT FROM OLD.narrative_coherence_rating),
              (6, 'reviewer_comments', to_jsonb(NEW.reviewer_comments),
               NEW.reviewer_comments IS DISTINCT FROM OLD.reviewer_comments)) AS f(n, field, value, changed)
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = NEW.eval_run_id
     WHERE f.changed
     ORDER BY f.n;
    RETURN NULL;
END;
$$;

-- brain_eval_review_entry_admit_v1: the trail is written by brain_eval_review_trail_v1 (running as
-- the code role) and by nothing else, so no role can add an entry no reviewer made; the time is
-- the database's.
CREATE FUNCTION evalledger.brain_eval_review_entry_admit_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_user <> 'evalledger_code' THEN
        RAISE EXCEPTION 'evalledger: brain_eval_review_entry is written by the ledger as a reviewer scores, not directly'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'the run''s reviewer updates the question row (evalledger review score)';
    END IF;
    NEW.entered_at := now();
    RETURN NEW;
END;
$$;

-- brain_eval_run_review_admit_v1: a run's reviewer signs off an open run of theirs with the hours
-- spent and calibration notes keyed by the rubric's dimensions; who, when and the tier clock are
-- the database's. SECURITY DEFINER (reads the run and its rubric past the reviewer's policies);
-- the caller is caller_v1(), the role the statement runs as.
CREATE FUNCTION evalledger.brain_eval_run_review_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    unknown text;
BEGIN
    IF NEW.eval_run_id IS NULL THEN
        RETURN NEW;  -- the column's NOT NULL refuses it
    END IF;
    PERFORM evalledger.lock_run_v1(NEW.eval_run_id);
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id THEN
        RAISE EXCEPTION 'evalledger: only the run''s reviewer signs off run %', NEW.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF run.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: run % is complete: its review is final', run.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown
      FROM jsonb_object_keys(coalesce(NEW.calibration_notes, '{}')) AS k
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') d
                        WHERE r.rubric_id = run.rubric_id AND d ->> 'key' = k);
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: calibration notes name no dimension of the run''s rubric: %', unknown
            USING ERRCODE = 'check_violation', COLUMN = 'calibration_notes',
                  HINT = 'key notes by dimension: citation_rate, hallucination_rate, ...';
    END IF;
    NEW.reviewer_user_id := run.reviewer_user_id;
    NEW.entered_by := session_user;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

-- brain_eval_import_admit_v1: an import is stamped by the database: who (the login), when, and
-- the transaction its historical runs must be recorded in.
CREATE FUNCTION evalledger.brain_eval_import_admit_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.imported_by := session_user;
    NEW.txid := txid_current();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

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
-- brain_quarterly_trend_rows_v1: per brain, its last 8 completed quarterly runs with each aggregated dimension as a column.
CREATE FUNCTION evalledger.brain_quarterly_trend_rows_v1()
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
    quarter                        text,
    started_at                     timestamptz,
    completed_at                   timestamptz,
    model_id                       varchar(64),
    system_prompt_hash             varchar(64),
    question_catalog_version       varchar(32),
    decision                       text,
    citation_rate                  numeric,
    hallucination_rate             numeric,
    staleness_recognition_rate     numeric,
    diagnosis_accuracy_mean        numeric,
    lever_mapping_correctness      numeric,
    confidence_calibration_in_band numeric,
    narrative_coherence_mean       numeric)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id,
           to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           r.decision::text,
           (r.aggregated_scores ->> 'citation_rate')::numeric,
           (r.aggregated_scores ->> 'hallucination_rate')::numeric,
           (r.aggregated_scores ->> 'staleness_recognition_rate')::numeric,
           (r.aggregated_scores ->> 'diagnosis_accuracy_mean')::numeric,
           (r.aggregated_scores ->> 'lever_mapping_correctness')::numeric,
           (r.aggregated_scores ->> 'confidence_calibration_in_band')::numeric,
           (r.aggregated_scores ->> 'narrative_coherence_mean')::numeric
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT l.*, row_number() OVER (ORDER BY l.started_at DESC, l.eval_run_id DESC) AS recency_rank
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.run_trigger OPERATOR(pg_catalog.=) 'quarterly'
               AND l.completed_at IS NOT NULL
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 8) r
$$;

-- brain_quarterly_trend_v1: per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.
CREATE VIEW evalledger.brain_quarterly_trend_v1 AS
    SELECT * FROM evalledger.brain_quarterly_trend_rows_v1();
COMMENT ON VIEW evalledger.brain_quarterly_trend_v1 IS
    'Per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.';

-- most_failing_questions_rows_v1: per catalog question, completed runs it appeared in, runs it failed in, and its rank by fail share.
CREATE FUNCTION evalledger.most_failing_questions_rows_v1()
RETURNS TABLE (
    question_id varchar(16),
    runs_seen   bigint,
    runs_failed bigint,
    fail_pct    numeric,
    fail_rank   bigint)
LANGUAGE sql STABLE AS $$
    SELECT s.question_id, s.runs_seen, s.runs_failed,
           round(100.0 * s.runs_failed / s.runs_seen, 2),
           rank() OVER (ORDER BY s.runs_failed::numeric / s.runs_seen DESC, s.runs_failed DESC)
      FROM (SELECT q.question_id,
                   count(*) AS runs_seen,  -- a question appears at most once per run
                   count(*) FILTER (WHERE NOT q.question_passed) AS runs_failed
              FROM evalledger.brain_eval_question_score q
              JOIN evalledger.brain_eval_log l ON l.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id
             WHERE l.completed_at IS NOT NULL
             GROUP BY q.question_id) s
$$;

-- most_failing_questions_v1: per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).
CREATE VIEW evalledger.most_failing_questions_v1 AS
    SELECT * FROM evalledger.most_failing_questions_rows_v1();
COMMENT ON VIEW evalledger.most_failing_questions_v1 IS
    'Per question_id, completed runs seen and failed, fail_pct (0-100) and fail_rank (1 = highest fail share; on equal share more failures first; full ties share a rank).';

-- stale_fixture_pass_rate_rows_v1: per completed run, its stale-fixture questions, how many were recognised, and the sev-2 flag.
CREATE FUNCTION evalledger.stale_fixture_pass_rate_rows_v1()
RETURNS TABLE (
    eval_run_id      uuid,
    brain_under_test varchar(16),
    run_trigger      text,
    started_at       timestamptz,
    completed_at     timestamptz,
    stale_questions  bigint,
    stale_recognised bigint,
    stale_missed     bigint,
    all_recognised   boolean,
    sev2_incident    boolean)
LANGUAGE sql STABLE AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.started_at, l.completed_at,
           count(*) FILTER (WHERE q.uses_stale_fixture),
           count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized),
           count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized),
           -- NULL when the run had no stale-fixture question: nothing to recognise.
           bool_and(q.staleness_correctly_recognized) FILTER (WHERE q.uses_stale_fixture),
           count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized) > 0
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.completed_at IS NOT NULL
     GROUP BY l.eval_run_id
$$;

-- stale_fixture_pass_rate_v1: per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).
CREATE VIEW evalledger.stale_fixture_pass_rate_v1 AS
    SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v1();
COMMENT ON VIEW evalledger.stale_fixture_pass_rate_v1 IS
    'Per completed run, stale-fixture questions, recognised, missed, all_recognised (NULL if none) and sev2_incident (any miss).';

-- reviewer_calibration_rows_v1: per reviewer, the distribution of the narrative-coherence ratings they gave in completed runs.
CREATE FUNCTION evalledger.reviewer_calibration_rows_v1()
RETURNS TABLE (
    reviewer_user_id uuid,
    runs_reviewed    bigint,
    ratings          bigint,
    rating_1         bigint,
    rating_2         bigint,
    rating_3         bigint,
    rating_4         bigint,
    rating_5         bigint,
    rating_mean      numeric,
    rating_stddev    numeric)
LANGUAGE sql STABLE AS $$
    SELECT l.reviewer_user_id,
           count(DISTINCT l.eval_run_id),
           count(q.narrative_coherence_rating),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 3),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 4),
           count(*) FILTER (WHERE q.narrative_coherence_rating OPERATOR(pg_catalog.=) 5),
           round(avg(q.narrative_coherence_rating), 4),
           round(stddev_samp(q.narrative_coherence_rating), 4)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.completed_at IS NOT NULL
     GROUP BY l.reviewer_user_id
$$;

-- reviewer_calibration_v1: per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.
CREATE VIEW evalledger.reviewer_calibration_v1 AS
    SELECT * FROM evalledger.reviewer_calibration_rows_v1();
COMMENT ON VIEW evalledger.reviewer_calibration_v1 IS
    'Per reviewer, completed runs reviewed, narrative_coherence_rating counts for 1..5, mean and sample stddev.';

-- cost_per_run_rows_v1: per completed run, its token cost and reviewer hours, by brain and time.
CREATE FUNCTION evalledger.cost_per_run_rows_v1()
RETURNS TABLE (
    brain_under_test            varchar(16),
    eval_run_id                 uuid,
    run_trigger                 text,
    started_at                  timestamptz,
    completed_at                timestamptz,
    question_count              integer,
    token_cost_usd              numeric(10,4),
    reviewer_hours_spent        numeric(5,2),
    token_cost_per_question_usd numeric)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.eval_run_id, l.run_trigger::text, l.started_at, l.completed_at,
           l.question_count, l.token_cost_usd, l.reviewer_hours_spent,
           round(l.token_cost_usd / l.question_count, 4)
      FROM evalledger.brain_eval_log l
     WHERE l.completed_at IS NOT NULL
$$;

-- cost_per_run_v1: per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.
CREATE VIEW evalledger.cost_per_run_v1 AS
    SELECT * FROM evalledger.cost_per_run_rows_v1();
COMMENT ON VIEW evalledger.cost_per_run_v1 IS
    'Per completed run, by brain and started_at, token_cost_usd, reviewer_hours_spent (NULL if not reported) and cost per question.';

-- prompt_drift_rows_v1: per brain, the prompt hash of its latest production analysis against the hash of its last passing eval.
-- A production analysis is a brain_analysis_log row of origin 'production' (the harness records
-- its own analyses, origin 'eval', in the same table); a passing eval is a completed run decided
-- pass or pass_with_notes. Latest means produced_at, last means started_at.
CREATE FUNCTION evalledger.prompt_drift_rows_v1()
RETURNS TABLE (
    brain                       varchar(16),
    production_prompt_hash      varchar(64),
    production_last_seen_at     timestamptz,
    eval_prompt_hash            varchar(64),
    eval_prompt_version_label   varchar(64),
    eval_run_id                 uuid,
    eval_decision               text,
    eval_started_at             timestamptz,
    prompt_drift                boolean)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, p.system_prompt_hash, p.produced_at,
           e.system_prompt_hash, e.system_prompt_version_label, e.eval_run_id, e.decision::text,
           e.started_at,
           -- NULL without production traffic; TRUE when production runs a prompt that never passed.
           CASE WHEN p.system_prompt_hash IS NOT NULL
                THEN (p.system_prompt_hash OPERATOR(pg_catalog.=) e.system_prompt_hash) IS NOT TRUE END
      FROM evalledger.target t
      LEFT JOIN LATERAL (
            SELECT a.system_prompt_hash, a.produced_at
              FROM evalledger.brain_analysis_log a
             WHERE a.brain OPERATOR(pg_catalog.=) t.target_id AND a.origin OPERATOR(pg_catalog.=) 'production'
             ORDER BY a.produced_at DESC, a.created_at DESC, a.analysis_id DESC
             LIMIT 1) p ON true
      LEFT JOIN LATERAL (
            SELECT l.eval_run_id, l.system_prompt_hash, l.system_prompt_version_label, l.decision, l.started_at
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.completed_at IS NOT NULL
               AND l.decision OPERATOR(pg_catalog.=) ANY (ARRAY['pass', 'pass_with_notes']::evalledger.eval_decision[])
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 1) e ON true
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain'
$$;

-- prompt_drift_v1: per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.
CREATE VIEW evalledger.prompt_drift_v1 AS
    SELECT * FROM evalledger.prompt_drift_rows_v1();
COMMENT ON VIEW evalledger.prompt_drift_v1 IS
    'Per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.';

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
-- takes_quality_run_admit_v2: a takes-quality run starts in progress, now by the database's clock
-- (started_at, the receipt's ts and the trend's order, is not the caller's), under an activated
-- takes-quality rubric that passes today's check, with a valid panel as large and as cross-family as
-- the rubric's panel policy asks (seed 000: three frontier models); the database fills in the rubric
-- and panel fingerprints itself (rubric_sha8: first 8 hex of the rubric's fingerprint; models_sha8:
-- over the sorted model ids).
CREATE FUNCTION evalledger.takes_quality_run_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    panel jsonb;
    families int;
BEGIN
    PERFORM evalledger.require_open_v1('takes-quality run', NEW.completed_at, 'judge verdicts');
    PERFORM evalledger.refuse_supplied_v1(
        'eval_takes_quality_runs',
        jsonb_build_object('cycles_run', NEW.cycles_run, 'verdict', NEW.verdict,
                           'overall_score', NEW.overall_score, 'cost_usd', NEW.cost_usd,
                           'receipt_json', NEW.receipt_json, 'started_at', NEW.started_at));

    NEW.rubric_id := evalledger.rubric_admitted_v2('takes-quality', NEW.rubric_id);
    SELECT left(r.fingerprint, 8) INTO NEW.rubric_sha8 FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;

    PERFORM evalledger.check_panel_v1('takes-quality run', NEW.models);
    SELECT r.definition -> 'panel' INTO panel FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;
    families := (SELECT count(DISTINCT split_part(m, ':', 1)) FROM unnest(NEW.models) m);
    IF cardinality(NEW.models) < (panel ->> 'min_models')::numeric OR families < (panel ->> 'min_families')::numeric THEN
        RAISE EXCEPTION 'evalledger: a takes-quality panel needs at least % models from at least % families, not % from %',
                panel ->> 'min_models', panel ->> 'min_families', cardinality(NEW.models), families
            USING ERRCODE = 'check_violation', COLUMN = 'models', CONSTRAINT = 'eval_takes_quality_runs_panel_policy',
                  HINT = 'the rubric''s panel policy (seed 000: three frontier models, of more than one provider)';
    END IF;
    NEW.models_sha8 := left(encode(sha256(convert_to(
        (SELECT string_agg(m, E'\n' ORDER BY m COLLATE "C") FROM unnest(NEW.models) m), 'UTF8')), 'hex'), 8);
    NEW.started_at := now();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- takes_quality_verdict_admit_v2: one judge's verdict for one cycle of an open run. The runner
-- supplies what it observed (the parsed reply, or the provider failure); the database decides
-- whether the verdict contributes (judge_scores_v2: every rubric dimension present, a number,
-- within the scale) and otherwise records why (parse_failed, incomplete_scores, out_of_scale),
-- and keeps the reply's feedback and improvements when it is a JSON object. It also derives the
-- judge's family from its model id and flags a judge of the target's own family. A run that does
-- not exist, is complete, or is one the runner may not read (caller_reads_v1: a cold run) is
-- refused in one way.
CREATE FUNCTION evalledger.takes_quality_verdict_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    judged jsonb;
BEGIN
    -- FOR SHARE, as lock_run_v1 does: a completion waits for this verdict, or this verdict for
    -- the completion (and then sees it), so no verdict lands after the receipt was written.
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id FOR SHARE;
    IF run.id IS NULL OR run.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(run.created_at, NULL) THEN
        RAISE EXCEPTION 'evalledger: no open takes-quality run % takes verdicts', NEW.run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'run_id';
    END IF;
    IF NOT NEW.model = ANY (run.models) THEN
        RAISE EXCEPTION 'evalledger: model % is not on the panel of run %', NEW.model, NEW.run_id
            USING ERRCODE = 'check_violation', COLUMN = 'model';
    END IF;
    PERFORM evalledger.refuse_supplied_v1(
        'eval_takes_quality_judge_verdicts',
        jsonb_build_object('scores', NEW.scores, 'feedback', NEW.feedback, 'improvements', NEW.improvements));

    NEW.family := split_part(NEW.model, ':', 1);
    NEW.same_family := coalesce(
        (SELECT t.model_family = NEW.family FROM evalledger.target t WHERE t.target_id = run.target_id), false);
    NEW.created_at := now();

    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;

    judged := evalledger.judge_scores_v2(NEW.response_json,
                              (SELECT r.definition FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id));
    IF judged ->> 'error_kind' IS DISTINCT FROM 'parse_failed' THEN
        IF jsonb_typeof(NEW.response_json -> 'feedback') = 'string' THEN
            NEW.feedback := NEW.response_json ->> 'feedback';
        END IF;
        IF jsonb_typeof(NEW.response_json -> 'improvements') = 'array' THEN
            NEW.improvements := (SELECT coalesce(jsonb_agg(i ORDER BY n), '[]')
                                   FROM jsonb_array_elements(NEW.response_json -> 'improvements') WITH ORDINALITY x(i, n)
                                  WHERE jsonb_typeof(i) = 'string' AND btrim(i #>> '{}') <> '');
        END IF;
    END IF;
    NEW.scores := judged -> 'scores';
    NEW.contributes := NEW.scores IS NOT NULL;
    NEW.error_kind := judged ->> 'error_kind';
    NEW.error_message := judged ->> 'error_message';
    RETURN NEW;
END;
$$;

-- takes_quality_cycle_v1: one cycle of a takes-quality run, aggregated from its verdict rows
-- under the run's rubric: per dimension the mean (2 decimals, for display: the rule compares the
-- exact mean, shown to 4 decimals where 2 would hide the miss), min, max, the contributing
-- scores in panel order and per model; the overall score (mean of the dimension means); the
-- verdict: inconclusive when fewer than the rubric's quorum of the panel contributed, pass when
-- every dimension mean and every dimension minimum meet the rubric's thresholds, else fail;
-- and a message that says why.
CREATE FUNCTION evalledger.takes_quality_cycle_v1(p_run_id bigint, p_cycle integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    policy jsonb;
    panel int;
    answered int;
    contributed int;
    need_num int;
    need_den int;
    min_mean numeric;
    min_min numeric;
    dims jsonb;
    overall numeric;
    misses text[];
    verdict text;
    message text;
    improvements jsonb;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    panel := cardinality(run.models);
    need_num := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 0)::int;
    need_den := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 1)::int;
    min_mean := (policy -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric;
    min_min := (policy -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric;

    SELECT count(*), count(*) FILTER (WHERE v.contributes) INTO answered, contributed
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id AND v.cycle = p_cycle;

    WITH dim AS (
        SELECT d ->> 'key' AS key, n FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
    ), contrib AS (
        SELECT v.model, array_position(run.models, v.model) AS pos, v.scores
          FROM evalledger.eval_takes_quality_judge_verdicts v
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
    ), agg AS (
        SELECT dim.key, dim.n,
               round(avg((c.scores ->> dim.key)::numeric), 2) AS mean,
               avg((c.scores ->> dim.key)::numeric) AS exact_mean,
               min((c.scores ->> dim.key)::numeric) AS lo,
               max((c.scores ->> dim.key)::numeric) AS hi,
               coalesce(jsonb_agg(c.scores -> dim.key ORDER BY c.pos) FILTER (WHERE c.model IS NOT NULL), '[]') AS scores,
               coalesce(jsonb_object_agg(c.model, c.scores -> dim.key) FILTER (WHERE c.model IS NOT NULL), '{}') AS per_model
          FROM dim LEFT JOIN contrib c ON true
         GROUP BY dim.key, dim.n
    )
    SELECT jsonb_object_agg(a.key, jsonb_build_object(
               'mean', trim_scale(a.mean), 'min', a.lo, 'max', a.hi, 'scores', a.scores, 'per_model', a.per_model)),
           trim_scale(round(avg(a.exact_mean), 2)),
           array_remove(array_agg(
               CASE WHEN a.exact_mean < min_mean
                    THEN format('%s mean %s < %s', a.key,
                                trim_scale(CASE WHEN a.mean < min_mean THEN a.mean ELSE round(a.exact_mean, 4) END),
                                min_mean) END
               ORDER BY a.n), NULL)
           || array_remove(array_agg(
               CASE WHEN a.lo < min_min THEN format('%s min %s < %s', a.key, trim_scale(a.lo), min_min) END
               ORDER BY a.n), NULL)
      INTO dims, overall, misses
      FROM agg a;

    -- Each distinct suggestion once, in panel order.
    SELECT coalesce(jsonb_agg(i ORDER BY first_seen), '[]') INTO improvements FROM (
        SELECT i, min(array_position(run.models, v.model) * 1000 + n) AS first_seen
          FROM evalledger.eval_takes_quality_judge_verdicts v,
               jsonb_array_elements(coalesce(v.improvements, '[]')) WITH ORDINALITY x(i, n)
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
         GROUP BY i) s;

    IF contributed * need_den < need_num * panel THEN
        verdict := 'inconclusive';
        message := format('INCONCLUSIVE: %s of %s models contributed complete scores; the rubric needs at least %s/%s of the panel',
                          contributed, panel, need_num, need_den);
    ELSIF cardinality(misses) = 0 THEN
        verdict := 'pass';
        message := format('PASS: every dim mean >=%s and min >=%s (%s of %s models contributed; overall %s)',
                          min_mean, min_min, contributed, panel, overall);
    ELSE
        verdict := 'fail';
        message := format('FAIL: %s (%s of %s models contributed; overall %s)',
                          array_to_string(misses, '; '), contributed, panel, overall);
    END IF;

    RETURN jsonb_build_object(
        'cycle', p_cycle, 'panel', panel, 'answered', answered, 'contributed', contributed,
        'verdict', verdict, 'scores', dims, 'overall_score', overall,
        'improvements', improvements, 'message', message);
END;
$$;

-- takes_quality_cycle_v2: takes_quality_cycle_v1 for a run the caller may read (caller_reads_v1: the runner and RevOps the
-- hot tier, auditors and the owner role every run); any other reads as a run that does not exist.
-- The completion trigger asks _v1 itself, as the code role.
CREATE FUNCTION evalledger.takes_quality_cycle_v2(p_run_id bigint, p_cycle integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r
                    WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN evalledger.takes_quality_cycle_v1(p_run_id, p_cycle);
END;
$$;

-- takes_quality_current_v1: each judge's current row in each cycle of a run: its latest by
-- retry_no. An earlier row is a call that failed outside the judge's content (a provider error,
-- a call the budget did not allow) and was retried, or a call that started and was answered or
-- lost; the current row is the verdict the run stands on. With the reader's rights.
CREATE FUNCTION evalledger.takes_quality_current_v1(p_run_id bigint)
RETURNS SETOF evalledger.eval_takes_quality_judge_verdicts
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (v.cycle, v.model) v.*
      FROM evalledger.eval_takes_quality_judge_verdicts v
     WHERE v.run_id = p_run_id
     ORDER BY v.cycle, v.model, v.retry_no DESC
$$;

-- takes_quality_run_identity_v1: the rest of a takes-quality run's identity, after the seed's four
-- fingerprints (takes_quality_run_admit_v2 fills in the rubric's and the panel's). scope_sha8 is
-- the database's fingerprint of where the sample was drawn from: the source, the path of an fs
-- corpus and the slug prefix (each is in the receipt, and the prefix is in the judges' prompt), so
-- a run over files never reads back a run over the database. judges says how the run is judged,
-- live or recorded, so recorded replies never occupy a live run's identity. rerun numbers the
-- judgings of one eval: 0 the first, N+1 a `--rerun` once judging N is complete.
CREATE FUNCTION evalledger.takes_quality_run_identity_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.scope_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.corpus_source, NEW.corpus_path, NEW.slug_prefix)::text, 'UTF8')), 'hex'), 8);
    NEW.rerun := coalesce(NEW.rerun, 0);
    IF NEW.rerun > 0 AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE (r.corpus_sha8, r.prompt_sha8, r.models_sha8, r.rubric_sha8, r.scope_sha8, r.judges, r.rerun)
                 = (NEW.corpus_sha8, NEW.prompt_sha8, NEW.models_sha8, NEW.rubric_sha8, NEW.scope_sha8, NEW.judges,
                    NEW.rerun - 1)
               AND r.completed_at IS NOT NULL) THEN
        RAISE EXCEPTION 'evalledger: rerun % of this takes-quality eval needs its judging % complete first',
                NEW.rerun, NEW.rerun - 1
            USING ERRCODE = 'check_violation', COLUMN = 'rerun';
    END IF;
    RETURN NEW;
END;
$$;

-- takes_quality_verdict_sequence_v1: where a judge's row falls among the rows of its call, before
-- the verdict is admitted (takes_quality_verdict_admit_v2). retry_no is the database's: 0 for the
-- first row of a judge in a cycle, one more for each row after. A row follows only a started
-- call (its answer, or a new start after a runner that stopped) or a failure outside the judge's
-- content (a provider error, a call the budget did not allow): a judge that answered has its
-- verdict, and nothing replaces it. A started call (call_started, inserted before the request is
-- sent) carries only the runner's estimate of its cost; if no answer follows it, that estimate is
-- what the call counts. A run judged live takes only live rows, a recorded run only recorded
-- ones. A later cycle starts only once every judge's current row in the one before is an answer.
CREATE FUNCTION evalledger.takes_quality_verdict_sequence_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    cur evalledger.eval_takes_quality_judge_verdicts;
    undecided text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id;
    IF NOT FOUND OR run.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(run.created_at, NULL) THEN
        -- Admission (takes_quality_verdict_admit) refuses these alike: a run that is missing, closed
        -- or not the caller's to read reads as one, and nothing here says more about it.
        RETURN NEW;
    END IF;
    IF run.judges IS NOT NULL AND NEW.recorded IS DISTINCT FROM (run.judges = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is judged by % judges: a % reply is not one of its verdicts',
                NEW.run_id, run.judges, CASE WHEN NEW.recorded THEN 'recorded' ELSE 'live' END
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;

    SELECT * INTO cur FROM evalledger.eval_takes_quality_judge_verdicts v
     WHERE v.run_id = NEW.run_id AND v.cycle = NEW.cycle AND v.model = NEW.model
     ORDER BY v.retry_no DESC LIMIT 1;
    IF NOT FOUND THEN
        NEW.retry_no := 0;
    ELSIF cur.call_started OR cur.error_kind IN ('provider_error', 'budget_exhausted') THEN
        NEW.retry_no := cur.retry_no + 1;
    ELSE
        RAISE EXCEPTION 'evalledger: % has its verdict in cycle % of takes-quality run %: nothing to retry',
                NEW.model, NEW.cycle, NEW.run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_judge_verdicts_retry_once';
    END IF;

    IF NEW.cycle > 1 THEN
        SELECT string_agg(m, ', ' ORDER BY p) INTO undecided
          FROM unnest(run.models) WITH ORDINALITY u(m, p)
          LEFT JOIN evalledger.takes_quality_current_v1(NEW.run_id) c ON c.cycle = NEW.cycle - 1 AND c.model = u.m
         WHERE c.verdict_id IS NULL OR c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
        IF undecided IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: cycle % of takes-quality run % is not decided (no answer from %): cycle % waits',
                    NEW.cycle - 1, NEW.run_id, undecided, NEW.cycle
                USING ERRCODE = 'check_violation', COLUMN = 'cycle';
        END IF;
    END IF;

    IF NEW.call_started THEN
        IF NEW.recorded OR NEW.error_kind IS NOT NULL OR NEW.response_json IS NOT NULL OR NEW.raw_excerpt IS NOT NULL
           OR NEW.input_tokens <> 0 OR NEW.output_tokens <> 0 OR NEW.cost_usd <> 0 OR NEW.attempts <> 0 THEN
            RAISE EXCEPTION 'evalledger: a started call carries only the estimate of its cost'
                USING ERRCODE = 'check_violation', COLUMN = 'call_started';
        END IF;
        IF NEW.estimated_cost_usd IS NULL OR NEW.estimated_cost_usd < 0 THEN
            RAISE EXCEPTION 'evalledger: a started call needs the estimate of its cost (0 or more)'
                USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
        END IF;
        NEW.error_kind := 'provider_error';
        NEW.error_message := 'call started: no reply recorded';
    ELSIF NEW.estimated_cost_usd IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: only a started call carries an estimated cost; an answer carries its own'
            USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
    END IF;
    RETURN NEW;
END;
$$;

-- takes_quality_receipt_v3: the seed-000 receipt (schema_version 1) of a run, built from the run
-- row and each judge's current row per cycle (takes_quality_current_v1): the last cycle decides.
-- Over takes_quality_receipt_v1 it tells the story of calls that were retried: `errors` lists every
-- row that did not contribute, a retried one marked "retried", and every call that started and
-- got no reply; `cost_usd` is exact (never rounded) and counts what each call cost plus, for a
-- call that started and was never answered, the runner's estimate of it. A run whose current rows
-- still hold a failure outside the judges' content (a provider error, a call the budget did not
-- allow, a call with no reply) is not final: the receipt says so (`final`: false, and the message
-- says how to retry), and takes_quality_run_decide_v2 refuses to complete it. Optional fields
-- (additive at schema_version 1): run_id, seed, judges (live or recorded), final, rerun. Over
-- takes_quality_receipt_v2 (the caller-checked v1) it asks caller_reads_v1 the same way: a run the
-- caller may not read reads as one that does not exist.
CREATE FUNCTION evalledger.takes_quality_receipt_v3(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    last_cycle int;
    decided jsonb;
    successes jsonb;
    errors jsonb;
    cost numeric;
    skipped int;
    pending int;
    recorded int;
    total int;
    message text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
     WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT max(v.cycle), count(*) FILTER (WHERE NOT v.call_started),
           count(*) FILTER (WHERE v.recorded)
      INTO last_cycle, total, recorded
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id;
    IF last_cycle IS NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % has no verdicts', p_run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    decided := evalledger.takes_quality_cycle_v1(p_run_id, last_cycle);
    SELECT jsonb_agg(c.n ORDER BY c.cycle) INTO successes FROM (
        SELECT g.cycle, count(v.*) FILTER (WHERE v.contributes) AS n
          FROM generate_series(1, last_cycle) g(cycle)
          LEFT JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = p_run_id AND v.cycle = g.cycle
         GROUP BY g.cycle) c;
    SELECT count(*) FILTER (WHERE c.error_kind = 'budget_exhausted' AND NOT c.call_started),
           count(*) FILTER (WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted'))
      INTO skipped, pending
      FROM evalledger.takes_quality_current_v1(p_run_id) c;

    WITH calls AS (
        SELECT v.*, lead(v.retry_no) OVER w IS NULL AS current, coalesce(lead(v.call_started) OVER w, false) AS restarted
          FROM evalledger.eval_takes_quality_judge_verdicts v
         WHERE v.run_id = p_run_id
        WINDOW w AS (PARTITION BY v.cycle, v.model ORDER BY v.retry_no)
    ), told AS (
        SELECT c.cycle, array_position(run.models, c.model) AS pos, c.retry_no,
               -- A started call whose answer follows is not an error: the answer says what happened.
               CASE WHEN c.call_started AND c.current
                    THEN format('cycle %s %s: no reply: the call started at %s and no answer was recorded '
                                '(estimated $%s counted)', c.cycle, c.model,
                                to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN c.call_started AND c.restarted
                    THEN format('cycle %s %s: no reply: the runner stopped while the call was in flight '
                                '(estimated $%s counted); retried', c.cycle, c.model,
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN NOT c.call_started AND NOT c.contributes
                    THEN format('cycle %s %s: %s%s%s', c.cycle, c.model, c.error_kind,
                                CASE WHEN c.error_message IS NULL THEN '' ELSE ': ' || c.error_message END,
                                CASE WHEN c.current THEN '' ELSE '; retried' END) END AS line,
               CASE WHEN c.call_started AND (c.current OR c.restarted) THEN c.estimated_cost_usd ELSE 0 END
                   + c.cost_usd AS cost
          FROM calls c
    )
    SELECT coalesce(jsonb_agg(t.line ORDER BY t.cycle, t.pos, t.retry_no) FILTER (WHERE t.line IS NOT NULL), '[]'),
           trim_scale(coalesce(sum(t.cost), 0))
      INTO errors, cost
      FROM told t;

    message := decided ->> 'message';
    IF last_cycle > 1 THEN
        message := message || format('; decided in cycle %s', last_cycle);
    END IF;
    IF skipped > 0 THEN
        message := message || format('; %s call(s) not made: the budget cap would have been passed', skipped);
    END IF;
    IF pending > 0 THEN
        message := message || format('; not final: %s call(s) failed outside the judges'' content, '
                                     'and running the same eval again retries them', pending);
    END IF;

    RETURN jsonb_build_object(
        'schema_version', 1,
        'ts', to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'rubric_version', rub.version,
        'rubric_sha8', run.rubric_sha8,
        'corpus', jsonb_build_object('source', run.corpus_source, 'n_takes', run.n_takes,
                                     'slug_prefix', run.slug_prefix, 'corpus_sha8', run.corpus_sha8)
                  || CASE WHEN run.corpus_path IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object('path', run.corpus_path) END,
        'prompt_sha8', run.prompt_sha8,
        'models_sha8', run.models_sha8,
        'models', to_jsonb(run.models),
        'cycles_run', last_cycle,
        'successes_per_cycle', successes,
        'verdict', decided ->> 'verdict',
        'scores', decided -> 'scores',
        'overall_score', decided -> 'overall_score',
        'cost_usd', cost,
        'improvements', decided -> 'improvements',
        'errors', errors,
        'verdictMessage', message,
        -- Optional fields (additive at schema_version 1).
        'run_id', run.id,
        'seed', run.seed,
        'judges', coalesce(run.judges, CASE WHEN recorded = 0 THEN 'live' WHEN recorded = total THEN 'recorded'
                                            ELSE 'mixed' END),
        'final', pending = 0,
        'rerun', coalesce(run.rerun, 0));
END;
$$;

-- takes_quality_complete_v1: the runner completes an open run it may read (the hot tier); the
-- receipt the database built, or NULL when there is no such open run (completed meanwhile, cold,
-- or none). The verdict is the triggers' (eval_takes_quality_runs_20_decide). A function and not an
-- UPDATE grant, as brain_eval_complete_v1 says: no role may lock a run's row but the code role.
CREATE FUNCTION evalledger.takes_quality_complete_v1(run_id bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    receipt jsonb;
BEGIN
    UPDATE evalledger.eval_takes_quality_runs r SET completed_at = now()
     WHERE r.id = run_id AND r.completed_at IS NULL
       AND evalledger.caller_reads_v1(r.created_at, NULL)
    RETURNING r.receipt_json INTO receipt;
    RETURN receipt;
END;
$$;

-- takes_quality_run_decide_v2: at completion (which complete_once_v1 admits first), every cycle
-- must hold a row from every panel model, and every judge's current row must be an answer: a
-- run whose calls failed outside the judges' content (a provider error, a call the budget did not
-- allow, a call started with no reply) is not a final verdict, so it stays open and the same eval
-- run again retries exactly those calls. The database then writes what it decided: cycles_run,
-- verdict, overall_score, cost_usd and the whole receipt (takes_quality_receipt_v3).
CREATE FUNCTION evalledger.takes_quality_run_decide_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    pending text;
    receipt jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('takes-quality run');
    SELECT format('cycle %s lacks %s', g.cycle, string_agg(m, ', ' ORDER BY p)) INTO gap
      FROM generate_series(1, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = NEW.id)) g(cycle)
      CROSS JOIN unnest(NEW.models) WITH ORDINALITY u(m, p)
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v
                        WHERE v.run_id = NEW.id AND v.cycle = g.cycle AND v.model = u.m)
     GROUP BY g.cycle ORDER BY g.cycle LIMIT 1;
    IF gap IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is not whole: %', NEW.id, gap
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    SELECT string_agg(format('cycle %s %s (%s)', c.cycle, c.model,
                             CASE WHEN c.call_started THEN 'started, no reply' ELSE c.error_kind END),
                      ', ' ORDER BY c.cycle, array_position(NEW.models, c.model))
      INTO pending
      FROM evalledger.takes_quality_current_v1(NEW.id) c
     WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
    IF pending IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is not final: % failed outside the judges'' content',
                NEW.id, pending
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_is_final',
                  HINT = 'running the same eval again retries exactly those calls';
    END IF;
    receipt := evalledger.takes_quality_receipt_v3(NEW.id);
    NEW.cycles_run := (receipt ->> 'cycles_run')::int;
    NEW.verdict := receipt ->> 'verdict';
    NEW.overall_score := (receipt ->> 'overall_score')::numeric;
    NEW.cost_usd := (receipt ->> 'cost_usd')::numeric;
    NEW.receipt_json := receipt;
    RETURN NEW;
END;
$$;

-- =============================================================================================
-- Eval capture: the window lock, dedupe, append-only, partitions, the NDJSON export
-- =============================================================================================
-- capture_window_lock_v2: before any INSERT statement on eval_candidates (or one of its partitions,
-- COPY included), take the capture window lock, ROW EXCLUSIVE on evalledger.capture_window, for the
-- rest of the transaction. created_at defaults to clock_timestamp(), read after this trigger fires
-- (no application role may supply it), so every row is stamped while its transaction holds the lock; capture_export_bound_v2() takes SHARE on the
-- same table for an instant. The lock is on a table of the code role's on which no application role
-- holds any privilege: only the ledger's writers take it (this trigger, as the code role), and no
-- login can stall captures by holding a well-known advisory key.
CREATE FUNCTION evalledger.capture_window_lock_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    LOCK TABLE evalledger.capture_window IN ROW EXCLUSIVE MODE;
    RETURN NULL;
END;
$$;

-- capture_dedupe_v1: each captured row carries a client-generated capture_key. The key goes into
-- eval_candidate_keys (a real UNIQUE key: a partitioned table cannot have one that leaves out its
-- partition key); a key seen before makes the row a no-op, so replaying a spool after a crash
-- between the INSERT and the spool's truncation writes every row exactly once. A statement that
-- fails afterwards rolls the key back with the row.
CREATE FUNCTION evalledger.capture_dedupe_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_candidate_keys (capture_key, created_at)
    VALUES (NEW.capture_key, NEW.created_at)
    ON CONFLICT (capture_key) DO NOTHING;
    IF FOUND THEN
        RETURN NEW;
    END IF;
    RETURN NULL;
END;
$$;

-- capture_refuse_change_v1: the append-only guard of the capture tables. UPDATE and TRUNCATE are
-- always refused. DELETE passes only inside the retention purge (retention_purge_v2, through its
-- transaction-local capture marker) and only for a failure or key row recorded before the purge
-- horizon, counted in UTC from the statement's clock (purge_horizon_at_v1) as the purge counts it;
-- captured rows themselves leave only with their whole monthly partition.
CREATE FUNCTION evalledger.capture_refuse_change_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME IN ('eval_capture_failures', 'eval_candidate_keys')
       AND evalledger.capture_purging_v1()
       AND (to_jsonb(OLD) ->> CASE TG_TABLE_NAME WHEN 'eval_capture_failures' THEN 'recorded_at'
                                                 ELSE 'created_at' END)::timestamptz
           < evalledger.purge_horizon_at_v1() THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'capture rows leave only through the retention purge (evalledger retention apply), past the purge horizon';
END;
$$;

-- capture_purging_v1: true inside a retention_purge_v2() call of the current transaction, while it
-- drops capture partitions and deletes capture keys and failures.
CREATE FUNCTION evalledger.capture_purging_v1() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM evalledger.capture_purge_marker m
                    WHERE m.txid = txid_current_if_assigned())
$$;

-- capture_partition_expired_v2: true when name is a monthly eval_candidates partition whose whole month (UTC) is past the
-- purge horizon (purge_horizon_at_v1: in UTC, on the statement's clock, whatever the session's TimeZone).
CREATE FUNCTION evalledger.capture_partition_expired_v2(name text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        name ~ '^eval_candidates_p[0-9]{4}(0[1-9]|1[0-2])$'
        AND (to_date(right(name, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
            <= evalledger.purge_horizon_at_v1(),
        false)
$$;

-- capture_make_partition_v2: the eval_candidates partition of one UTC month (its first day), with
-- its own guards, unless it exists; whether it made it. Writers reach it through
-- capture_ensure_partitions_v2 (this month on); tests and backfills name an earlier month. Each
-- partition's own window-lock trigger runs capture_window_lock_v2 (a lock only writers take).
CREATE FUNCTION evalledger.capture_make_partition_v2(month date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    part text;
    enable_all text;
BEGIN
    IF month IS NULL OR month <> date_trunc('month', month)::date THEN
        RAISE EXCEPTION 'evalledger: a partition month is the first day of a month, not %', month
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    part := 'eval_candidates_p' || to_char(month, 'YYYYMM');
    IF to_regclass('evalledger.' || part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE evalledger.%I PARTITION OF evalledger.eval_candidates '
                   'FOR VALUES FROM (%L) TO (%L)', part,
                   to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00',
                   to_char(month + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
    -- A TRUNCATE trigger on the parent does not protect a partition, nor does an INSERT
    -- statement trigger on the parent fire for an INSERT naming the partition.
    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON evalledger.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_refuse_change_v1()',
                   part || '_00_no_truncate', part);
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON evalledger.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_window_lock_v2()',
                   part || '_05_window_lock', part);
    -- One ALTER TABLE, so the DDL guard sees the partition only in its final state: row level
    -- security enabled and forced (no policy: partitions are read and written through the
    -- parent) and every trigger, its own and those cloned from the parent, ENABLE ALWAYS.
    SELECT string_agg(format('ENABLE ALWAYS TRIGGER %I', t.tgname), ', ' ORDER BY t.tgname)
      INTO enable_all
      FROM pg_trigger t
     WHERE t.tgrelid = ('evalledger.' || quote_ident(part))::regclass AND NOT t.tgisinternal;
    -- The partition is the code role's like its parent: this function runs as its owner.
    EXECUTE format('ALTER TABLE evalledger.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY, %s',
                   part, enable_all);
    RETURN true;
END;
$$;

-- capture_ensure_partitions_v2: create the monthly (UTC) partitions of eval_candidates from this month to months_ahead months on (capture_make_partition_v2 each); returns how many it made.
CREATE FUNCTION evalledger.capture_ensure_partitions_v2(months_ahead integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    month date;
    made integer := 0;
BEGIN
    IF months_ahead IS NULL OR months_ahead NOT BETWEEN 0 AND 24 THEN
        RAISE EXCEPTION 'evalledger: months_ahead must be between 0 and 24, not %', months_ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Two writers starting at once would otherwise both try to create the same partition. SHARE UPDATE
    -- EXCLUSIVE conflicts with itself, not with the writers' ROW EXCLUSIVE; it is a lock on a table of
    -- the code role's, so no login can hold it to stall the writers (an advisory key anyone could).
    LOCK TABLE evalledger.capture_window IN SHARE UPDATE EXCLUSIVE MODE;
    FOR month IN
        SELECT generate_series(date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC'),
                               date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')
                                   + make_interval(months => months_ahead),
                               interval '1 month')::date
    LOOP
        IF evalledger.capture_make_partition_v2(month) THEN
            made := made + 1;
        END IF;
    END LOOP;
    RETURN made;
END;
$$;

-- capture_export_bound_v2: the exclusive upper bound of an export window: waits for every open
-- capture transaction (SHARE on evalledger.capture_window, which conflicts with the writers' ROW
-- EXCLUSIVE), reads clock_timestamp(), and releases the lock at once (taken in a subtransaction that
-- is rolled back). Call it in its own statement and read in a later one (READ COMMITTED): every row
-- stamped before the bound is then committed and visible, and no row stamped later can be earlier.
-- SECURITY DEFINER: no reader holds a privilege on the lock's table, so none can hold it longer.
CREATE FUNCTION evalledger.capture_export_bound_v2() RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    bound timestamptz;
BEGIN
    BEGIN
        LOCK TABLE evalledger.capture_window IN SHARE MODE;
        bound := clock_timestamp();
        RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'evalledger: release the capture window lock';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
    RETURN bound;
END;
$$;

-- eval_candidate_ndjson_row_v1: the seed-001 NDJSON row (schema version 1), field by field, in order.
CREATE TYPE evalledger.eval_candidate_ndjson_row_v1 AS (
    schema_version      integer,
    id                  bigint,
    tool_name           text,
    query               text,
    retrieved_slugs     text[],
    retrieved_chunk_ids bigint[],
    source_ids          text[],
    expand_enabled      boolean,
    detail              text,
    detail_resolved     text,
    vector_enabled      boolean,
    expansion_applied   boolean,
    latency_ms          double precision,
    remote              boolean,
    job_id              bigint,
    subagent_id         bigint,
    created_at          text
);

-- eval_candidate_ndjson_v1: one captured row as its seed-001 NDJSON object, the one place that row
-- is built (the export and the demo both call it). row_to_json of the row type keeps the field
-- order (jsonb would not) and prints compact JSON; one expression, so the planner inlines it and
-- a whole-row argument costs no more than naming the columns.
CREATE FUNCTION evalledger.eval_candidate_ndjson_v1(c evalledger.eval_candidates) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT row_to_json(ROW(1, c.id, c.tool_name, c.query, c.retrieved_slugs, c.retrieved_chunk_ids,
                           c.source_ids, c.expand_enabled, c.detail, c.detail_resolved, c.vector_enabled,
                           c.expansion_applied, c.latency_ms, c.remote, c.job_id, c.subagent_id,
                           to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                       )::evalledger.eval_candidate_ndjson_row_v1)
$$;

-- eval_candidates_export_v1: the rows of the window [since, until) (since NULL: unbounded),
-- optionally of one tool, newest first (created_at DESC, id DESC), at most max_rows (NULL: all),
-- each built by eval_candidate_ndjson_v1. Inlined by the planner, so it streams from the export
-- index under the caller's row-level security.
CREATE FUNCTION evalledger.eval_candidates_export_v1(since timestamptz, until timestamptz, tool text, max_rows bigint)
RETURNS SETOF json
LANGUAGE sql STABLE AS $$
    SELECT evalledger.eval_candidate_ndjson_v1(c)
      FROM evalledger.eval_candidates c
     WHERE (since IS NULL OR c.created_at >= since)
       AND c.created_at < until
       AND (tool IS NULL OR c.tool_name OPERATOR(pg_catalog.=) tool)
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT max_rows
$$;

-- =============================================================================================
-- The brain-eval harness: catalogs, brain versions, answers, suggestions, the reference answer
-- =============================================================================================
-- brain_eval_catalog_admit_v1: a question catalog is loaded as its whole document; the database
-- reads its version and question count from it and fingerprints it, and the caller supplies neither.
CREATE FUNCTION evalledger.brain_eval_catalog_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.document IS NULL OR jsonb_typeof(NEW.document) <> 'object'
       OR jsonb_typeof(NEW.document -> 'version') IS DISTINCT FROM 'string'
       OR jsonb_typeof(NEW.document -> 'questions') IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'evalledger: a catalog is a document with a version and a questions array'
            USING ERRCODE = 'check_violation', COLUMN = 'document';
    END IF;
    PERFORM evalledger.refuse_supplied_v1('brain_eval_catalog', jsonb_build_object(
        'document_sha256', NEW.document_sha256, 'question_count', NEW.question_count));
    IF NEW.catalog_version IS DISTINCT FROM NEW.document ->> 'version' AND NEW.catalog_version IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: catalog_version % is not the document''s version %',
                NEW.catalog_version, NEW.document ->> 'version'
            USING ERRCODE = 'check_violation', COLUMN = 'catalog_version';
    END IF;
    NEW.catalog_version := NEW.document ->> 'version';
    NEW.question_count := jsonb_array_length(NEW.document -> 'questions');
    -- jsonb's text form is canonical (key order, spacing), so equal documents fingerprint equally.
    NEW.document_sha256 := encode(sha256(convert_to(NEW.document::text, 'UTF8')), 'hex');
    NEW.loaded_at := now();
    RETURN NEW;
END;
$$;

-- brain_eval_catalog_expand_v1: a loaded catalog's questions become question rows, one per entry
-- of its document, in the document's order, within the statement that loaded it.
CREATE FUNCTION evalledger.brain_eval_catalog_expand_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_catalog_question (catalog_version, position)
    SELECT NEW.catalog_version, n::integer
      FROM generate_series(1, NEW.question_count) AS n;
    RETURN NULL;
END;
$$;

-- brain_eval_catalog_question_admit_v1: a question row is its catalog document's entry at its
-- position and nothing else: every column is read from the document, so no question can be added
-- to, or changed in, a loaded catalog (a position taken twice is a duplicate key).
CREATE FUNCTION evalledger.brain_eval_catalog_question_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    q jsonb;
BEGIN
    SELECT c.document -> 'questions' -> (NEW.position - 1) INTO q
      FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = NEW.catalog_version;
    IF q IS NULL OR jsonb_typeof(q) <> 'object' THEN
        RAISE EXCEPTION 'evalledger: catalog % has no question at position %', NEW.catalog_version, NEW.position
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'position';
    END IF;
    IF (SELECT count(DISTINCT s ->> 'id') <> count(s ->> 'id') FROM jsonb_array_elements(
            CASE jsonb_typeof(q -> 'sources') WHEN 'array' THEN q -> 'sources' ELSE '[]' END) AS s) THEN
        RAISE EXCEPTION 'evalledger: question % of catalog % names a source id twice', q ->> 'id', NEW.catalog_version
            USING ERRCODE = 'check_violation', COLUMN = 'sources';
    END IF;
    NEW.question_id := q ->> 'id';
    NEW.question_type := q ->> 'type';
    NEW.question_text := q ->> 'text';
    NEW.sources := q -> 'sources';
    NEW.uses_stale_fixture := (q -> 'uses_stale_fixture')::boolean;
    NEW.pass_criteria := q -> 'pass_criteria';
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- brain_version_admit_v2: a brain under test's configuration is a new version of its target: the
-- database numbers it, hashes its system prompt (SHA-256 of the UTF-8 text) and orders its levers;
-- the caller supplies none of these. The brain then owns the prompt (brain_prompt_claim_v1), which a
-- brain may not take on while a run of that prompt under another brain is open.
CREATE FUNCTION evalledger.brain_version_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_version', jsonb_build_object(
        'version', NEW.version, 'system_prompt_hash', NEW.system_prompt_hash));
    -- Locking the target serialises two versions of one brain added at once.
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.target_id AND t.kind = 'brain' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: % is not a registered brain', NEW.target_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'target_id',
                  CONSTRAINT = 'brain_version_target_fkey';
    END IF;
    NEW.version := coalesce((SELECT max(v.version) FROM evalledger.brain_version v
                              WHERE v.target_id = NEW.target_id), 0) + 1;
    NEW.system_prompt_hash := encode(sha256(convert_to(NEW.system_prompt, 'UTF8')), 'hex');
    NEW.levers := ARRAY(SELECT DISTINCT l FROM unnest(NEW.levers) AS l ORDER BY l);
    PERFORM evalledger.brain_prompt_claim_v1(NEW.target_id, NEW.system_prompt_hash, 'version');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- brain_eval_harness_run_admit_v2: a harness run's record agrees with the run it describes: the
-- brain version is the run's brain, model and prompt, the catalog is the run's, the questions are
-- that catalog's and as many as the run counts, and the contracts hashed are the run's hash. A run
-- that does not exist, is complete or is one the caller may not read (caller_reads_v1) is refused
-- in one way: the refusal tells the runner nothing about a cold run it cannot read.
CREATE FUNCTION evalledger.brain_eval_harness_run_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    brain evalledger.brain_version;
    missing text;
BEGIN
    PERFORM evalledger.lock_run_v1(NEW.eval_run_id);
    SELECT l.* INTO run FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = NEW.eval_run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id);
    IF run.eval_run_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no open run % takes a harness record', NEW.eval_run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'eval_run_id';
    END IF;
    SELECT v.* INTO brain FROM evalledger.brain_version v WHERE v.brain_version_id = NEW.brain_version_id;
    IF brain.brain_version_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no brain version %', NEW.brain_version_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'brain_version_id';
    END IF;
    IF (brain.target_id, brain.model_id, brain.system_prompt_hash, brain.version_label)
       IS DISTINCT FROM (run.brain_under_test, run.model_id, run.system_prompt_hash, run.system_prompt_version_label) THEN
        RAISE EXCEPTION 'evalledger: run % is not of % version %', run.eval_run_id, brain.target_id, brain.version
            USING ERRCODE = 'check_violation', COLUMN = 'brain_version_id';
    END IF;
    IF NEW.catalog_version IS DISTINCT FROM run.question_catalog_version
       OR cardinality(NEW.question_ids) IS DISTINCT FROM run.question_count
       OR NEW.contracts ->> 'brain_view_contracts_hash' IS DISTINCT FROM run.brain_view_contracts_hash THEN
        RAISE EXCEPTION 'evalledger: harness record of run % disagrees with its catalog, question count or contracts hash',
                run.eval_run_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT string_agg(q, ', ') INTO missing FROM unnest(NEW.question_ids) AS q
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_catalog_question c
                        WHERE c.catalog_version = NEW.catalog_version AND c.question_id = q);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: catalog % has no question %', NEW.catalog_version, missing
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'question_ids';
    END IF;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- brain_eval_open_harness_v2: the harness record of a run that still takes what `takes` names
-- (answers, suggestions), with the run locked as lock_run_v1 locks it, so nothing lands after its
-- completion. Refused in one way whether the run does not exist, is no harness run, is complete or
-- is one the caller may not read (caller_reads_v1: a cold run, for the runner): the refusal tells
-- the caller nothing it could not read itself.
CREATE FUNCTION evalledger.brain_eval_open_harness_v2(run_id uuid, takes text)
RETURNS evalledger.brain_eval_harness_run
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    harness evalledger.brain_eval_harness_run;
BEGIN
    PERFORM evalledger.lock_run_v1(run_id);
    SELECT h.* INTO harness FROM evalledger.brain_eval_harness_run h
      JOIN evalledger.brain_eval_log l USING (eval_run_id)
     WHERE h.eval_run_id = run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id);
    IF harness.eval_run_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no open harness run % takes %', run_id, takes
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'eval_run_id',
                  HINT = 'answers and suggestions go to an open harness run you may read (evalledger run brain-eval)';
    END IF;
    RETURN harness;
END
$$;

-- brain_eval_complete_v1: the runner completes an open run it may read (the hot tier, as its
-- policy reads), at `completed` (NULL: now); whether it did. What completion checks and decides
-- is the triggers' (brain_eval_log_10_guard_update, brain_eval_log_20_decide). A function and not
-- an UPDATE grant: a role that may UPDATE a table may also take FOR UPDATE and FOR SHARE locks on
-- the rows it reads there, and a runner holding them on every open run stalled every reviewer's
-- score and sign-off, and every question row written to them (issue 17, class 7). SECURITY
-- DEFINER, so it asks caller_reads_v1 what the caller's policy would show: a cold run is no run.
CREATE FUNCTION evalledger.brain_eval_complete_v1(run_id uuid, completed timestamptz) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE evalledger.brain_eval_log l SET completed_at = coalesce(completed, now())
     WHERE l.eval_run_id = run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, NULL);
    RETURN FOUND;
END;
$$;

-- brain_eval_harness_answer_admit_v2: one brain answer of an open harness run you may read
-- (brain_eval_open_harness_v2), for one of its questions, with the analysis row the brain produced
-- for it since the run started. The automatic scores are the database's, computed from the stored
-- answer by brain_eval_answer_scores_v1 (the runner supplies none), with the lever enum of the
-- prompt's lever-mapped brain (brain_eval_levers_v1: by the prompt, not the label), the same as for a
-- recorded run. An answer the runner says kept the contract must have claims the database can score.
CREATE FUNCTION evalledger.brain_eval_harness_answer_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    harness evalledger.brain_eval_harness_run;
    analysis evalledger.brain_analysis_log;
    given jsonb;
    policy jsonb;
    problem text;
    computed jsonb;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_eval_harness_answer', jsonb_build_object(
        'citation_rate', NEW.citation_rate, 'confidence_distribution', NEW.confidence_distribution,
        'lever_mapping_violations', NEW.lever_mapping_violations));
    harness := evalledger.brain_eval_open_harness_v2(NEW.eval_run_id, 'answers');
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF NEW.recorded IS DISTINCT FROM (harness.answers = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: run % takes % answers only', NEW.eval_run_id, harness.answers
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;
    IF NOT NEW.question_id = ANY (harness.question_ids) THEN
        RAISE EXCEPTION 'evalledger: question % is not one of run %''s', NEW.question_id, NEW.eval_run_id
            USING ERRCODE = 'check_violation', COLUMN = 'question_id';
    END IF;
    SELECT a.* INTO analysis FROM evalledger.brain_analysis_log a WHERE a.analysis_id = NEW.analysis_id;
    IF analysis.analysis_id IS NULL OR analysis.origin <> 'eval' OR analysis.brain <> run.brain_under_test
       OR analysis.model_id <> run.model_id OR analysis.system_prompt_hash <> run.system_prompt_hash
       OR analysis.question_id IS DISTINCT FROM NEW.question_id THEN
        RAISE EXCEPTION 'evalledger: analysis % is not this run''s brain answering %', NEW.analysis_id, NEW.question_id
            USING ERRCODE = 'check_violation', COLUMN = 'analysis_id';
    END IF;
    IF analysis.produced_at < run.started_at THEN
        RAISE EXCEPTION 'evalledger: analysis % was produced at %, before run % started at %', NEW.analysis_id,
                to_char(analysis.produced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), run.eval_run_id,
                to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            USING ERRCODE = 'check_violation', COLUMN = 'analysis_id',
                  CONSTRAINT = 'brain_eval_harness_answer_analysis_during_the_run';
    END IF;
    IF NEW.contract_error IS NULL THEN
        problem := evalledger.brain_eval_claims_problem_v1(analysis.claims);
        IF problem IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: analysis % cannot be scored: %', NEW.analysis_id, problem
                USING ERRCODE = 'check_violation', COLUMN = 'analysis_id',
                      CONSTRAINT = 'brain_eval_harness_answer_answer_scorable',
                      HINT = 'an answer that broke the contract is recorded with its contract_error';
        END IF;
    END IF;

    SELECT c.sources INTO given FROM evalledger.brain_eval_catalog_question c
     WHERE c.catalog_version = harness.catalog_version AND c.question_id = NEW.question_id;
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    computed := evalledger.brain_eval_answer_scores_v1(
        analysis.claims, given, analysis.proposed_actions,
        evalledger.brain_eval_levers_v1(run.brain_under_test, run.system_prompt_hash, policy),
        NEW.contract_error IS NOT NULL);
    NEW.citation_rate := (computed ->> 'citation_rate')::numeric;
    NEW.confidence_distribution := computed -> 'confidence_distribution';
    NEW.lever_mapping_violations := (computed ->> 'lever_mapping_violations')::integer;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- brain_eval_harness_question_v1: each answer of a harness run becomes its question row, with the
-- catalog's type and stale-fixture flag and the answer's automatic scores; the reviewer's fields
-- wait for the reviewer. SECURITY DEFINER: a harness run's question rows are the database's alone.
CREATE FUNCTION evalledger.brain_eval_harness_question_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_question_score
           (eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture, citation_rate,
            lever_mapping_violations, confidence_distribution)
    SELECT NEW.eval_run_id, NEW.question_id, NEW.analysis_id, c.question_type, c.uses_stale_fixture,
           NEW.citation_rate, NEW.lever_mapping_violations, NEW.confidence_distribution
      FROM evalledger.brain_eval_harness_run h
      JOIN evalledger.brain_eval_catalog_question c
        ON c.catalog_version = h.catalog_version AND c.question_id = NEW.question_id
     WHERE h.eval_run_id = NEW.eval_run_id;
    RETURN NULL;
END;
$$;

-- brain_eval_judge_suggestion_admit_v2: one judge's draft for the reviewer on one answer of an open
-- harness run the caller may read (brain_eval_open_harness_v2: refused alike for any other). The runner supplies what it observed (the parsed reply, or the provider failure);
-- the database reads the draft from the reply and decides whether it contributes: total claims a
-- whole number, the unsupported claims quoted as strings and no more of them than claims, diagnosis
-- accuracy 0, 0.5 or 1 exactly where the question has that criterion, staleness recognised true or
-- false exactly on a stale-fixture question. Otherwise it records why not (parse_failed,
-- incomplete, out_of_scale). It derives the judge's family and flags the brain's own family.
CREATE FUNCTION evalledger.brain_eval_judge_suggestion_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    harness evalledger.brain_eval_harness_run;
    question evalledger.brain_eval_catalog_question;
    reply jsonb := NEW.response_json;
    wants_diagnosis boolean;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_eval_judge_suggestion', jsonb_build_object(
        'family', NEW.family, 'same_family', NEW.same_family, 'total_claims', NEW.total_claims,
        'unsupported_claims', NEW.unsupported_claims, 'diagnosis_accuracy', NEW.diagnosis_accuracy,
        'staleness_recognised', NEW.staleness_recognised, 'contributes', NEW.contributes));
    harness := evalledger.brain_eval_open_harness_v2(NEW.eval_run_id, 'suggestions');
    SELECT q.* INTO question FROM evalledger.brain_eval_catalog_question q
     WHERE q.catalog_version = harness.catalog_version AND q.question_id = NEW.question_id;
    wants_diagnosis := question.pass_criteria ? 'min_diagnosis_accuracy';

    NEW.family := split_part(NEW.model, ':', 1);
    NEW.same_family := NEW.family = (SELECT v.provider FROM evalledger.brain_version v
                                      WHERE v.brain_version_id = harness.brain_version_id);
    NEW.created_at := now();
    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;

    IF reply IS NULL OR jsonb_typeof(reply) <> 'object' THEN
        NEW.error_kind := 'parse_failed';
        NEW.error_message := 'the reply is not a JSON object';
    ELSIF jsonb_typeof(reply -> 'total_claims') IS DISTINCT FROM 'number'
          OR jsonb_typeof(reply -> 'unsupported_claims') IS DISTINCT FROM 'array'
          OR (wants_diagnosis AND jsonb_typeof(reply -> 'diagnosis_accuracy') IS DISTINCT FROM 'number')
          OR (question.uses_stale_fixture AND jsonb_typeof(reply -> 'staleness_recognised') IS DISTINCT FROM 'boolean') THEN
        NEW.error_kind := 'incomplete';
        NEW.error_message := 'the reply lacks total_claims, unsupported_claims'
            || CASE WHEN wants_diagnosis THEN ', diagnosis_accuracy' ELSE '' END
            || CASE WHEN question.uses_stale_fixture THEN ', staleness_recognised' ELSE '' END || ' as they should be';
    ELSIF (reply ->> 'total_claims')::numeric <> trunc((reply ->> 'total_claims')::numeric)
          OR (reply ->> 'total_claims')::numeric < 0
          OR jsonb_array_length(reply -> 'unsupported_claims') > (reply ->> 'total_claims')::numeric
          OR jsonb_path_exists(reply, '$.unsupported_claims[*] ? (@.type() != "string")')
          OR (wants_diagnosis AND (reply ->> 'diagnosis_accuracy')::numeric NOT IN (0, 0.5, 1)) THEN
        NEW.error_kind := 'out_of_scale';
        NEW.error_message := 'total_claims, unsupported_claims or diagnosis_accuracy is out of its scale';
    ELSE
        NEW.total_claims := (reply ->> 'total_claims')::integer;
        NEW.unsupported_claims := reply -> 'unsupported_claims';
        NEW.diagnosis_accuracy := CASE WHEN wants_diagnosis THEN (reply ->> 'diagnosis_accuracy')::numeric END;
        NEW.staleness_recognised := CASE WHEN question.uses_stale_fixture THEN (reply ->> 'staleness_recognised')::boolean END;
        IF jsonb_typeof(reply -> 'notes') = 'string' THEN
            NEW.notes := reply ->> 'notes';
        END IF;
    END IF;
    NEW.contributes := NEW.error_kind IS NULL;
    RETURN NEW;
END;
$$;

-- brain_eval_show_suggestions_v2: the run's reviewer asks to see the judges' suggestions on one of
-- its questions, in a run it may read (its own, in the hot tier): recorded once
-- (brain_eval_suggestion_shown) with the asking transaction's id. The reviewer's policy lets them
-- read those suggestions only in a later transaction, once this one committed the record: a reveal
-- that is rolled back showed nothing, so every value entered after seeing them is marked as such.
-- Returns when they were first shown. SECURITY DEFINER: the table takes rows from here only.
CREATE FUNCTION evalledger.brain_eval_show_suggestions_v2(run_id uuid, question text) RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    first_shown timestamptz;
BEGIN
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id
       OR NOT evalledger.caller_reads_v1(run.created_at, run.reviewer_user_id)
       OR NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q
                       WHERE q.eval_run_id = run_id AND q.question_id = question) THEN
        RAISE EXCEPTION 'evalledger: no question % in run % that you review', question, run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO evalledger.brain_eval_suggestion_shown
           (eval_run_id, question_id, reviewer_user_id, shown_by, run_created_at, shown_txid)
    VALUES (run_id, question, run.reviewer_user_id, session_user, run.created_at, txid_current())
    ON CONFLICT ON CONSTRAINT brain_eval_suggestion_shown_pkey DO NOTHING;
    SELECT s.shown_at INTO first_shown FROM evalledger.brain_eval_suggestion_shown s
     WHERE s.eval_run_id = run_id AND s.question_id = question;
    RETURN first_shown;
END;
$$;

-- brain_eval_reference_shown_guard_v1: brain_eval_reference_shown is append-only as
-- brain_eval_suggestion_shown is, and ages with it: a row leaves only with its question row
-- (ON DELETE CASCADE) inside the retention purge, when retention_due_v2 finds a suggestions-shown
-- row of the same run past the purge horizon and under no legal hold; every UPDATE, every other
-- DELETE and every TRUNCATE is refused, whoever asks.
CREATE FUNCTION evalledger.brain_eval_reference_shown_guard_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' AND evalledger.retention_purging_v1()
       AND evalledger.retention_due_v2('brain_eval_suggestion_shown', to_jsonb(OLD)) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'a reference shown stays recorded until its run is purged with it (evalledger retention apply)';
END;
$$;

-- brain_eval_show_reference_v2: the run's reviewer, once its own numbers for a question are saved
-- (question_needs_v2 names none of the reviewer's fields), asks to see the question's reference
-- answer: the catalog question's expected findings and pass criteria. Recorded once
-- (brain_eval_reference_shown) with the asking transaction's id and the question's last trail entry
-- then (entries_before: every later change to the reviewer's values has a higher entry_id); the
-- reference reads only in a later transaction, once this one committed the record
-- (brain_eval_reference_v2), so a rolled-back reveal showed nothing. The question row is locked
-- first, so no entry of it is in flight while the mark is taken. NULL, recording nothing, for a run
-- recorded outside the harness (it has no catalog question). Returns when it was first shown.
-- SECURITY DEFINER: the table takes rows from here only. Over v1: the hot tier counted from the
-- statement's start (hot_tier_start_v1), so a transaction held open across the boundary keeps no
-- old window; the question's needs by the prompt's brains (question_needs_v2), as completion asks.
CREATE FUNCTION evalledger.brain_eval_show_reference_v2(run_id uuid, question text) RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    scored evalledger.brain_eval_question_score;
    missing text[];
    first_shown timestamptz;
BEGIN
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id
       OR run.created_at < evalledger.hot_tier_start_v1() THEN
        RAISE EXCEPTION 'evalledger: no question % in run % that you review', question, run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT q.* INTO scored FROM evalledger.brain_eval_question_score q
     WHERE q.eval_run_id = run_id AND q.question_id = question
       FOR UPDATE;
    IF scored.question_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no question % in run % that you review', question, run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_run h WHERE h.eval_run_id = run_id) THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(f) INTO missing
      FROM unnest(evalledger.question_needs_v2(scored, (SELECT r.definition FROM evalledger.rubric r
                                                      WHERE r.rubric_id = run.rubric_id),
                                               evalledger.run_brains_v1(run.brain_under_test, run.system_prompt_hash))) AS f
     WHERE f IN ('hallucinations_detected', 'total_claims', 'staleness_correctly_recognized',
                 'diagnosis_accuracy_score', 'narrative_coherence_rating');
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: the reference answer of question % shows once your numbers for it are saved '
                        '(blind review): still needed: %', question, array_to_string(missing, ', ')
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    INSERT INTO evalledger.brain_eval_reference_shown
           (eval_run_id, question_id, reviewer_user_id, shown_by, shown_txid, entries_before, run_created_at)
    VALUES (run_id, question, run.reviewer_user_id, session_user, txid_current(),
            coalesce((SELECT max(e.entry_id) FROM evalledger.brain_eval_review_entry e
                       WHERE e.eval_run_id = run_id AND e.question_id = question), 0),
            run.created_at)
    ON CONFLICT ON CONSTRAINT brain_eval_reference_shown_pkey DO NOTHING;
    SELECT s.shown_at INTO first_shown FROM evalledger.brain_eval_reference_shown s
     WHERE s.eval_run_id = run_id AND s.question_id = question;
    RETURN first_shown;
END;
$$;

-- brain_eval_reference_v2: a question's reference answer for the run's reviewer, once shown to them
-- (brain_eval_show_reference_v2) by a transaction that committed before this one: the catalog
-- question's expected findings, its other pass criteria, and when it was first shown. NULL before
-- then, in the revealing transaction itself, and for anyone but the run's reviewer (whose catalog
-- grants leave out pass_criteria and the catalog document, so this is the reviewer's one way to them).
-- Over v1: the hot tier counted from the statement's start (hot_tier_start_v1).
CREATE FUNCTION evalledger.brain_eval_reference_v2(run_id uuid, question text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object('expected_findings', coalesce(c.pass_criteria -> 'expected_findings', '[]'),
                              'pass_criteria', c.pass_criteria - 'expected_findings',
                              'shown_at', to_char(s.shown_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC')
      FROM evalledger.brain_eval_reference_shown s
      JOIN evalledger.brain_eval_log l ON l.eval_run_id = s.eval_run_id
      JOIN evalledger.brain_eval_harness_run h ON h.eval_run_id = s.eval_run_id
      JOIN evalledger.brain_eval_catalog_question c
        ON c.catalog_version = h.catalog_version AND c.question_id = s.question_id
     WHERE s.eval_run_id = run_id AND s.question_id = question
       AND s.shown_txid IS DISTINCT FROM txid_current_if_assigned()
       AND l.reviewer_user_id = evalledger.reviewer_id_of_v1(evalledger.caller_v1())
       AND l.created_at >= evalledger.hot_tier_start_v1();
$$;

-- =============================================================================================
-- work-quality: the policy, Compare and IsRegression, admission, completion, the history view
-- =============================================================================================
-- work_quality_policy_v1: the comparison policy as data, from the newest work-quality rubric row:
-- {"same_band": 0.05, "regress_tolerance": 0.08, "dimensions": [...]}. Compare and IsRegression
-- read their thresholds here, so a new policy is a new rubric row, never an edited function.
-- SECURITY DEFINER so every reader of the history view gets the same policy whatever it may read.
CREATE FUNCTION evalledger.work_quality_policy_v1() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT (r.definition -> 'compare')
           || jsonb_build_object('dimensions',
                  (SELECT jsonb_agg(d -> 'key' ORDER BY n)
                     FROM jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)))
      FROM evalledger.rubric r
     WHERE r.rubric_id = evalledger.active_rubric_v1('work-quality')
$$;

-- work_quality_compare_v1: the seed's Compare(prev, cur) over two mean_scores objects. NULL when
-- there is no previous snapshot; otherwise the seed's Delta: per-dimension cur - prev (a missing
-- score counts as 0, as in a Go map), overall_delta, value_delta, and the headline verdict on
-- overall: better above +same_band, worse below -same_band, same within it (inclusive).
-- Arithmetic is numeric, not float64: a change of exactly 0.05 is exactly 0.05 and so "same"
-- (float64 would make 0.75 - 0.70 = 0.050000000000000044 and call it "better").
CREATE FUNCTION evalledger.work_quality_compare_v1(prev_mean jsonb, cur_mean jsonb, prev_run_id text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH policy AS (SELECT evalledger.work_quality_policy_v1() AS p),
    deltas AS (
        SELECT d.dim,
               trim_scale(coalesce((cur_mean ->> d.dim)::numeric, 0) - coalesce((prev_mean ->> d.dim)::numeric, 0)) AS delta
          FROM policy, jsonb_array_elements_text(policy.p -> 'dimensions') d(dim))
    SELECT CASE WHEN prev_mean IS NULL OR cur_mean IS NULL THEN NULL ELSE jsonb_build_object(
               'prev_run_id', coalesce(prev_run_id, ''),
               'overall_delta', (SELECT delta FROM deltas WHERE dim = 'overall'),
               'value_delta', (SELECT delta FROM deltas WHERE dim = 'value_for_money'),
               'per_dimension', (SELECT jsonb_object_agg(dim, delta) FROM deltas),
               'verdict', CASE WHEN (SELECT delta FROM deltas WHERE dim = 'overall') > (p ->> 'same_band')::numeric
                               THEN 'better'
                               WHEN (SELECT delta FROM deltas WHERE dim = 'overall') < -(p ->> 'same_band')::numeric
                               THEN 'worse'
                               ELSE 'same' END) END
      FROM policy
$$;

-- work_quality_is_regression_v1: the seed's Delta.IsRegression(tol). The reasons, in the seed's
-- words, why overall or value_for_money dropped by more than the tolerance; an empty array is
-- no regression, and a NULL delta (no baseline) is never one. A tolerance that is NULL, zero or
-- negative means the policy's default (the rubric's regress_tolerance), as tol <= 0 does in the
-- seed. A drop of exactly the tolerance is not a regression (the seed's test is delta < -tol).
CREATE FUNCTION evalledger.work_quality_is_regression_v1(delta jsonb, tolerance numeric DEFAULT NULL)
RETURNS text[] LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH tol AS (
        SELECT CASE WHEN tolerance IS NULL OR tolerance <= 0
                    THEN (evalledger.work_quality_policy_v1() ->> 'regress_tolerance')::numeric
                    ELSE tolerance END AS t)
    SELECT CASE WHEN delta IS NULL THEN ARRAY[]::text[] ELSE ARRAY(
        SELECT format('%s dropped %s (vs %s)', x.label, round(x.d, 3), delta ->> 'prev_run_id')
          FROM tol, (VALUES (1, 'overall', (delta ->> 'overall_delta')::numeric),
                            (2, 'value_for_money', (delta ->> 'value_delta')::numeric)) x(n, label, d)
         WHERE x.d < -tol.t
         ORDER BY x.n) END
      FROM tol
$$;

-- work_quality_snapshot_admit_v2: a new snapshot row, from a run or from an imported file.
-- A run (origin 'run') starts in progress: the runner supplies what it observed (target, task,
-- evidence digest, metrics, panel); the database stamps `at` and picks the previous snapshot
-- (the target's latest completed one) that the judges will see and that the comparison is
-- against. An import (origin 'import') supplies only the document a SnapshotStore file held
-- (and the file's name): the database reads every column from it, and the row is complete at once.
-- Either goes through rubric admission (rubric_admitted_v2: an activated work-quality rubric with a
-- scale), and an imported `at` is never in the future: the previous snapshot is the target's latest
-- completed one at or before the new one, so no file dated 2099 becomes every later run's baseline.
CREATE FUNCTION evalledger.work_quality_snapshot_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    doc jsonb := NEW.snapshot_json;
    prev evalledger.eval_work_quality_snapshots;
BEGIN
    NEW.rubric_id := evalledger.rubric_admitted_v2('work-quality', NEW.rubric_id);
    NEW.created_at := now();

    IF NEW.origin = 'import' THEN
        IF doc IS NULL OR jsonb_typeof(doc) <> 'object' THEN
            RAISE EXCEPTION 'evalledger: an imported snapshot is its document: snapshot_json must be an object'
                USING ERRCODE = 'check_violation', COLUMN = 'snapshot_json';
        END IF;
        IF (doc ->> 'schema_version') IS DISTINCT FROM '1' THEN
            RAISE EXCEPTION 'evalledger: snapshot schema_version % is not 1', coalesce(doc ->> 'schema_version', 'null')
                USING ERRCODE = 'check_violation', COLUMN = 'snapshot_json';
        END IF;
        PERFORM evalledger.refuse_supplied_v1('eval_work_quality_snapshots', jsonb_build_object(
            'completed_at', NEW.completed_at, 'mean_scores', NEW.mean_scores, 'comparison', NEW.comparison,
            'prev_snapshot_id', NEW.prev_snapshot_id, 'note', NEW.note));
        NEW.kind := doc ->> 'kind';
        NEW.name := doc ->> 'name';
        NEW.persona := coalesce(doc ->> 'persona', '');
        NEW.run_id := doc ->> 'run_id';
        NEW.at := (doc ->> 'at')::timestamptz;
        IF NEW.at > clock_timestamp() THEN
            RAISE EXCEPTION 'evalledger: snapshot % of % is dated % (in the future)', NEW.run_id, NEW.name, doc ->> 'at'
                USING ERRCODE = 'check_violation', COLUMN = 'at', CONSTRAINT = 'eval_work_quality_snapshots_at_not_in_future';
        END IF;
        NEW.bot_version := coalesce(doc ->> 'bot_version', '');
        NEW.iterion_sha := coalesce(doc ->> 'iterion_sha', '');
        NEW.task := coalesce(doc ->> 'task', '');
        NEW.outcome := '';
        NEW.evidence_digest := coalesce(doc ->> 'evidence_digest', '');
        NEW.cost_usd := coalesce((doc #>> '{metrics,cost_usd}')::numeric, 0);
        NEW.tokens := coalesce((doc #>> '{metrics,tokens}')::bigint, 0);
        NEW.duration_ms := coalesce((doc #>> '{metrics,duration_ms}')::bigint, 0);
        NEW.iterations := coalesce((doc #>> '{metrics,iterations}')::bigint, 0);
        NEW.model_calls := coalesce((doc #>> '{metrics,model_calls}')::bigint, 0);
        NEW.retries := coalesce((doc #>> '{metrics,retries}')::bigint, 0);
        NEW.models := ARRAY(SELECT v ->> 'model'
                              FROM jsonb_array_elements(CASE jsonb_typeof(doc #> '{aggregate,verdicts}')
                                                        WHEN 'array' THEN doc #> '{aggregate,verdicts}' ELSE '[]' END)
                                   WITH ORDINALITY x(v, n) ORDER BY n);
        NEW.mean_scores := coalesce(doc #> '{aggregate,mean_scores}', '{}');
        NEW.disagreement := doc #> '{aggregate,disagreement}';
        NEW.note := coalesce(doc #>> '{aggregate,note}', '');
        NEW.prev_run_id := nullif(doc ->> 'prev_run_id', '');
        NEW.comparison := CASE WHEN jsonb_typeof(doc -> 'comparison') = 'object' THEN doc -> 'comparison' END;
        NEW.prev_snapshot_id := (SELECT s.snapshot_id FROM evalledger.eval_work_quality_snapshots s
                                  WHERE s.name = NEW.name AND s.run_id = NEW.prev_run_id);
        NEW.judges_cost_usd := 0;
        NEW.completed_at := now();
        RETURN NEW;
    END IF;

    -- A run: inserted in progress, with a valid panel; what the database computes is not the
    -- runner's to supply.
    PERFORM evalledger.require_open_v1('work-quality run', NEW.completed_at, 'judge verdicts');
    PERFORM evalledger.refuse_supplied_v1('eval_work_quality_snapshots', jsonb_build_object(
        'mean_scores', NEW.mean_scores, 'disagreement', NEW.disagreement,
        'note', NEW.note, 'comparison', NEW.comparison, 'snapshot_json', NEW.snapshot_json,
        'prev_snapshot_id', NEW.prev_snapshot_id, 'prev_run_id', NEW.prev_run_id,
        'judges_cost_usd', NEW.judges_cost_usd, 'source_file', NEW.source_file));
    PERFORM evalledger.check_panel_v1('work-quality run', NEW.models);
    NEW.at := now();
    SELECT * INTO prev FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.completed_at IS NOT NULL AND s.at <= NEW.at
     ORDER BY s.at DESC, s.snapshot_id DESC LIMIT 1;
    IF FOUND THEN
        NEW.prev_snapshot_id := prev.snapshot_id;
        NEW.prev_run_id := prev.run_id;
    END IF;
    RETURN NEW;
END;
$$;

-- work_quality_import_verdicts_v1: an imported snapshot's judge verdicts become verdict rows too,
-- one per entry of aggregate.verdicts, as the file recorded them (the ledger holds every verdict,
-- whoever ran the panel).
CREATE FUNCTION evalledger.work_quality_import_verdicts_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.origin = 'import' AND jsonb_typeof(NEW.snapshot_json #> '{aggregate,verdicts}') = 'array' THEN
        INSERT INTO evalledger.eval_work_quality_judge_verdicts (snapshot_id, model, recorded, response_json)
        SELECT NEW.snapshot_id, v ->> 'model', false, v
          FROM jsonb_array_elements(NEW.snapshot_json #> '{aggregate,verdicts}') WITH ORDINALITY x(v, n)
         ORDER BY n
        ON CONFLICT ON CONSTRAINT eval_work_quality_judge_verdicts_once DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

-- work_quality_verdict_admit_v2: one judge's verdict on an open work-quality run. The runner
-- supplies what it observed (the parsed reply, or the provider failure); the database decides
-- whether it contributes: all seven dimensions present, numbers on the rubric's 0-1 scale, a
-- narrative, and a confidence on 0-1. Otherwise it records why (parse_failed, incomplete_scores,
-- out_of_scale, off_contract) and the judge is skipped with a note at completion. The judge's
-- family is its provider, and a judge of the assessed run's family is flagged. The relative
-- judgement (better/same/worse per dimension) is kept only when there is a previous snapshot.
-- Rows of an imported snapshot come from its own file (inserted by work_quality_import_verdicts_v1).
-- The snapshot is locked FOR SHARE, so a completion (work_quality_snapshot_decide_v3) waits for this
-- verdict or this verdict for it; one that does not exist, is complete, or is one the runner may
-- not read (caller_reads_v1: a cold one) is refused in one way.
CREATE FUNCTION evalledger.work_quality_verdict_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    snap evalledger.eval_work_quality_snapshots;
    policy jsonb;
    dims text[];
    decided jsonb;
    relative jsonb;
BEGIN
    SELECT * INTO snap FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.snapshot_id FOR SHARE;
    IF snap.snapshot_id IS NULL
       OR (snap.origin = 'import' AND pg_trigger_depth() < 2)
       OR (snap.origin = 'run' AND (snap.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(snap.created_at, NULL))) THEN
        RAISE EXCEPTION 'evalledger: no open work-quality run % takes verdicts', NEW.snapshot_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'snapshot_id',
                  HINT = 'an imported snapshot''s verdicts come from its file only';
    END IF;
    IF snap.origin = 'run' AND NOT NEW.model = ANY (snap.models) THEN
        RAISE EXCEPTION 'evalledger: model % is not on the panel of snapshot %', NEW.model, NEW.snapshot_id
            USING ERRCODE = 'check_violation', COLUMN = 'model';
    END IF;
    PERFORM evalledger.refuse_supplied_v1('eval_work_quality_judge_verdicts', jsonb_build_object(
        'scores', NEW.scores, 'narrative', NEW.narrative, 'relative_vs_prev', NEW.relative_vs_prev,
        'relative_narrative', NEW.relative_narrative, 'confidence', NEW.confidence));

    -- The family is the provider: the spec's part before the first ':' (ours) or '/' (the seed's).
    NEW.family := substring(NEW.model FROM '^([^:/]*)');
    NEW.same_family := CASE WHEN snap.origin = 'import'
                            THEN coalesce((NEW.response_json ->> 'same_family_as_bot')::boolean, false)
                            ELSE coalesce(NEW.family = snap.bot_family, false) END;
    NEW.created_at := now();

    -- What only the runner can see: the call failed, or the budget did not allow it.
    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;
    NEW.error_message := NULL;

    -- The contribution rule every judged suite shares (all dimensions, numbers, on the scale); a
    -- judge replies flat (the seed's schema), a snapshot file nests them under "scores".
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = snap.rubric_id;
    decided := evalledger.judge_scores_v2(NEW.response_json, policy);
    IF decided ? 'error_kind' THEN
        NEW.contributes := false;
        NEW.error_kind := decided ->> 'error_kind';
        NEW.error_message := decided ->> 'error_message';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'narrative') IS DISTINCT FROM 'string'
       OR btrim(NEW.response_json ->> 'narrative') = '' THEN
        NEW.contributes := false;
        NEW.error_kind := 'off_contract';
        NEW.error_message := 'no narrative';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'confidence') IS DISTINCT FROM 'number'
       OR (NEW.response_json ->> 'confidence')::numeric NOT BETWEEN 0 AND 1 THEN
        NEW.contributes := false;
        NEW.error_kind := 'off_contract';
        NEW.error_message := format('confidence = %s (expected a number from 0 to 1)',
                                    coalesce((NEW.response_json -> 'confidence')::text, 'missing'));
        RETURN NEW;
    END IF;

    NEW.scores := decided -> 'scores';
    NEW.narrative := NEW.response_json ->> 'narrative';
    NEW.confidence := trim_scale((NEW.response_json ->> 'confidence')::numeric);
    IF snap.prev_run_id IS NOT NULL THEN
        -- better/same/worse per dimension, spelled as the seed normalises it; "n/a" and anything
        -- else is left out, and an empty judgement is none.
        dims := ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
                       ORDER BY n);
        relative := CASE WHEN jsonb_typeof(NEW.response_json -> 'relative_vs_prev') = 'object'
                         THEN NEW.response_json -> 'relative_vs_prev' ELSE '{}' END;
        NEW.relative_vs_prev := (
            SELECT jsonb_object_agg(d, lower(btrim(relative ->> d)))
              FROM unnest(dims) d
             WHERE jsonb_typeof(relative -> d) = 'string'
               AND lower(btrim(relative ->> d)) IN ('better', 'same', 'worse'));
        IF jsonb_typeof(NEW.response_json -> 'relative_narrative') = 'string' THEN
            NEW.relative_narrative := NEW.response_json ->> 'relative_narrative';
        END IF;
    END IF;
    NEW.contributes := true;
    RETURN NEW;
END;
$$;

-- work_quality_document_v1: a completed run's snapshot as the seed's Snapshot JSON (field names and
-- shapes of seed 003; an empty string stands for a field Go leaves out), built from the rows:
-- the contributing verdicts in panel order, the means, spreads, note and comparison the
-- completion computed. The runner writes the file from this document and nothing else.
CREATE FUNCTION evalledger.work_quality_document_v1(s evalledger.eval_work_quality_snapshots) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'schema_version', 1,
        'kind', s.kind,
        'name', s.name,
        'persona', s.persona,
        'run_id', s.run_id,
        'at', to_char(s.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'bot_version', s.bot_version,
        'iterion_sha', s.iterion_sha,
        'task', s.task,
        'metrics', jsonb_build_object('cost_usd', s.cost_usd, 'tokens', s.tokens, 'duration_ms', s.duration_ms,
                                      'iterations', s.iterations, 'model_calls', s.model_calls, 'retries', s.retries),
        'aggregate', jsonb_build_object(
            'verdicts', coalesce((
                SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                           'model', v.model, 'family', v.family, 'same_family_as_bot', v.same_family,
                           'scores', v.scores, 'narrative', v.narrative, 'relative_vs_prev', v.relative_vs_prev,
                           'relative_narrative', v.relative_narrative, 'confidence', v.confidence))
                           ORDER BY array_position(s.models, v.model))
                  FROM evalledger.eval_work_quality_judge_verdicts v
                 WHERE v.snapshot_id = s.snapshot_id AND v.contributes), '[]'),
            'mean_scores', s.mean_scores,
            'disagreement', s.disagreement,
            'note', s.note),
        'evidence_digest', s.evidence_digest,
        'prev_run_id', s.prev_run_id,
        'comparison', s.comparison)
$$;

-- work_quality_current_v1: each judge's current row on a snapshot: its latest by retry_no (the
-- earlier ones are calls that were retried, or that started and were answered or lost). With the
-- reader's rights.
CREATE FUNCTION evalledger.work_quality_current_v1(p_snapshot_id bigint)
RETURNS SETOF evalledger.eval_work_quality_judge_verdicts
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (v.model) v.*
      FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = p_snapshot_id
     ORDER BY v.model, v.retry_no DESC
$$;

-- work_quality_complete_v1: the runner completes an open snapshot it may read (the hot tier); the
-- Snapshot document the database built, or NULL when there is no such open snapshot. The decision
-- is the triggers' (eval_work_quality_snapshots_20_decide). A function and not an UPDATE grant, as
-- brain_eval_complete_v1 says: no role may lock a snapshot's row but the code role.
CREATE FUNCTION evalledger.work_quality_complete_v1(snapshot bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    document jsonb;
BEGIN
    UPDATE evalledger.eval_work_quality_snapshots s SET completed_at = now()
     WHERE s.snapshot_id = snapshot AND s.completed_at IS NULL
       AND evalledger.caller_reads_v1(s.created_at, NULL)
    RETURNING s.snapshot_json INTO document;
    RETURN document;
END;
$$;

-- work_quality_snapshot_identity_v1: a snapshot's identity is its target, its run id and how it
-- was judged (live or recorded), so recorded replies never occupy a live run's id. After
-- work_quality_snapshot_admit_v2: a run's previous snapshot is the target's latest completed one
-- judged the same way (a live run is never compared with recorded replies, nor shown them); an
-- imported file was judged live unless its note says its replies were the recorded ones.
CREATE FUNCTION evalledger.work_quality_snapshot_identity_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    prev evalledger.eval_work_quality_snapshots;
BEGIN
    IF NEW.origin = 'import' THEN
        NEW.judges := CASE WHEN NEW.note LIKE 'recorded replies shipped with evalledger%' THEN 'recorded' ELSE 'live' END;
        RETURN NEW;
    END IF;
    SELECT * INTO prev FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.completed_at IS NOT NULL
       AND coalesce(s.judges, CASE WHEN s.note LIKE 'recorded replies shipped with evalledger%' THEN 'recorded'
                                   ELSE 'live' END) = NEW.judges
     ORDER BY s.at DESC, s.snapshot_id DESC LIMIT 1;
    NEW.prev_snapshot_id := prev.snapshot_id;
    NEW.prev_run_id := prev.run_id;
    RETURN NEW;
END;
$$;

-- work_quality_verdict_sequence_v1: where a judge's row falls among the rows of its call on a
-- snapshot, before the verdict is admitted (work_quality_verdict_admit_v2). retry_no is the
-- database's: 0 first, one more for each row after. A row follows only a started call (its answer,
-- or a new start after a runner that stopped), a failure outside the judge's content (a provider
-- error, a call the budget did not allow), or, while no judge of the snapshot has contributed,
-- any failure: a run with no verdict at all can never be completed, so its --run-id is judged
-- again rather than left open for good. A started call carries only the runner's estimate of its
-- cost, which counts if no answer follows. A live snapshot takes live rows, a recorded one
-- recorded rows. An imported snapshot's rows come from its file, once each.
CREATE FUNCTION evalledger.work_quality_verdict_sequence_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    snap evalledger.eval_work_quality_snapshots;
    cur evalledger.eval_work_quality_judge_verdicts;
BEGIN
    SELECT * INTO snap FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.snapshot_id;
    IF NOT FOUND OR snap.origin = 'import' OR snap.completed_at IS NOT NULL
       OR NOT evalledger.caller_reads_v1(snap.created_at, NULL) THEN
        NEW.retry_no := 0;
        -- Admission (work_quality_verdict_admit) refuses a missing, closed or unreadable snapshot
        -- alike, and admits imports: nothing here says more about it.
        RETURN NEW;
    END IF;
    IF snap.judges IS NOT NULL AND NEW.recorded IS DISTINCT FROM (snap.judges = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % is judged by % judges: a % reply is not one of its verdicts',
                NEW.snapshot_id, snap.judges, CASE WHEN NEW.recorded THEN 'recorded' ELSE 'live' END
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;

    SELECT * INTO cur FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.model = NEW.model
     ORDER BY v.retry_no DESC LIMIT 1;
    IF NOT FOUND THEN
        NEW.retry_no := 0;
    ELSIF cur.call_started OR cur.error_kind IN ('provider_error', 'budget_exhausted')
          OR (NOT cur.contributes AND NOT EXISTS (SELECT 1 FROM evalledger.eval_work_quality_judge_verdicts v
                                                   WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes)) THEN
        NEW.retry_no := cur.retry_no + 1;
    ELSE
        RAISE EXCEPTION 'evalledger: % has its verdict on work-quality snapshot %: nothing to retry',
                NEW.model, NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_judge_verdicts_once';
    END IF;

    IF NEW.call_started THEN
        IF NEW.recorded OR NEW.error_kind IS NOT NULL OR NEW.response_json IS NOT NULL OR NEW.raw_excerpt IS NOT NULL
           OR NEW.input_tokens <> 0 OR NEW.output_tokens <> 0 OR NEW.cost_usd <> 0 OR NEW.attempts <> 0 THEN
            RAISE EXCEPTION 'evalledger: a started call carries only the estimate of its cost'
                USING ERRCODE = 'check_violation', COLUMN = 'call_started';
        END IF;
        IF NEW.estimated_cost_usd IS NULL OR NEW.estimated_cost_usd < 0 THEN
            RAISE EXCEPTION 'evalledger: a started call needs the estimate of its cost (0 or more)'
                USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
        END IF;
        NEW.error_kind := 'provider_error';
        NEW.error_message := 'call started: no reply recorded';
    ELSIF NEW.estimated_cost_usd IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: only a started call carries an estimated cost; an answer carries its own'
            USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
    END IF;
    RETURN NEW;
END;
$$;

-- work_quality_snapshot_decide_v3: a run's completion (complete_once_v1 has already refused any
-- other UPDATE), once every panel model's current row (work_quality_current_v1) is an answer or a
-- failure: a call that started with no reply recorded is no verdict yet. The database computes
-- the aggregate: mean_scores per dimension over the contributing judges; disagreement (max - min)
-- per dimension when at least two contributed (one judge has no spread to show); the note naming
-- each judge skipped in its current row (a call retried is not skipped), and each contributing
-- judge of the assessed run's family, after a label naming the judges whose replies were recorded
-- rather than live; the comparison with the previous snapshot (work_quality_compare_v1); what the
-- judges cost, exactly, a call that started and was never answered counting the runner's estimate
-- of it; and the whole document. With no contributing judge there is nothing to aggregate:
-- completion is refused and the run stays open, and the same --run-id judges again. Verdicts lock
-- their snapshot FOR SHARE, so this waits for them; it then reads under READ COMMITTED only
-- (require_fresh_snapshot_v1), whose fresh snapshot sees what it waited for. Over v2: current rows.
CREATE FUNCTION evalledger.work_quality_snapshot_decide_v3() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    dims text[];
    contributing integer;
    prev_mean jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('work-quality snapshot');
    SELECT string_agg(m, ', ' ORDER BY p) INTO gap
      FROM unnest(NEW.models) WITH ORDINALITY u(m, p)
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.work_quality_current_v1(NEW.snapshot_id) v
                        WHERE v.model = u.m AND NOT v.call_started);
    IF gap IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % lacks a verdict from %', NEW.snapshot_id, gap
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_verdicts';
    END IF;
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes;
    IF contributing = 0 THEN
        RAISE EXCEPTION 'evalledger: no judge produced a verdict for work-quality snapshot %', NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_a_verdict';
    END IF;

    dims := ARRAY(SELECT d ->> 'key' FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                   WHERE r.rubric_id = NEW.rubric_id ORDER BY n);
    SELECT jsonb_object_agg(d, a.mean), CASE WHEN contributing >= 2 THEN jsonb_object_agg(d, a.spread) END
      INTO NEW.mean_scores, NEW.disagreement
      FROM unnest(dims) d
     CROSS JOIN LATERAL (
            SELECT trim_scale(avg((v.scores ->> d)::numeric)) AS mean,
                   trim_scale(max((v.scores ->> d)::numeric) - min((v.scores ->> d)::numeric)) AS spread
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes) a;
    SELECT coalesce(string_agg(line, '; ' ORDER BY p, k), '') INTO NEW.note
      FROM (SELECT array_position(NEW.models, v.model) AS p, 1 AS k,
                   format('judge %s skipped: %s%s', v.model, v.error_kind, coalesce(': ' || v.error_message, '')) AS line
              FROM evalledger.work_quality_current_v1(NEW.snapshot_id) v
             WHERE NOT v.contributes
            UNION ALL
            SELECT array_position(NEW.models, v.model), 2,
                   format('judge %s shares the assessed run''s family (%s)', v.model, v.family)
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes AND v.same_family
            UNION ALL
            SELECT 0, 0, 'recorded replies shipped with evalledger, not live calls: '
                         || string_agg(v.model, ', ' ORDER BY array_position(NEW.models, v.model))
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes AND v.recorded
            HAVING count(*) > 0) notes;
    IF NEW.prev_snapshot_id IS NOT NULL THEN
        SELECT s.mean_scores INTO prev_mean FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.prev_snapshot_id;
        NEW.comparison := evalledger.work_quality_compare_v1(prev_mean, NEW.mean_scores, NEW.prev_run_id);
    END IF;
    -- A started call is settled by the answer that follows it; one followed by another start (its
    -- runner stopped) counts its estimate.
    SELECT trim_scale(coalesce(sum(c.cost_usd + CASE WHEN c.call_started AND c.restarted THEN c.estimated_cost_usd
                                                      ELSE 0 END), 0))
      INTO NEW.judges_cost_usd
      FROM (SELECT v.cost_usd, v.call_started, v.estimated_cost_usd,
                   coalesce(lead(v.call_started) OVER (PARTITION BY v.model ORDER BY v.retry_no), false) AS restarted
              FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = NEW.snapshot_id) c;
    NEW.snapshot_json := evalledger.work_quality_document_v1(NEW);
    RETURN NEW;
END;
$$;

-- work_quality_history_v1: per target, every completed snapshot over time: the mean score of each
-- dimension, the comparison with the previous snapshot (deltas and headline verdict), whether it
-- is a regression at the policy's default tolerance and why, and the price (the assessed run's
-- cost, tokens and duration, and what the judges cost). Read by RevOps and auditors under their
-- own row-level security, by the same pattern as the brain-eval dashboards: the query lives in a
-- SECURITY INVOKER SQL function (work_quality_history_rows_v1) so the reader's policies filter it
-- on PostgreSQL 14 too, and the view gets security_invoker where the server has it (15+).
CREATE FUNCTION evalledger.work_quality_history_rows_v1()
RETURNS TABLE (
    name               text,
    kind               text,
    persona            text,
    at                 timestamptz,
    run_id             text,
    origin             text,
    snapshot_id        bigint,
    models             text[],
    efficacy           numeric,
    completeness       numeric,
    output_quality     numeric,
    restraint          numeric,
    reliability        numeric,
    value_for_money    numeric,
    overall            numeric,
    prev_run_id        text,
    overall_delta      numeric,
    value_delta        numeric,
    verdict            text,
    regression         boolean,
    regression_reasons text[],
    cost_usd           numeric,
    tokens             bigint,
    duration_ms        bigint,
    iterations         bigint,
    model_calls        bigint,
    retries            bigint,
    judges_cost_usd    numeric,
    note               text)
LANGUAGE sql STABLE AS $$
    SELECT s.name, s.kind, s.persona, s.at, s.run_id, s.origin, s.snapshot_id, s.models,
           (s.mean_scores ->> 'efficacy')::numeric, (s.mean_scores ->> 'completeness')::numeric,
           (s.mean_scores ->> 'output_quality')::numeric, (s.mean_scores ->> 'restraint')::numeric,
           (s.mean_scores ->> 'reliability')::numeric, (s.mean_scores ->> 'value_for_money')::numeric,
           (s.mean_scores ->> 'overall')::numeric,
           s.prev_run_id, (s.comparison ->> 'overall_delta')::numeric, (s.comparison ->> 'value_delta')::numeric,
           s.comparison ->> 'verdict',
           cardinality(r.reasons) > 0, r.reasons,
           s.cost_usd, s.tokens, s.duration_ms, s.iterations, s.model_calls, s.retries, s.judges_cost_usd, s.note
      FROM evalledger.eval_work_quality_snapshots s
     CROSS JOIN LATERAL (SELECT evalledger.work_quality_is_regression_v1(s.comparison) AS reasons) r
     WHERE s.completed_at IS NOT NULL
$$;

CREATE VIEW evalledger.work_quality_history_v1 AS
    SELECT * FROM evalledger.work_quality_history_rows_v1();
COMMENT ON VIEW evalledger.work_quality_history_v1 IS
    'Per target (name), each completed work-quality snapshot over time: dimension means, deltas and verdict against the previous snapshot, regression at the default tolerance, price and judge cost.';

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_history_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- =============================================================================================
-- Retention: the tier clock, holds, what is due, the append-only guard, the plan and the purge
-- =============================================================================================
-- retention_clock_v1: the tier clock is the database's own time of recording, never the caller's.
-- A row's own clock is now(); a child row carries its parent's recording time (a brain-eval run's,
-- a takes-quality run's, a work-quality snapshot's), so every tier policy compares a column of the
-- row itself. A hold records who placed it.
CREATE FUNCTION evalledger.retention_clock_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    CASE TG_TABLE_NAME
    WHEN 'brain_eval_harness_run', 'brain_eval_harness_answer', 'brain_eval_judge_suggestion' THEN
        NEW.created_at := now();
        NEW.run_created_at := (SELECT l.created_at FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id);
    WHEN 'eval_takes_quality_judge_verdicts' THEN
        NEW.created_at := now();
        NEW.run_created_at := (SELECT t.created_at FROM evalledger.eval_takes_quality_runs t WHERE t.id = NEW.run_id);
    WHEN 'eval_work_quality_judge_verdicts' THEN
        NEW.created_at := now();
        NEW.snapshot_created_at := (SELECT s.created_at FROM evalledger.eval_work_quality_snapshots s
                                     WHERE s.snapshot_id = NEW.snapshot_id);
    WHEN 'eval_capture_failures' THEN
        NEW.recorded_at := now();
    WHEN 'legal_hold' THEN
        NEW.placed_at := now();
        NEW.placed_by := session_user;
    ELSE
        NEW.created_at := now();
    END CASE;
    RETURN NEW;
END;
$$;

-- retention_purging_v1: true inside a retention_purge_v2() call of the current transaction (its
-- marker row, keyed by the transaction id, which only that function writes).
CREATE FUNCTION evalledger.retention_purging_v1() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM evalledger.retention_purge_marker m
                    WHERE m.txid = txid_current_if_assigned())
$$;

-- retention_purge_log_admit_v1: a purge log row is written by the purge alone, stamped by the
-- database with when, who (the session's login) and the transaction.
CREATE FUNCTION evalledger.retention_purge_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT evalledger.retention_purging_v1() THEN
        RAISE EXCEPTION 'evalledger: retention_purge_log is written by the retention purge alone'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    NEW.purged_at := now();
    NEW.purged_by := session_user;
    NEW.txid := txid_current();
    RETURN NEW;
END;
$$;

-- UTC windows, READ COMMITTED, holds by the prompt, no snapshot chain pins (issue 17).
-- retention_held_v2: true when a legal hold not yet released covers a row: its run, one of its
-- brains (`brains`: the row's label and every brain of its prompt, run_brains_v1: a hold on a brain
-- keeps what runs its prompt, whatever the label), or a date range that holds its tier clock. The
-- one home of "under hold" for the purge, its guard and the plan.
CREATE FUNCTION evalledger.retention_held_v2(clock timestamptz, brains text[], run uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (
        SELECT 1 FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
           AND (h.eval_run_id = run OR h.target_id = ANY (brains) OR clock BETWEEN h.held_from AND h.held_to))
$$;

-- retention_due_v2: true when a row of an aging table is due for purge: its tier clock (the
-- database's own recording time, carried onto child rows from their parent) is past the purge
-- horizon and no legal hold covers it. Reference data and every other table: never. A released
-- hold goes with its run (run holds) or once its release is past the horizon (brain and range
-- holds); a release goes only with its hold (ON DELETE CASCADE). The horizon is purge_horizon_at_v1
-- (UTC, the statement's clock), and a brain hold covers a row of the brain's prompt whatever its
-- label (retention_held_v2 with run_brains_v1).
CREATE FUNCTION evalledger.retention_due_v2(table_name text, r jsonb) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    clock timestamptz;
    brain text;
    prompt text;
    run uuid;
BEGIN
    CASE table_name
    WHEN 'brain_eval_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_under_test';
        prompt := r ->> 'system_prompt_hash';
        run := r ->> 'eval_run_id';
    WHEN 'brain_eval_question_score', 'brain_eval_harness_run', 'brain_eval_harness_answer',
         'brain_eval_judge_suggestion', 'brain_eval_review_entry', 'brain_eval_run_review',
         'brain_eval_suggestion_shown' THEN
        clock := r ->> 'run_created_at';
        run := r ->> 'eval_run_id';
        SELECT l.brain_under_test, l.system_prompt_hash INTO brain, prompt
          FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run;
    WHEN 'brain_analysis_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain';
        prompt := r ->> 'system_prompt_hash';
    WHEN 'brain_eval_import', 'eval_work_quality_snapshots', 'eval_candidate_keys' THEN
        clock := r ->> 'created_at';
    WHEN 'eval_takes_quality_runs' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'target_id';
    WHEN 'eval_takes_quality_judge_verdicts' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'eval_work_quality_judge_verdicts' THEN
        clock := r ->> 'snapshot_created_at';
    WHEN 'eval_capture_failures' THEN
        clock := r ->> 'recorded_at';
    WHEN 'legal_hold' THEN
        IF r ->> 'released_at' IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint) THEN
            RETURN false;
        END IF;
        IF r ->> 'eval_run_id' IS NOT NULL THEN
            SELECT l.created_at, l.brain_under_test, l.system_prompt_hash, l.eval_run_id INTO clock, brain, prompt, run
              FROM evalledger.brain_eval_log l WHERE l.eval_run_id = (r ->> 'eval_run_id')::uuid;
        ELSE
            SELECT coalesce((r ->> 'released_at')::timestamptz, max(x.released_at)) INTO clock
              FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint;
            RETURN clock < evalledger.purge_horizon_at_v1();
        END IF;
    WHEN 'legal_hold_release' THEN
        RETURN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h WHERE h.hold_id = (r ->> 'hold_id')::bigint);
    ELSE
        RETURN false;
    END CASE;
    RETURN coalesce(clock < evalledger.purge_horizon_at_v1()
                    AND NOT evalledger.retention_held_v2(clock, evalledger.run_brains_v1(brain, prompt), run), false);
END;
$$;

-- refuse_change_v3: the append-only guard. A DELETE passes only inside the retention purge
-- (retention_purge_v2, its transaction's marker) and only for a row that retention_due_v2 finds
-- past the purge horizon (in UTC, on the statement's clock) and under no legal hold of its run, its
-- brains (label and prompt) or its tier clock; every UPDATE it guards, and every TRUNCATE, is
-- refused, whoever asks (the owner role and a superuser included).
CREATE FUNCTION evalledger.refuse_change_v3() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF evalledger.retention_purging_v1() AND evalledger.retention_due_v2(TG_TABLE_NAME, to_jsonb(OLD)) THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: DELETE refused', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('rows leave only through the retention purge (evalledger retention apply), '
                                'after %s, and never under a legal hold', evalledger.purge_horizon_v1());
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- retention_purge_v2: the one way rows leave the ledger (seed 002: hard delete past 7 years,
-- subject to legal hold). Deletes, in foreign-key order, every row whose tier clock is past the
-- purge horizon and that no unreleased hold covers: brain-eval runs with their judge suggestions,
-- harness answers, review entries, suggestions shown, run reviews, question rows, harness runs and
-- released holds;
-- analyses and imports no row references any more; takes-quality verdicts then runs; work-quality
-- verdicts then snapshots (a snapshot a kept one builds on stays); captured-query partitions whose
-- whole month is past the horizon and that no range hold overlaps, and capture keys and failures;
-- released brain and range holds whose release is past the horizon. Each step is a row of
-- retention_purge_log (who, when, which table, how many rows, which run or partition), and the
-- function returns this transaction's rows of it. The code role's, executable only by
-- evalledger_retention: the guards (refuse_change_v3) let a DELETE through only inside it. The
-- horizon is purge_horizon_at_v1 (UTC, the statement's clock: no session TimeZone moves it); a brain
-- hold keeps what runs the brain's prompt, whatever the label (retention_held_v2, run_brains_v1); a
-- work-quality snapshot goes when it is due even if a kept one compared with it (the kept one keeps
-- its comparison and the previous run's id), so an active target's history still ages out. It runs
-- under READ COMMITTED only: it waits for the hold tables' writers, and only a fresh snapshot then
-- sees the hold that one of them committed.
CREATE FUNCTION evalledger.retention_purge_v2()
RETURNS TABLE (purged_table text, purged_rows bigint, purged_run uuid, purged_partition text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    horizon timestamptz := evalledger.purge_horizon_at_v1();
    runs uuid[];
    tq_runs bigint[];
    snapshots bigint[];
    part record;
    n bigint;
    purged text;
BEGIN
    PERFORM evalledger.require_read_committed_v2('the retention purge');
    -- No hold is placed or released while the purge decides and deletes.
    LOCK TABLE evalledger.legal_hold, evalledger.legal_hold_release IN SHARE MODE;
    INSERT INTO evalledger.retention_purge_marker (txid) VALUES (txid_current());

    -- brain-eval runs, children first
    SELECT coalesce(array_agg(l.eval_run_id), '{}') INTO runs
      FROM evalledger.brain_eval_log l
     WHERE l.created_at < horizon
       AND NOT evalledger.retention_held_v2(l.created_at, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                            l.eval_run_id);
    -- In foreign-key order; released holds of those runs go with them (their releases by ON DELETE
    -- CASCADE). Each table's rows, counted per run, into the log.
    FOREACH purged IN ARRAY ARRAY['brain_eval_judge_suggestion', 'brain_eval_harness_answer', 'brain_eval_review_entry',
                                  'brain_eval_suggestion_shown', 'brain_eval_run_review', 'brain_eval_question_score',
                                  'brain_eval_harness_run', 'legal_hold', 'brain_eval_log'] LOOP
        EXECUTE format('WITH gone AS (DELETE FROM evalledger.%I t WHERE t.eval_run_id = ANY ($1) RETURNING t.eval_run_id) '
                       'INSERT INTO evalledger.retention_purge_log (table_name, row_count, eval_run_id) '
                       'SELECT %L, count(*), g.eval_run_id FROM gone g GROUP BY g.eval_run_id', purged, purged)
            USING runs;
    END LOOP;

    -- Analyses (production and eval) and imports that nothing references any more.
    WITH gone AS (
        DELETE FROM evalledger.brain_analysis_log a
         WHERE a.created_at < horizon
           AND NOT evalledger.retention_held_v2(a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q WHERE q.brain_analysis_id = a.analysis_id)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h WHERE h.analysis_id = a.analysis_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_analysis_log', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.brain_eval_import i
         WHERE i.created_at < horizon
           AND NOT evalledger.retention_held_v2(i.created_at, NULL, NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.import_id = i.import_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_eval_import', count(*) FROM gone HAVING count(*) > 0;

    -- takes-quality: verdicts, then runs
    SELECT coalesce(array_agg(t.id), '{}') INTO tq_runs
      FROM evalledger.eval_takes_quality_runs t
     WHERE t.created_at < horizon AND NOT evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL);
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_runs t WHERE t.id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_runs', count(*) FROM gone HAVING count(*) > 0;

    -- work-quality: verdicts, then snapshots, each as it falls due: a snapshot that a kept one
    -- compared with does not pin it (the kept one names its run and keeps the comparison).
    SELECT coalesce(array_agg(s.snapshot_id), '{}') INTO snapshots
      FROM evalledger.eval_work_quality_snapshots s
     WHERE s.created_at < horizon AND NOT evalledger.retention_held_v2(s.created_at, NULL, NULL);
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshots', count(*) FROM gone HAVING count(*) > 0;

    -- Captured queries: whole monthly partitions past the horizon that no range hold overlaps
    -- (the drop guard admits them inside the capture purge's marker), then keys and failures.
    INSERT INTO evalledger.capture_purge_marker (txid) VALUES (txid_current());
    FOR part IN
        SELECT c.relname::text AS name
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
           AND evalledger.capture_partition_expired_v2(c.relname)
           AND NOT EXISTS (
               SELECT 1 FROM evalledger.legal_hold h
                WHERE h.held_from IS NOT NULL AND h.released_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
                  AND h.held_from < (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                  AND h.held_to >= (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC')
         ORDER BY c.relname
    LOOP
        -- Counted through the parent: a partition has no policy of its own, so FORCE hides its rows.
        SELECT count(*) INTO n FROM evalledger.eval_candidates c
         WHERE c.tableoid = ('evalledger.' || quote_ident(part.name))::regclass;
        EXECUTE format('DROP TABLE evalledger.%I', part.name);
        INSERT INTO evalledger.retention_purge_log (table_name, row_count, partition_name)
        VALUES ('eval_candidates', n, part.name);
    END LOOP;
    DELETE FROM evalledger.capture_purge_marker m WHERE m.txid = txid_current();
    WITH gone AS (
        DELETE FROM evalledger.eval_candidate_keys k
         WHERE k.created_at < horizon AND NOT evalledger.retention_held_v2(k.created_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_candidate_keys', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.eval_capture_failures f
         WHERE f.recorded_at < horizon AND NOT evalledger.retention_held_v2(f.recorded_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_capture_failures', count(*) FROM gone HAVING count(*) > 0;

    -- Brain and range holds released more than the horizon ago.
    WITH gone AS (
        DELETE FROM evalledger.legal_hold h
         WHERE h.eval_run_id IS NULL
           AND coalesce(h.released_at, (SELECT max(x.released_at) FROM evalledger.legal_hold_release x
                                          WHERE x.hold_id = h.hold_id)) < horizon
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'legal_hold', count(*) FROM gone HAVING count(*) > 0;

    DELETE FROM evalledger.retention_purge_marker m WHERE m.txid = txid_current();
    RETURN QUERY
        SELECT p.table_name, p.row_count, p.eval_run_id, p.partition_name
          FROM evalledger.retention_purge_log p
         WHERE p.txid = txid_current()
         ORDER BY p.purge_log_id;
END;
$$;

-- retention_rows_v2: every row of every aging table but the captured queries (which leave by
-- whole monthly partitions) with its tier clock, the brains and run a hold may name (a brain-eval
-- row's label and every brain of its prompt), and whether a row that stays still references it (an
-- analysis of a kept run, an import of a kept run; a work-quality snapshot is never pinned by the one
-- after it): what retention_plan_v2 classifies, by the same rules as retention_due_v2 and the purge.
CREATE FUNCTION evalledger.retention_rows_v2()
RETURNS TABLE (table_name text, tier_clock timestamptz, brains text[], run uuid, pinned boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.brain_under_test, l.created_at, l.import_id,
               evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash) AS brains,
               l.created_at < evalledger.purge_horizon_at_v1()
               AND NOT evalledger.retention_held_v2(l.created_at,
                                                    evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                                    l.eval_run_id) AS goes
          FROM evalledger.brain_eval_log l
    )
    SELECT 'brain_eval_log', r.created_at, r.brains, r.eval_run_id, false FROM runs r
    UNION ALL
    SELECT 'brain_eval_question_score', q.run_created_at, r.brains, q.eval_run_id, false
      FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_run', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_run t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_answer', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_answer t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_judge_suggestion', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_judge_suggestion t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_review_entry', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_review_entry t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_review', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_review t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_suggestion_shown', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_suggestion_shown t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_analysis_log', a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL::uuid,
           EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
                    WHERE q.brain_analysis_id = a.analysis_id AND NOT r.goes)
           OR EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h JOIN runs r USING (eval_run_id)
                       WHERE h.analysis_id = a.analysis_id AND NOT r.goes)
      FROM evalledger.brain_analysis_log a
    UNION ALL
    SELECT 'brain_eval_import', i.created_at, NULL::text[], NULL,
           EXISTS (SELECT 1 FROM runs r WHERE r.import_id = i.import_id AND NOT r.goes)
      FROM evalledger.brain_eval_import i
    UNION ALL
    SELECT 'eval_takes_quality_runs', t.created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_runs t
    UNION ALL
    SELECT 'eval_takes_quality_judge_verdicts', v.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_judge_verdicts v JOIN evalledger.eval_takes_quality_runs t ON t.id = v.run_id
    UNION ALL
    SELECT 'eval_work_quality_snapshots', s.created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshots s
    UNION ALL
    SELECT 'eval_work_quality_judge_verdicts', v.snapshot_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_judge_verdicts v
    UNION ALL
    SELECT 'eval_candidate_keys', k.created_at, NULL, NULL, false FROM evalledger.eval_candidate_keys k
    UNION ALL
    SELECT 'eval_capture_failures', f.recorded_at, NULL, NULL, false FROM evalledger.eval_capture_failures f
$$;

-- retention_plan_v2: per aging table, how many rows are hot (recorded in the last 24 months),
-- cold (24 months to 7 years: auditors only), due for purge (past 7 years, no hold) and held past
-- the horizon, and which holds keep which rows. Captured queries count by whole monthly partition,
-- as they are purged. Counts only, so auditors may ask it of tables they cannot read. The windows
-- are hot_tier_start_v1 and purge_horizon_at_v1 (UTC, the statement's clock), the holds those of
-- retention_held_v2 (a brain hold keeps its prompt's rows).
CREATE FUNCTION evalledger.retention_plan_v2()
RETURNS TABLE (table_name text, hot bigint, cold bigint, due bigint, held bigint, held_by text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH holds AS (
        SELECT h.hold_id, h.eval_run_id, h.target_id, h.held_from, h.held_to,
               CASE WHEN h.eval_run_id IS NOT NULL THEN 'run ' || h.eval_run_id
                    WHEN h.target_id IS NOT NULL THEN 'brain ' || h.target_id
                    ELSE 'range ' || to_char(h.held_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                         || '..' || to_char(h.held_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') END AS scope
          FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
    ),
    parts AS (
        SELECT c.relname::text AS part,
               (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC' AS month_start,
               (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' AS month_end,
               evalledger.capture_partition_expired_v2(c.relname) AS expired
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
    ),
    rows AS (
        SELECT r.table_name, r.tier_clock, r.brains, r.run, r.pinned,
               r.tier_clock >= evalledger.hot_tier_start_v1() AS hot,
               r.tier_clock < evalledger.purge_horizon_at_v1() AS past
          FROM evalledger.retention_rows_v2() r
        UNION ALL
        SELECT 'eval_candidates', c.created_at, NULL::text[], NULL, false,
               c.created_at >= evalledger.hot_tier_start_v1(), p.expired
          FROM evalledger.eval_candidates c
          JOIN parts p ON c.created_at >= p.month_start AND c.created_at < p.month_end
    ),
    covered AS (
        SELECT r.table_name, h.hold_id, h.scope, count(*) AS n
          FROM rows r
          JOIN holds h ON h.eval_run_id = r.run OR h.target_id = ANY (r.brains)
                       OR (r.table_name <> 'eval_candidates' AND r.tier_clock BETWEEN h.held_from AND h.held_to)
                       OR (r.table_name = 'eval_candidates' AND EXISTS (
                               SELECT 1 FROM parts p
                                WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end
                                  AND h.held_from < p.month_end AND h.held_to >= p.month_start))
         WHERE r.past
         GROUP BY r.table_name, h.hold_id, h.scope
    ),
    classified AS (
        SELECT r.table_name, r.hot, r.past, r.pinned,
               r.past AND (r.pinned OR
                   CASE WHEN r.table_name = 'eval_candidates' THEN EXISTS (
                            SELECT 1 FROM parts p JOIN holds h ON h.held_from < p.month_end AND h.held_to >= p.month_start
                             WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end)
                        ELSE evalledger.retention_held_v2(r.tier_clock, r.brains, r.run) END) AS held
          FROM rows r
    ),
    tables AS (
        SELECT t.table_name, t.n
          FROM unnest(ARRAY['brain_eval_log', 'brain_eval_question_score', 'brain_eval_harness_run',
                            'brain_eval_harness_answer', 'brain_eval_judge_suggestion', 'brain_eval_review_entry',
                            'brain_eval_run_review', 'brain_eval_suggestion_shown', 'brain_analysis_log', 'brain_eval_import',
                            'eval_takes_quality_runs', 'eval_takes_quality_judge_verdicts',
                            'eval_work_quality_snapshots', 'eval_work_quality_judge_verdicts',
                            'eval_candidates', 'eval_candidate_keys', 'eval_capture_failures'])
               WITH ORDINALITY AS t (table_name, n)
    )
    SELECT t.table_name,
           count(c.table_name) FILTER (WHERE c.hot),
           count(c.table_name) FILTER (WHERE NOT c.hot AND NOT c.past),
           count(c.table_name) FILTER (WHERE c.past AND NOT c.held),
           count(c.table_name) FILTER (WHERE c.held),
           nullif(concat_ws('; ',
               (SELECT string_agg(format('hold %s (%s): %s', v.hold_id, v.scope, v.n), '; ' ORDER BY v.hold_id)
                  FROM covered v WHERE v.table_name = t.table_name),
               CASE WHEN count(*) FILTER (WHERE c.pinned AND c.past) > 0
                    THEN format('%s referenced by kept rows', count(*) FILTER (WHERE c.pinned AND c.past)) END), '')
      FROM tables t LEFT JOIN classified c USING (table_name)
     GROUP BY t.table_name, t.n
     ORDER BY t.n
$$;

-- =============================================================================================
-- The readers' side (issue 22): the by-month panel tables' upkeep, the panels v2 and the takes-quality trend
-- =============================================================================================
-- The completion trigger adds each run to its months as it completes; the purge recounts the months
-- it took runs from.
-- utc_month_v1: the first day of the UTC month an instant falls in: the month a by-month panel
-- table files a run under (its start and its recording time), whatever the session's TimeZone.
CREATE FUNCTION evalledger.utc_month_v1(at timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.date_trunc('month', pg_catalog.timezone('UTC', at))::date
$$;

-- whole_hot_months_from_v1: the first UTC month (its first day) that lies wholly in the hot tier:
-- the month the hot tier begins in when it begins at that month's first instant, else the month
-- after. A by-month panel table shows a hot-tier reader (RevOps, a reviewer) its months from here
-- on, so no aggregate ever counts a cold run: the month the tier boundary cuts through is left out
-- of that reader's aggregates whole rather than counted in part (its runs still show in the
-- per-run panels, which read the rows themselves under their own policies). The hot tier's start
-- is counted in UTC from the statement's start, as utc_ago_v1 counts it; plain SQL with every
-- operator schema-qualified, so a policy inlines it.
CREATE FUNCTION evalledger.whole_hot_months_from_v1() RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN pg_catalog.date_trunc('month', b.start) OPERATOR(pg_catalog.=) b.start
                THEN b.start::date
                ELSE (pg_catalog.date_trunc('month', b.start) OPERATOR(pg_catalog.+) interval '1 month')::date END
      FROM (SELECT pg_catalog.timezone('UTC', pg_catalog.statement_timestamp())
                   OPERATOR(pg_catalog.-) evalledger.hot_tier_v1() AS start) b
$$;

-- cohen_kappa_v1: Cohen's kappa of two raters over three ordered categories 0, 1, 2, from the 3x3
-- table of how often rater A (a judge) put an item in category i while rater B (the reviewer) put
-- it in j: cells[3*i + j + 1] (row-major, A's category first). kappa = (po - pe) / (1 - pe), po
-- the share of items both put in the same category, pe the share expected by chance from each
-- rater's own shares (sum over k of A's share of k times B's share of k). NULL with no items, and
-- when pe = 1 (both raters put every item in one same category: kappa is undefined there, and po
-- says they agree). Exact numeric arithmetic, rounded to 4 places at the end.
CREATE FUNCTION evalledger.cohen_kappa_v1(cells bigint[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT i, j, coalesce(cells[3 * i + j + 1], 0)::numeric AS n
                 FROM generate_series(0, 2) i CROSS JOIN generate_series(0, 2) j),
         t AS (SELECT sum(n) AS total, sum(n) FILTER (WHERE i = j) AS same FROM c),
         a AS (SELECT i AS k, sum(n) AS n FROM c GROUP BY i),
         b AS (SELECT j AS k, sum(n) AS n FROM c GROUP BY j),
         p AS (SELECT t.same / t.total AS po, (SELECT sum(a.n * b.n) FROM a JOIN b USING (k)) / (t.total * t.total) AS pe
                 FROM t WHERE t.total > 0)
    SELECT round((p.po - p.pe) / (1 - p.pe), 4) FROM p WHERE p.pe < 1
$$;

-- weighted_kappa_v1: Cohen's weighted kappa with linear weights over three ordered categories 0,
-- 1, 2 (cells laid out as cohen_kappa_v1's): a disagreement of one step weighs 1/2, of two steps
-- 1, so for the scale 0 / 0.5 / 1 the weight is the difference of the two values. kappa_w =
-- 1 - Do / De, Do the observed mean weight of the items, De the mean weight expected by chance
-- from each rater's own shares. NULL with no items, and when De = 0 (no disagreement is possible
-- by chance: both raters used one same category). Exact, rounded to 4 places at the end.
CREATE FUNCTION evalledger.weighted_kappa_v1(cells bigint[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT i, j, coalesce(cells[3 * i + j + 1], 0)::numeric AS n, abs(i - j) / 2.0 AS w
                 FROM generate_series(0, 2) i CROSS JOIN generate_series(0, 2) j),
         t AS (SELECT sum(n) AS total, sum(w * n) AS observed FROM c),
         a AS (SELECT i, sum(n) AS n FROM c GROUP BY i),
         b AS (SELECT j, sum(n) AS n FROM c GROUP BY j),
         e AS (SELECT sum(c.w * a.n * b.n) AS expected FROM c JOIN a USING (i) JOIN b USING (j)),
         p AS (SELECT t.observed / t.total AS d_o, e.expected / (t.total * t.total) AS d_e FROM t, e WHERE t.total > 0)
    SELECT round(1 - p.d_o / p.d_e, 4) FROM p WHERE p.d_e > 0
$$;

-- agreement_measures_v1: what the dashboards and `brain-eval show` say of a judge's agreement with
-- the reviewer, from the 3x3 tables of pairs (laid out as cohen_kappa_v1's) and the total-claims
-- pairs: for unsupported claims (bins 0, 1, 2+) the pairs, the observed agreement (the share on
-- the diagonal, 0-1) and Cohen's kappa; for diagnosis accuracy (0, 0.5, 1) the pairs, the observed
-- agreement and the linearly weighted kappa; for total claims the pairs and the mean absolute
-- difference. The one home of that arithmetic.
CREATE FUNCTION evalledger.agreement_measures_v1(
    unsupported bigint[], diagnosis bigint[], claims_pairs bigint, claims_abs_difference bigint)
RETURNS TABLE (
    unsupported_pairs          bigint,
    unsupported_agreement      numeric,
    unsupported_kappa          numeric,
    diagnosis_pairs            bigint,
    diagnosis_agreement        numeric,
    diagnosis_weighted_kappa   numeric,
    claims_pairs               bigint,
    claims_mean_abs_difference numeric)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT u.n, round((unsupported[1] + unsupported[5] + unsupported[9])::numeric / nullif(u.n, 0), 4),
           evalledger.cohen_kappa_v1(unsupported),
           d.n, round((diagnosis[1] + diagnosis[5] + diagnosis[9])::numeric / nullif(d.n, 0), 4),
           evalledger.weighted_kappa_v1(diagnosis),
           claims_pairs, round(claims_abs_difference::numeric / nullif(claims_pairs, 0), 4)
      FROM (SELECT coalesce(sum(x), 0)::bigint AS n FROM unnest(unsupported) x) u,
           (SELECT coalesce(sum(x), 0)::bigint AS n FROM unnest(diagnosis) x) d
$$;

-- brain_eval_run_facts_v1: what the given runs add to brain_eval_runs_by_month, one row per month
-- key (brain, trigger, month started, month recorded, reviewer): counts of completed runs and of
-- their decisions, token cost and reviewer hours summed, stale-fixture questions and recognitions,
-- runs whose stale-fixture questions were all recognised and runs with a miss (seed 002's sev-2),
-- and the reviewer's narrative-coherence ratings counted per value. Open runs add nothing. Read
-- as the caller (the code role, for the completion trigger and the recount). Plain SQL without
-- SET, every operator schema-qualified, so the statement that calls it inlines it: completion
-- plans one statement, not a function call in it.
CREATE FUNCTION evalledger.brain_eval_run_facts_v1(runs uuid[])
RETURNS TABLE (
    brain_under_test     varchar(16),
    run_trigger          evalledger.eval_run_trigger,
    started_month        date,
    recorded_month       date,
    reviewer_user_id     uuid,
    runs                 bigint,
    runs_pass            bigint,
    runs_pass_with_notes bigint,
    runs_conditional     bigint,
    runs_fail            bigint,
    token_cost_usd       numeric,
    reviewer_hours_spent numeric,
    runs_with_hours      bigint,
    stale_questions      bigint,
    stale_recognised     bigint,
    runs_with_stale      bigint,
    runs_all_recognised  bigint,
    sev2_runs            bigint,
    rating_1             bigint,
    rating_2             bigint,
    rating_3             bigint,
    rating_4             bigint,
    rating_5             bigint)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.run_trigger, evalledger.utc_month_v1(l.started_at),
           evalledger.utc_month_v1(l.created_at), l.reviewer_user_id,
           count(*), count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'pass'),
           count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'pass_with_notes'),
           count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'conditional'), count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'fail'),
           sum(l.token_cost_usd), coalesce(sum(l.reviewer_hours_spent), 0), count(l.reviewer_hours_spent),
           sum(q.stale_questions)::bigint, sum(q.stale_recognised)::bigint,
           count(*) FILTER (WHERE q.stale_questions OPERATOR(pg_catalog.>) 0),
           count(*) FILTER (WHERE q.stale_questions OPERATOR(pg_catalog.>) 0 AND q.stale_missed OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE q.stale_missed OPERATOR(pg_catalog.>) 0),
           sum(q.rating_1)::bigint, sum(q.rating_2)::bigint, sum(q.rating_3)::bigint, sum(q.rating_4)::bigint,
           sum(q.rating_5)::bigint
      FROM evalledger.brain_eval_log l
     CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE x.uses_stale_fixture) AS stale_questions,
                   count(*) FILTER (WHERE x.uses_stale_fixture AND x.staleness_correctly_recognized) AS stale_recognised,
                   count(*) FILTER (WHERE x.uses_stale_fixture AND NOT x.staleness_correctly_recognized) AS stale_missed,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 1) AS rating_1,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 2) AS rating_2,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 3) AS rating_3,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 4) AS rating_4,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 5) AS rating_5
              FROM evalledger.brain_eval_question_score x
             WHERE x.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id) q
     WHERE l.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs)) AND l.completed_at IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5
$$;

-- brain_eval_question_facts_v1: what the given runs add to brain_eval_questions_by_month, one row
-- per month key (brain, trigger, month started, month recorded: no reviewer, so the table's size
-- stays months x brains x triggers x questions) and catalog question (its catalog version and
-- question id): the completed runs it was asked in and those it failed in (question_passed false).
-- Open runs add nothing. Inlined where it is called, as brain_eval_run_facts_v1.
CREATE FUNCTION evalledger.brain_eval_question_facts_v1(runs uuid[])
RETURNS TABLE (
    brain_under_test         varchar(16),
    run_trigger              evalledger.eval_run_trigger,
    started_month            date,
    recorded_month           date,
    question_catalog_version varchar(32),
    question_id              varchar(16),
    runs_seen                bigint,
    runs_failed              bigint)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.run_trigger, evalledger.utc_month_v1(l.started_at),
           evalledger.utc_month_v1(l.created_at), l.question_catalog_version, q.question_id,
           count(*),  -- a question appears at most once per run
           count(*) FILTER (WHERE NOT q.question_passed)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_question_score q ON q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs)) AND l.completed_at IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5, 6
$$;

-- brain_eval_agreement_pairs_v1: for every contributing judge draft on a question of the given
-- runs, the judge's numbers beside the reviewer's final ones, and for each of the three reviewer
-- fields whether that final value was entered blind: the trail entry that set it (the latest for
-- the field) says the judges' suggestions had not been shown (brain_eval_review_entry's
-- suggestions_shown, read when the value was entered), and no committed record of their showing
-- (brain_eval_suggestion_shown) is as old as that entry. A value entered after the reviewer saw
-- the drafts, or with no trail entry behind it, is not blind and counts in no agreement figure:
-- only drafts the reviewer saw after scoring, or never saw, measure the judges.
--   unsupported: the draft's quoted unsupported claims (their count) against hallucinations_detected;
--   diagnosis:   the draft's diagnosis_accuracy against diagnosis_accuracy_score (0, 0.5, 1);
--   claims:      the draft's total_claims against the reviewer's total_claims.
-- Inlined where it is called (plain SQL, operators schema-qualified), as brain_eval_run_facts_v1.
CREATE FUNCTION evalledger.brain_eval_agreement_pairs_v1(runs uuid[])
RETURNS TABLE (
    eval_run_id          uuid,
    question_id          varchar(16),
    judge_model          text,
    judge_unsupported    integer,
    reviewer_unsupported integer,
    unsupported_blind    boolean,
    judge_diagnosis      numeric,
    reviewer_diagnosis   numeric,
    diagnosis_blind      boolean,
    judge_claims         integer,
    reviewer_claims      integer,
    claims_blind         boolean)
LANGUAGE sql STABLE AS $$
    SELECT s.eval_run_id, s.question_id, s.model,
           jsonb_array_length(s.unsupported_claims), r.hallucinations_detected, r.unsupported_blind,
           s.diagnosis_accuracy, r.diagnosis_accuracy_score, r.diagnosis_blind,
           s.total_claims, r.total_claims, r.claims_blind
      FROM (SELECT q.eval_run_id, q.question_id, q.hallucinations_detected, q.diagnosis_accuracy_score, q.total_claims,
                   coalesce(h.blind, false) AS unsupported_blind, coalesce(d.blind, false) AS diagnosis_blind,
                   coalesce(c.blind, false) AS claims_blind
              FROM evalledger.brain_eval_question_score q
              LEFT JOIN evalledger.brain_eval_suggestion_shown w
                ON w.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND w.question_id OPERATOR(pg_catalog.=) q.question_id
             LEFT JOIN LATERAL (
                   SELECT NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at OPERATOR(pg_catalog.>) t.entered_at) AS blind
                     FROM evalledger.brain_eval_review_entry t
                    WHERE t.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND t.question_id OPERATOR(pg_catalog.=) q.question_id
                      AND t.field OPERATOR(pg_catalog.=) 'hallucinations_detected'
                    ORDER BY t.entered_at DESC, t.entry_id DESC
                    LIMIT 1) h ON true
             LEFT JOIN LATERAL (
                   SELECT NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at OPERATOR(pg_catalog.>) t.entered_at) AS blind
                     FROM evalledger.brain_eval_review_entry t
                    WHERE t.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND t.question_id OPERATOR(pg_catalog.=) q.question_id
                      AND t.field OPERATOR(pg_catalog.=) 'diagnosis_accuracy_score'
                    ORDER BY t.entered_at DESC, t.entry_id DESC
                    LIMIT 1) d ON true
             LEFT JOIN LATERAL (
                   SELECT NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at OPERATOR(pg_catalog.>) t.entered_at) AS blind
                     FROM evalledger.brain_eval_review_entry t
                    WHERE t.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND t.question_id OPERATOR(pg_catalog.=) q.question_id
                      AND t.field OPERATOR(pg_catalog.=) 'total_claims'
                    ORDER BY t.entered_at DESC, t.entry_id DESC
                    LIMIT 1) c ON true
             WHERE q.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs))
             OFFSET 0) r  -- each question's blindness once, not once per judge
      JOIN evalledger.brain_eval_judge_suggestion s
        ON s.eval_run_id OPERATOR(pg_catalog.=) r.eval_run_id AND s.question_id OPERATOR(pg_catalog.=) r.question_id
     WHERE s.contributes
$$;

-- brain_eval_agreement_facts_v1: what the given completed runs add to brain_eval_agreement_by_month,
-- one row per month key and judge model: the 3x3 tables of blind pairs (judge's category first,
-- the reviewer's second) for unsupported claims binned 0, 1, 2 or more (unsupported_j<judge>_r<reviewer>)
-- and for diagnosis accuracy 0, 0.5, 1 as categories 0, 1, 2 (diagnosis_j<judge>_r<reviewer>), and
-- the blind pairs of total claims with the sum of their absolute differences. Pairs from
-- brain_eval_agreement_pairs_v1, so only values entered blind count. Open runs add nothing.
-- Inlined where it is called, as brain_eval_run_facts_v1.
CREATE FUNCTION evalledger.brain_eval_agreement_facts_v1(runs uuid[])
RETURNS TABLE (
    brain_under_test      varchar(16),
    run_trigger           evalledger.eval_run_trigger,
    started_month         date,
    recorded_month        date,
    judge_model           text,
    unsupported_j0_r0 bigint,
    unsupported_j0_r1 bigint,
    unsupported_j0_r2 bigint,
    unsupported_j1_r0 bigint,
    unsupported_j1_r1 bigint,
    unsupported_j1_r2 bigint,
    unsupported_j2_r0 bigint,
    unsupported_j2_r1 bigint,
    unsupported_j2_r2 bigint,
    diagnosis_j0_r0   bigint,
    diagnosis_j0_r1   bigint,
    diagnosis_j0_r2   bigint,
    diagnosis_j1_r0   bigint,
    diagnosis_j1_r1   bigint,
    diagnosis_j1_r2   bigint,
    diagnosis_j2_r0   bigint,
    diagnosis_j2_r1   bigint,
    diagnosis_j2_r2   bigint,
    claims_pairs          bigint,
    claims_abs_difference bigint)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.run_trigger, evalledger.utc_month_v1(l.started_at),
           evalledger.utc_month_v1(l.created_at), p.judge_model,
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 0 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 0 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 0 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 1 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 1 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 1 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 2 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 2 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 2 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.claims_blind AND p.judge_claims IS NOT NULL AND p.reviewer_claims IS NOT NULL),
           coalesce(sum(abs(p.judge_claims OPERATOR(pg_catalog.-) p.reviewer_claims)) FILTER (WHERE p.claims_blind), 0)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_agreement_pairs_v1(runs) p ON p.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs)) AND l.completed_at IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5
$$;

-- brain_eval_by_month_add_v1: add what the given runs contribute (brain_eval_run_facts_v1,
-- brain_eval_question_facts_v1, brain_eval_agreement_facts_v1) to the three by-month panel tables,
-- each counter summed into its month key's row (made when missing). Called by the completion
-- trigger with the run just completed, and by the purge trigger to recount the months it emptied.
-- The code role's alone (EXECUTE is nobody's): the tables take rows from here only.
CREATE FUNCTION evalledger.brain_eval_by_month_add_v1(runs uuid[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_runs_by_month AS t
    SELECT * FROM evalledger.brain_eval_run_facts_v1(runs)
        ON CONFLICT ON CONSTRAINT brain_eval_runs_by_month_pkey DO UPDATE
           SET
               runs = t.runs + EXCLUDED.runs,
               runs_pass = t.runs_pass + EXCLUDED.runs_pass,
               runs_pass_with_notes = t.runs_pass_with_notes + EXCLUDED.runs_pass_with_notes,
               runs_conditional = t.runs_conditional + EXCLUDED.runs_conditional,
               runs_fail = t.runs_fail + EXCLUDED.runs_fail,
               token_cost_usd = t.token_cost_usd + EXCLUDED.token_cost_usd,
               reviewer_hours_spent = t.reviewer_hours_spent + EXCLUDED.reviewer_hours_spent,
               runs_with_hours = t.runs_with_hours + EXCLUDED.runs_with_hours,
               stale_questions = t.stale_questions + EXCLUDED.stale_questions,
               stale_recognised = t.stale_recognised + EXCLUDED.stale_recognised,
               runs_with_stale = t.runs_with_stale + EXCLUDED.runs_with_stale,
               runs_all_recognised = t.runs_all_recognised + EXCLUDED.runs_all_recognised,
               sev2_runs = t.sev2_runs + EXCLUDED.sev2_runs,
               rating_1 = t.rating_1 + EXCLUDED.rating_1,
               rating_2 = t.rating_2 + EXCLUDED.rating_2,
               rating_3 = t.rating_3 + EXCLUDED.rating_3,
               rating_4 = t.rating_4 + EXCLUDED.rating_4,
               rating_5 = t.rating_5 + EXCLUDED.rating_5;
    INSERT INTO evalledger.brain_eval_questions_by_month AS t
    SELECT * FROM evalledger.brain_eval_question_facts_v1(runs)
        ON CONFLICT ON CONSTRAINT brain_eval_questions_by_month_pkey DO UPDATE
           SET
               runs_seen = t.runs_seen + EXCLUDED.runs_seen,
               runs_failed = t.runs_failed + EXCLUDED.runs_failed;
    INSERT INTO evalledger.brain_eval_agreement_by_month AS t
    SELECT * FROM evalledger.brain_eval_agreement_facts_v1(runs)
        ON CONFLICT ON CONSTRAINT brain_eval_agreement_by_month_pkey DO UPDATE
           SET
               unsupported_j0_r0 = t.unsupported_j0_r0 + EXCLUDED.unsupported_j0_r0,
               unsupported_j0_r1 = t.unsupported_j0_r1 + EXCLUDED.unsupported_j0_r1,
               unsupported_j0_r2 = t.unsupported_j0_r2 + EXCLUDED.unsupported_j0_r2,
               unsupported_j1_r0 = t.unsupported_j1_r0 + EXCLUDED.unsupported_j1_r0,
               unsupported_j1_r1 = t.unsupported_j1_r1 + EXCLUDED.unsupported_j1_r1,
               unsupported_j1_r2 = t.unsupported_j1_r2 + EXCLUDED.unsupported_j1_r2,
               unsupported_j2_r0 = t.unsupported_j2_r0 + EXCLUDED.unsupported_j2_r0,
               unsupported_j2_r1 = t.unsupported_j2_r1 + EXCLUDED.unsupported_j2_r1,
               unsupported_j2_r2 = t.unsupported_j2_r2 + EXCLUDED.unsupported_j2_r2,
               diagnosis_j0_r0 = t.diagnosis_j0_r0 + EXCLUDED.diagnosis_j0_r0,
               diagnosis_j0_r1 = t.diagnosis_j0_r1 + EXCLUDED.diagnosis_j0_r1,
               diagnosis_j0_r2 = t.diagnosis_j0_r2 + EXCLUDED.diagnosis_j0_r2,
               diagnosis_j1_r0 = t.diagnosis_j1_r0 + EXCLUDED.diagnosis_j1_r0,
               diagnosis_j1_r1 = t.diagnosis_j1_r1 + EXCLUDED.diagnosis_j1_r1,
               diagnosis_j1_r2 = t.diagnosis_j1_r2 + EXCLUDED.diagnosis_j1_r2,
               diagnosis_j2_r0 = t.diagnosis_j2_r0 + EXCLUDED.diagnosis_j2_r0,
               diagnosis_j2_r1 = t.diagnosis_j2_r1 + EXCLUDED.diagnosis_j2_r1,
               diagnosis_j2_r2 = t.diagnosis_j2_r2 + EXCLUDED.diagnosis_j2_r2,
               claims_pairs = t.claims_pairs + EXCLUDED.claims_pairs,
               claims_abs_difference = t.claims_abs_difference + EXCLUDED.claims_abs_difference;
END;
$$;

-- brain_eval_by_month_recount_v1: every row of the three by-month panel tables that differs from a
-- recount of the ledger's rows as they stand (a row missing on either side included): the table,
-- the month key, what the table holds and what the recount gives (NULL where a side has no row).
-- None when the panels are exactly what the completed runs say. It reads every completed run,
-- so it is an audit check (doctor, the tests), not a panel. SECURITY DEFINER: it compares the
-- whole ledger whoever asks; EXECUTE is the auditor's and the owner role's.
CREATE FUNCTION evalledger.brain_eval_by_month_recount_v1()
RETURNS TABLE (table_name text, month_key jsonb, stored jsonb, recounted jsonb)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT 'brain_eval_runs_by_month'::text, coalesce(s.k, r.k), s.v, r.v
      FROM (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'reviewer_user_id', x.reviewer_user_id) AS k, to_jsonb(x) AS v FROM evalledger.brain_eval_runs_by_month x) s
      FULL JOIN (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'reviewer_user_id', x.reviewer_user_id) AS k, to_jsonb(x) AS v
                   FROM evalledger.brain_eval_run_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) x) r
        ON r.k = s.k
     WHERE s.v IS DISTINCT FROM r.v
    UNION ALL
    SELECT 'brain_eval_questions_by_month'::text, coalesce(s.k, r.k), s.v, r.v
      FROM (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'question_catalog_version', x.question_catalog_version, 'question_id', x.question_id) AS k, to_jsonb(x) AS v FROM evalledger.brain_eval_questions_by_month x) s
      FULL JOIN (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'question_catalog_version', x.question_catalog_version, 'question_id', x.question_id) AS k, to_jsonb(x) AS v
                   FROM evalledger.brain_eval_question_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) x) r
        ON r.k = s.k
     WHERE s.v IS DISTINCT FROM r.v
    UNION ALL
    SELECT 'brain_eval_agreement_by_month'::text, coalesce(s.k, r.k), s.v, r.v
      FROM (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'judge_model', x.judge_model) AS k, to_jsonb(x) AS v FROM evalledger.brain_eval_agreement_by_month x) s
      FULL JOIN (SELECT jsonb_build_object('brain_under_test', x.brain_under_test, 'run_trigger', x.run_trigger, 'started_month', x.started_month, 'recorded_month', x.recorded_month, 'judge_model', x.judge_model) AS k, to_jsonb(x) AS v
                   FROM evalledger.brain_eval_agreement_facts_v1(ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)) x) r
        ON r.k = s.k
     WHERE s.v IS DISTINCT FROM r.v
$$;

-- brain_eval_by_month_complete_v1: after a run's completion (completed_at set, the decision
-- computed by brain_eval_log_decide_v2 before it), add the run to the by-month panel tables: its
-- month rows are summed in the same transaction, so a panel never counts a run the ledger does not
-- hold completed, nor misses one it does. SECURITY DEFINER: the tables take rows from the code
-- role alone.
CREATE FUNCTION evalledger.brain_eval_by_month_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.brain_eval_by_month_add_v1(ARRAY[NEW.eval_run_id]);
    RETURN NULL;
END;
$$;

-- brain_eval_by_month_purge_v1: after runs leave the ledger (retention_purge_v2 deletes them, their
-- question rows, drafts and trail first), recount the by-month panel tables for every month the
-- departed runs were recorded in: those months' rows are deleted and rebuilt from the completed
-- runs that remain (held ones among them), so the auditor's aggregates never count a purged run.
-- Per statement, from the deleted rows (a transition table). SECURITY DEFINER: the code role's.
CREATE FUNCTION evalledger.brain_eval_by_month_purge_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    months date[];
BEGIN
    SELECT coalesce(array_agg(DISTINCT evalledger.utc_month_v1(g.created_at)), '{}') INTO months
      FROM gone g WHERE g.completed_at IS NOT NULL;
    IF cardinality(months) = 0 THEN
        RETURN NULL;
    END IF;
    DELETE FROM evalledger.brain_eval_runs_by_month m WHERE m.recorded_month = ANY (months);
    DELETE FROM evalledger.brain_eval_questions_by_month m WHERE m.recorded_month = ANY (months);
    DELETE FROM evalledger.brain_eval_agreement_by_month m WHERE m.recorded_month = ANY (months);
    PERFORM evalledger.brain_eval_by_month_add_v1(ARRAY(
        SELECT l.eval_run_id FROM evalledger.brain_eval_log l
         WHERE l.completed_at IS NOT NULL AND evalledger.utc_month_v1(l.created_at) = ANY (months)));
    RETURN NULL;
END;
$$;

-- As in the _v1 panels, each view reads a SECURITY INVOKER function, so every reader reads
-- through its own row-level security on PostgreSQL 14 too. The functions over the by-month tables
-- set their search_path (they are aggregates of bounded size: nothing to push down); the per-run
-- ones are plain SQL with every operator schema-qualified, so a BI tool's filters push down.
-- Every _v1 view stays as it is: BI tools read them.
-- brain_trend_rows_v1: per brain, its last p_last completed runs of one trigger (quarterly when
-- p_trigger is NULL: seed 002's per-brain quarterly trend), newest first, each aggregated
-- dimension a numeric column as the decision compared it. The dashboards' trend panel with their
-- filters: a brain, the first and last month started (UTC; whole months), the trigger and how many
-- runs. Read through (brain_under_test, started_at DESC) (index 1), so it costs what p_last runs
-- per brain cost. Plain SQL without SET, every operator schema-qualified (as brain_quarterly_trend_rows_v1).
CREATE FUNCTION evalledger.brain_trend_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_last integer)
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
    run_trigger                    text,
    quarter                        text,
    started_at                     timestamptz,
    completed_at                   timestamptz,
    model_id                       varchar(64),
    system_prompt_hash             varchar(64),
    question_catalog_version       varchar(32),
    decision                       text,
    citation_rate                  numeric,
    hallucination_rate             numeric,
    staleness_recognition_rate     numeric,
    diagnosis_accuracy_mean        numeric,
    lever_mapping_correctness      numeric,
    confidence_calibration_in_band numeric,
    narrative_coherence_mean       numeric)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id, r.run_trigger::text,
           pg_catalog.to_char(pg_catalog.timezone('UTC', r.started_at), 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           r.decision::text,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'citation_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'hallucination_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'staleness_recognition_rate')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'diagnosis_accuracy_mean')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'lever_mapping_correctness')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'confidence_calibration_in_band')::numeric,
           (r.aggregated_scores OPERATOR(pg_catalog.->>) 'narrative_coherence_mean')::numeric
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT l.*, pg_catalog.row_number() OVER (ORDER BY l.started_at DESC, l.eval_run_id DESC) AS recency_rank
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger
               AND l.completed_at IS NOT NULL
               AND (p_from_month IS NULL
                    OR l.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
               AND (p_to_month IS NULL
                    OR l.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                            OPERATOR(pg_catalog.+) interval '1 month'))
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT p_last) r
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- most_failing_questions_rows_v2: per brain, catalog version and question, the completed runs it
-- was asked in and failed in, its fail share and its rank within its brain and catalog version
-- (catalogs change quarterly: EVAL-Q01 of v28 and of v29 are two questions). From
-- brain_eval_questions_by_month (kept at completion), so it costs what the number of months and
-- questions costs, not the number of runs; each reader sees the months its policy shows (RevOps:
-- whole months of the hot tier, whole_hot_months_from_v1). Filters, each NULL for
-- all: a brain, the first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.most_failing_questions_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test         varchar(16),
    question_catalog_version varchar(32),
    question_id              varchar(16),
    runs_seen                bigint,
    runs_failed              bigint,
    fail_pct                 numeric,
    fail_rank                bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.brain_under_test, s.question_catalog_version, s.question_id, s.runs_seen, s.runs_failed,
           round(100.0 * s.runs_failed / s.runs_seen, 2),
           rank() OVER (PARTITION BY s.brain_under_test, s.question_catalog_version
                        ORDER BY s.runs_failed::numeric / s.runs_seen DESC, s.runs_failed DESC)
      FROM (SELECT f.brain_under_test, f.question_catalog_version, f.question_id,
                   sum(f.runs_seen)::bigint AS runs_seen, sum(f.runs_failed)::bigint AS runs_failed
              FROM evalledger.brain_eval_questions_by_month f
             WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
               AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
               AND (p_to_month IS NULL OR f.started_month <= p_to_month)
               AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
             GROUP BY f.brain_under_test, f.question_catalog_version, f.question_id) s
$$;

-- most_failing_questions_v2: per brain, catalog version and question, completed runs seen and
-- failed, fail_pct (0-100) and fail_rank within the brain and catalog version.
CREATE VIEW evalledger.most_failing_questions_v2 AS
    SELECT * FROM evalledger.most_failing_questions_rows_v2(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.most_failing_questions_v2 IS
    'Per brain, catalog version and question, completed runs seen and failed, fail_pct (0-100) and fail_rank within the brain and catalog version (1 = highest fail share; on equal share more failures first; full ties share a rank). RevOps: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.question_catalog_version IS 'The question catalog version the runs used, e.g. v28-2026Q2.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.question_id IS 'The catalog question, e.g. EVAL-Q01 (one question per catalog version).';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.runs_failed IS 'Count of those runs in which the question did not pass (question_passed false).';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.fail_pct IS 'Percent, 0-100, two decimals: 100 * runs_failed / runs_seen.';
COMMENT ON COLUMN evalledger.most_failing_questions_v2.fail_rank IS 'Rank, 1 = most failing, within brain_under_test and question_catalog_version (SQL rank(): ties share a rank).';

-- stale_fixture_pass_rate_rows_v2: per completed run, its stale-fixture questions, how many were
-- recognised and missed, the pass rate as a column (recognised / stale-fixture questions, 0-1),
-- whether all were recognised and the sev-2 flag (any miss), newest first per brain. Read from the
-- rows themselves under the reader's own policies: a run's question rows through its id (index 5),
-- the runs of a brain newest first through (brain_under_test, started_at DESC) (index 1), so the
-- latest p_latest runs of each brain cost what p_latest runs cost, however long the history.
-- Filters, each NULL for all: a brain, the first and last month started (UTC; whole months), a
-- run trigger, at most p_latest runs per brain. Plain SQL without SET, every operator
-- schema-qualified, so the view's readers' filters push down into it (as in the _v1 panels).
CREATE FUNCTION evalledger.stale_fixture_pass_rate_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_latest integer)
RETURNS TABLE (
    eval_run_id              uuid,
    brain_under_test         varchar(16),
    run_trigger              text,
    question_catalog_version varchar(32),
    started_at               timestamptz,
    completed_at             timestamptz,
    stale_questions          bigint,
    stale_recognised         bigint,
    stale_missed             bigint,
    stale_pass_rate          numeric,
    all_recognised           boolean,
    sev2_incident            boolean)
LANGUAGE sql STABLE AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.question_catalog_version, l.started_at,
           l.completed_at, s.stale_questions, s.stale_recognised, s.stale_missed,
           CASE WHEN s.stale_questions OPERATOR(pg_catalog.>) 0
                THEN s.stale_recognised::numeric OPERATOR(pg_catalog./) s.stale_questions END,
           s.all_recognised, s.stale_missed OPERATOR(pg_catalog.>) 0
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT r.eval_run_id, r.brain_under_test, r.run_trigger, r.question_catalog_version, r.started_at,
                   r.completed_at
              FROM evalledger.brain_eval_log r
             WHERE r.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND r.completed_at IS NOT NULL
               AND (p_from_month IS NULL
                    OR r.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
               AND (p_to_month IS NULL
                    OR r.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                            OPERATOR(pg_catalog.+) interval '1 month'))
               AND (p_trigger IS NULL OR r.run_trigger OPERATOR(pg_catalog.=) p_trigger::evalledger.eval_run_trigger)
             ORDER BY r.started_at DESC, r.eval_run_id DESC
             LIMIT p_latest) l
     CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE q.uses_stale_fixture) AS stale_questions,
                   count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized) AS stale_recognised,
                   count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized) AS stale_missed,
                   -- NULL when the run had no stale-fixture question: nothing to recognise.
                   bool_and(q.staleness_correctly_recognized) FILTER (WHERE q.uses_stale_fixture) AS all_recognised
              FROM evalledger.brain_eval_question_score q
             WHERE q.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id) s
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- stale_fixture_pass_rate_v2: per completed run, stale-fixture questions, recognised, missed, the
-- pass rate as a column (0-1), all_recognised (NULL if none) and sev2_incident (any miss).
CREATE VIEW evalledger.stale_fixture_pass_rate_v2 AS
    SELECT * FROM evalledger.stale_fixture_pass_rate_rows_v2(NULL, NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.stale_fixture_pass_rate_v2 IS
    'Per completed run, its stale-fixture questions, recognised and missed, stale_pass_rate (0-1), all_recognised (NULL when the run had none) and sev2_incident (any miss: seed 002''s sev-2).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.started_at IS 'When the run started (timestamptz; UTC in the ledger).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_questions IS 'Count of the run''s stale-fixture questions (seed 002: typically 5).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_recognised IS 'Count of stale-fixture questions whose staleness the brain recognised.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_missed IS 'Count of stale-fixture questions whose staleness the brain missed.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.stale_pass_rate IS 'Rate, 0-1: stale_recognised / stale_questions (NULL when the run had no stale-fixture question). Exact; round for display.';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.all_recognised IS 'Boolean: every stale-fixture question recognised (NULL when the run had none).';
COMMENT ON COLUMN evalledger.stale_fixture_pass_rate_v2.sev2_incident IS 'Boolean: at least one stale-fixture question missed, a sev-2 incident by seed 002.';

-- stale_fixture_by_month_rows_v1: per brain and month started, the completed runs, those with
-- stale-fixture questions, those that recognised all of them and those with a miss (sev-2), and
-- the stale-fixture questions and recognitions with their pass rate: the stale-fixture panel over
-- any span at the cost of its months (from brain_eval_runs_by_month; each reader sees the months
-- its policy shows). Filters, each NULL for all: a brain, the first and last month started (UTC;
-- whole months), a run trigger.
CREATE FUNCTION evalledger.stale_fixture_by_month_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test    varchar(16),
    started_month       date,
    runs                bigint,
    runs_with_stale     bigint,
    runs_all_recognised bigint,
    sev2_runs           bigint,
    stale_questions     bigint,
    stale_recognised    bigint,
    stale_pass_rate     numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT f.brain_under_test, f.started_month, sum(f.runs)::bigint, sum(f.runs_with_stale)::bigint,
           sum(f.runs_all_recognised)::bigint, sum(f.sev2_runs)::bigint, sum(f.stale_questions)::bigint,
           sum(f.stale_recognised)::bigint, sum(f.stale_recognised)::numeric / nullif(sum(f.stale_questions), 0)
      FROM evalledger.brain_eval_runs_by_month f
     WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
       AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
       AND (p_to_month IS NULL OR f.started_month <= p_to_month)
       AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
     GROUP BY f.brain_under_test, f.started_month
$$;

-- stale_fixture_by_month_v1: per brain and month started, completed runs, runs with stale-fixture
-- questions, runs that recognised all of them, sev-2 runs, and the stale-fixture pass rate (0-1).
CREATE VIEW evalledger.stale_fixture_by_month_v1 AS
    SELECT * FROM evalledger.stale_fixture_by_month_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.stale_fixture_by_month_v1 IS
    'Per brain and month started (UTC), completed runs, runs with stale-fixture questions, runs that recognised all of them, sev-2 runs (any miss), and the stale-fixture pass rate (0-1). RevOps and reviewers: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.runs IS 'Count of completed runs.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.runs_with_stale IS 'Count of those runs with at least one stale-fixture question.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.runs_all_recognised IS 'Count of runs that recognised every one of their stale-fixture questions.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.sev2_runs IS 'Count of runs that missed at least one stale-fixture question (sev-2 incidents).';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.stale_questions IS 'Count of stale-fixture questions asked in those runs.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.stale_recognised IS 'Count of stale-fixture questions recognised.';
COMMENT ON COLUMN evalledger.stale_fixture_by_month_v1.stale_pass_rate IS 'Rate, 0-1: stale_recognised / stale_questions (NULL with no stale-fixture question). Exact; round for display.';

-- reviewer_calibration_rows_v2: per reviewer (and, with p_by_quarter, per UTC quarter the runs
-- started in: drift in a reviewer's distribution shows over quarters), the completed runs they
-- reviewed and the narrative-coherence ratings they gave, counted per value 1..5, with the mean
-- and sample standard deviation computed exactly from those counts. From brain_eval_runs_by_month;
-- each reader sees the months its policy shows (a reviewer: its own runs). Filters, each NULL for
-- all: a brain, the first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.reviewer_calibration_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_by_quarter boolean)
RETURNS TABLE (
    reviewer_user_id uuid,
    quarter          text,
    runs_reviewed    bigint,
    ratings          bigint,
    rating_1         bigint,
    rating_2         bigint,
    rating_3         bigint,
    rating_4         bigint,
    rating_5         bigint,
    rating_mean      numeric,
    rating_stddev    numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.reviewer_user_id, c.quarter, c.runs, c.n, c.r1, c.r2, c.r3, c.r4, c.r5,
           round(c.s1 / nullif(c.n, 0), 4),
           -- The sample variance from the counts, one exact division: (n*s2 - s1^2) / (n*(n-1)).
           CASE WHEN c.n > 1 THEN round(sqrt((c.n * c.s2 - c.s1 * c.s1) / (c.n * (c.n - 1))), 4) END
      FROM (SELECT f.reviewer_user_id,
                   CASE WHEN p_by_quarter THEN to_char(f.started_month, 'YYYY-"Q"Q') END AS quarter,
                   sum(f.runs)::bigint AS runs,
                   sum(f.rating_1 + f.rating_2 + f.rating_3 + f.rating_4 + f.rating_5)::bigint AS n,
                   sum(f.rating_1)::bigint AS r1, sum(f.rating_2)::bigint AS r2, sum(f.rating_3)::bigint AS r3,
                   sum(f.rating_4)::bigint AS r4, sum(f.rating_5)::bigint AS r5,
                   sum(f.rating_1 + 2 * f.rating_2 + 3 * f.rating_3 + 4 * f.rating_4 + 5 * f.rating_5)::numeric AS s1,
                   sum(f.rating_1 + 4 * f.rating_2 + 9 * f.rating_3 + 16 * f.rating_4 + 25 * f.rating_5)::numeric AS s2
              FROM evalledger.brain_eval_runs_by_month f
             WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
               AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
               AND (p_to_month IS NULL OR f.started_month <= p_to_month)
               AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
             GROUP BY 1, 2) c
$$;

-- reviewer_calibration_v2: per reviewer and quarter, completed runs reviewed, narrative-coherence
-- rating counts for 1..5, mean and sample stddev.
CREATE VIEW evalledger.reviewer_calibration_v2 AS
    SELECT * FROM evalledger.reviewer_calibration_rows_v2(NULL, NULL, NULL, NULL, true);
COMMENT ON VIEW evalledger.reviewer_calibration_v2 IS
    'Per reviewer and UTC quarter the runs started in, completed runs reviewed, the narrative_coherence_rating counts for 1..5, their mean and sample stddev. RevOps and reviewers: whole months of the hot tier; a reviewer sees only itself.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.reviewer_user_id IS 'The reviewer (reviewer.reviewer_user_id; the auditor reads names in evalledger.reviewer).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.quarter IS 'Text YYYY-QN: the UTC quarter the runs started in.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.runs_reviewed IS 'Count of completed runs the reviewer reviewed.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.ratings IS 'Count of narrative-coherence ratings the reviewer gave.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_1 IS 'Count of ratings of 1 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_2 IS 'Count of ratings of 2 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_3 IS 'Count of ratings of 3 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_4 IS 'Count of ratings of 4 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_5 IS 'Count of ratings of 5 (scale 1-5).';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_mean IS 'Mean rating, 1-5 scale, four decimals.';
COMMENT ON COLUMN evalledger.reviewer_calibration_v2.rating_stddev IS 'Sample standard deviation of the ratings, in rating points (1-5 scale), four decimals; NULL with fewer than 2 ratings.';

-- cost_by_month_rows_v1: per brain and month started, the completed runs, their token cost (USD:
-- the total and the mean per run) and the reviewer hours reported (the total, the runs that
-- reported them, and the mean per reporting run): seed 002's cost-per-run trend over any span at
-- the cost of its months (from brain_eval_runs_by_month). Filters, each NULL for all: a brain,
-- the first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.cost_by_month_rows_v1(p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test             varchar(16),
    started_month                date,
    runs                         bigint,
    token_cost_usd               numeric,
    token_cost_per_run_usd       numeric,
    reviewer_hours_spent         numeric,
    runs_with_hours              bigint,
    reviewer_hours_per_run       numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT f.brain_under_test, f.started_month, sum(f.runs)::bigint, sum(f.token_cost_usd),
           round(sum(f.token_cost_usd) / sum(f.runs), 4), sum(f.reviewer_hours_spent), sum(f.runs_with_hours)::bigint,
           round(sum(f.reviewer_hours_spent) / nullif(sum(f.runs_with_hours), 0), 2)
      FROM evalledger.brain_eval_runs_by_month f
     WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
       AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
       AND (p_to_month IS NULL OR f.started_month <= p_to_month)
       AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
     GROUP BY f.brain_under_test, f.started_month
$$;

-- cost_by_month_v1: per brain and month started, completed runs, token cost (USD, total and per
-- run) and reviewer hours (total, runs reporting, per reporting run).
CREATE VIEW evalledger.cost_by_month_v1 AS
    SELECT * FROM evalledger.cost_by_month_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.cost_by_month_v1 IS
    'Per brain and month started (UTC), completed runs, token cost in USD (total and mean per run) and reviewer hours (total, runs that reported hours, mean per reporting run). RevOps and reviewers: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.runs IS 'Count of completed runs.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.token_cost_usd IS 'USD: the runs'' brain-call token cost, summed (each run''s token_cost_usd).';
COMMENT ON COLUMN evalledger.cost_by_month_v1.token_cost_per_run_usd IS 'USD per run, four decimals: token_cost_usd / runs.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.reviewer_hours_spent IS 'Hours: reviewer hours reported (self-reported at sign-off), summed.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.runs_with_hours IS 'Count of runs whose reviewer reported hours.';
COMMENT ON COLUMN evalledger.cost_by_month_v1.reviewer_hours_per_run IS 'Hours per reporting run, two decimals: reviewer_hours_spent / runs_with_hours (NULL when none reported).';

-- prompt_drift_rows_v2: production-versus-eval prompt drift as a history: per brain and UTC month,
-- as of that month's end (now, for the current month), the prompt of the latest production
-- analysis (brain_analysis_log, origin 'production') against the prompt of the last passing eval
-- (a completed run decided pass or pass_with_notes), and whether they differ. Months run from
-- the month of p_from_month (else the first month the reader sees a production analysis or a run
-- of the brain) to the month of p_to_month (else this month). Each month is two lookups: the
-- latest production analysis through brain_analysis_log_production_idx, the last passing run
-- through (brain_under_test, started_at DESC) (index 1), so a month costs the same however long
-- the history. p_trigger, when given, counts only evals of that trigger. Readers see what their
-- policies show (RevOps: the hot tier; a reviewer no production traffic).
CREATE FUNCTION evalledger.prompt_drift_rows_v2(p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test          varchar(16),
    month                     date,
    production_prompt_hash    varchar(64),
    production_last_seen_at   timestamptz,
    eval_prompt_hash          varchar(64),
    eval_prompt_version_label varchar(64),
    eval_run_id               uuid,
    eval_decision             text,
    eval_started_at           timestamptz,
    prompt_drift              boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT t.target_id, m.month::date, p.system_prompt_hash, p.produced_at, e.system_prompt_hash,
           e.system_prompt_version_label, e.eval_run_id, e.decision::text, e.started_at,
           -- NULL without production traffic; TRUE when production runs a prompt that never passed.
           CASE WHEN p.system_prompt_hash IS NOT NULL THEN (p.system_prompt_hash = e.system_prompt_hash) IS NOT TRUE END
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT least(
                       (SELECT a.produced_at FROM evalledger.brain_analysis_log a
                         WHERE a.brain = t.target_id AND a.origin = 'production' ORDER BY a.produced_at LIMIT 1),
                       (SELECT l.started_at FROM evalledger.brain_eval_log l
                         WHERE l.brain_under_test = t.target_id ORDER BY l.started_at LIMIT 1)) AS first_seen) f
     CROSS JOIN LATERAL generate_series(
            coalesce(date_trunc('month', p_from_month::timestamp), date_trunc('month', timezone('UTC', f.first_seen))),
            coalesce(date_trunc('month', p_to_month::timestamp), date_trunc('month', timezone('UTC', statement_timestamp()))),
            interval '1 month') m(month)
      LEFT JOIN LATERAL (
            SELECT a.system_prompt_hash, a.produced_at
              FROM evalledger.brain_analysis_log a
             WHERE a.brain = t.target_id AND a.origin = 'production'
               AND a.produced_at < timezone('UTC', m.month + interval '1 month')
             ORDER BY a.produced_at DESC, a.created_at DESC, a.analysis_id DESC
             LIMIT 1) p ON true
      LEFT JOIN LATERAL (
            SELECT l.eval_run_id, l.system_prompt_hash, l.system_prompt_version_label, l.decision, l.started_at
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test = t.target_id
               AND l.completed_at IS NOT NULL
               AND l.decision IN ('pass', 'pass_with_notes')
               AND l.started_at < timezone('UTC', m.month + interval '1 month')
               AND (p_trigger IS NULL OR l.run_trigger::text = p_trigger)
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 1) e ON true
     WHERE t.kind = 'brain' AND (p_brain IS NULL OR t.target_id = p_brain)
       AND (p.system_prompt_hash IS NOT NULL OR e.eval_run_id IS NOT NULL)
$$;

-- prompt_drift_v2: per brain and month, production's latest prompt against the last passing
-- eval's as of the month's end, and whether they differ: the drift as a history.
CREATE VIEW evalledger.prompt_drift_v2 AS
    SELECT * FROM evalledger.prompt_drift_rows_v2(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.prompt_drift_v2 IS
    'Per brain and UTC month (to this month), as of the month''s end: the prompt hash of the latest production analysis against the hash of the last passing eval (pass or pass_with_notes), and prompt_drift when they differ. brain_under_test, as in every other view (prompt_drift_v1 calls it brain).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.month IS 'Date: the first day of the UTC month; the row holds the state as of that month''s end (as of now for the current month).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.production_prompt_hash IS 'SHA-256 hex of the system prompt of the latest production analysis by then (NULL: no production traffic seen).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.production_last_seen_at IS 'When that production analysis was produced (timestamptz).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_prompt_hash IS 'SHA-256 hex of the system prompt of the last passing eval run by then (NULL: none passed).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_prompt_version_label IS 'That run''s system_prompt_version_label, if any.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_run_id IS 'That passing run.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_decision IS 'Its decision: pass or pass_with_notes.';
COMMENT ON COLUMN evalledger.prompt_drift_v2.eval_started_at IS 'When that run started (timestamptz).';
COMMENT ON COLUMN evalledger.prompt_drift_v2.prompt_drift IS 'Boolean: production''s prompt is not the last one that passed (NULL without production traffic).';

-- judge_agreement_rows_v1: how each judge model's drafts agree with the reviewer's final numbers,
-- per brain (and, with p_by_quarter, per UTC quarter the runs started in), over blind pairs only
-- (brain_eval_agreement_pairs_v1: values the reviewer entered before seeing the drafts, or without
-- ever seeing them), measured by agreement_measures_v1: Cohen's kappa for unsupported claims
-- binned 0, 1, 2 or more, the linearly weighted kappa for diagnosis accuracy (0, 0.5, 1), the mean
-- absolute difference for total claims. From brain_eval_agreement_by_month, whose cells add up
-- over months, so any span costs what its months cost. Filters, each NULL for all: a brain, the
-- first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.judge_agreement_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_by_quarter boolean)
RETURNS TABLE (
    brain_under_test           varchar(16),
    judge_model                text,
    quarter                    text,
    unsupported_pairs          bigint,
    unsupported_agreement      numeric,
    unsupported_kappa          numeric,
    diagnosis_pairs            bigint,
    diagnosis_agreement        numeric,
    diagnosis_weighted_kappa   numeric,
    claims_pairs               bigint,
    claims_mean_abs_difference numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.brain_under_test, c.judge_model, c.quarter, m.*
      FROM (SELECT f.brain_under_test, f.judge_model,
                   CASE WHEN p_by_quarter THEN to_char(f.started_month, 'YYYY-"Q"Q') END AS quarter,
                   ARRAY[sum(f.unsupported_j0_r0)::bigint,
                              sum(f.unsupported_j0_r1)::bigint,
                              sum(f.unsupported_j0_r2)::bigint,
                              sum(f.unsupported_j1_r0)::bigint,
                              sum(f.unsupported_j1_r1)::bigint,
                              sum(f.unsupported_j1_r2)::bigint,
                              sum(f.unsupported_j2_r0)::bigint,
                              sum(f.unsupported_j2_r1)::bigint, sum(f.unsupported_j2_r2)::bigint] AS unsupported,
                   ARRAY[sum(f.diagnosis_j0_r0)::bigint, sum(f.diagnosis_j0_r1)::bigint,
                              sum(f.diagnosis_j0_r2)::bigint, sum(f.diagnosis_j1_r0)::bigint,
                              sum(f.diagnosis_j1_r1)::bigint, sum(f.diagnosis_j1_r2)::bigint,
                              sum(f.diagnosis_j2_r0)::bigint, sum(f.diagnosis_j2_r1)::bigint,
                              sum(f.diagnosis_j2_r2)::bigint] AS diagnosis,
                   sum(f.claims_pairs)::bigint AS claims_pairs, sum(f.claims_abs_difference)::bigint AS claims_abs_difference
              FROM evalledger.brain_eval_agreement_by_month f
             WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
               AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
               AND (p_to_month IS NULL OR f.started_month <= p_to_month)
               AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
             GROUP BY 1, 2, 3) c
     CROSS JOIN LATERAL evalledger.agreement_measures_v1(c.unsupported, c.diagnosis, c.claims_pairs,
                                                         c.claims_abs_difference) m
$$;

-- judge_agreement_v1: per brain, judge model and quarter, how the judges' drafts agree with the
-- reviewer's final numbers, over drafts the reviewer saw only after scoring or never saw.
CREATE VIEW evalledger.judge_agreement_v1 AS
    SELECT * FROM evalledger.judge_agreement_rows_v1(NULL, NULL, NULL, NULL, true);
COMMENT ON VIEW evalledger.judge_agreement_v1 IS
    'Per brain, judge model and UTC quarter, how the judge''s drafts agree with the reviewer''s final numbers, counting only values the reviewer entered before seeing the drafts (or without seeing them): Cohen''s kappa for unsupported claims binned 0/1/2+, linearly weighted kappa for diagnosis accuracy, mean absolute difference for total claims. RevOps: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.brain_under_test IS 'The brain (target_id) whose answers were judged.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.quarter IS 'Text YYYY-QN: the UTC quarter the runs started in.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.unsupported_pairs IS 'Count of blind (draft, reviewer) pairs for unsupported claims: the draft''s quoted unsupported claims against hallucinations_detected.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.unsupported_agreement IS 'Rate, 0-1, four decimals: share of those pairs in the same bin (0, 1, 2 or more unsupported claims).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.unsupported_kappa IS 'Cohen''s kappa, -1 to 1 (1 = perfect, 0 = chance), four decimals, over the bins 0/1/2+; NULL when undefined (no pairs, or both sides used one same bin).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.diagnosis_pairs IS 'Count of blind pairs for diagnosis accuracy (questions of a diagnosis type).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.diagnosis_agreement IS 'Rate, 0-1, four decimals: share of those pairs with the same score (0, 0.5 or 1).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.diagnosis_weighted_kappa IS 'Linearly weighted kappa, -1 to 1, four decimals (a 0.5 difference weighs half a 1.0 difference); NULL when undefined.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.claims_pairs IS 'Count of blind pairs for total claims.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.claims_mean_abs_difference IS 'Claims (a count), four decimals: mean of |judge total_claims - reviewer total_claims| over those pairs.';

-- takes_quality_trend_rows_v1: completed takes-quality runs newest first, each with its rubric
-- epoch (the rubric's version and the receipt's rubric_sha8: a stricter rubric is a new epoch and
-- is charted apart, never as a drop), verdict, overall score, each dimension's mean (from the
-- receipt the database wrote at completion), cost and whether the judges were live or recorded.
-- Read newest first through eval_takes_quality_runs_started_idx, so the latest p_latest runs cost
-- the same however long the history. Filters, each NULL for all: a target, the first and last
-- month started (UTC; whole months), at most p_latest runs. Readers see what their policies show.
CREATE FUNCTION evalledger.takes_quality_trend_rows_v1(
    p_target text, p_from_month date, p_to_month date, p_latest integer)
RETURNS TABLE (
    run_id          bigint,
    target_id       varchar(16),
    rubric_version  text,
    rubric_sha8     char(8),
    started_at      timestamptz,
    completed_at    timestamptz,
    verdict         text,
    overall_score   numeric,
    dimension_means jsonb,
    cost_usd        numeric,
    n_takes         integer,
    models          text[],
    judges          text)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.id, r.target_id, b.version, r.rubric_sha8, r.started_at, r.completed_at, r.verdict, r.overall_score,
           (SELECT jsonb_object_agg(d.key, d.value -> 'mean') FROM jsonb_each(r.receipt_json -> 'scores') d),
           r.cost_usd, r.n_takes, r.models, coalesce(r.receipt_json ->> 'judges', 'live')
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     WHERE r.completed_at IS NOT NULL
       AND (p_target IS NULL OR r.target_id = p_target)
       AND (p_from_month IS NULL OR r.started_at >= timezone('UTC', date_trunc('month', p_from_month::timestamp)))
       AND (p_to_month IS NULL OR r.started_at < timezone('UTC', date_trunc('month', p_to_month::timestamp) + interval '1 month'))
     ORDER BY r.started_at DESC, r.id DESC
     LIMIT p_latest
$$;

-- takes_quality_trend_v1: every completed takes-quality run newest first, with its rubric epoch,
-- verdict, overall score, dimension means, cost and judges.
CREATE VIEW evalledger.takes_quality_trend_v1 AS
    SELECT * FROM evalledger.takes_quality_trend_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.takes_quality_trend_v1 IS
    'Every completed takes-quality run newest first: its rubric epoch (rubric_version and rubric_sha8; chart epochs apart), verdict, overall score and dimension means on the rubric''s scale (1-10 for v1.0), cost in USD, and whether the judges were live or recorded.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.run_id IS 'The run (eval_takes_quality_runs.id; the receipt''s run_id).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.target_id IS 'What was evaluated (target_id), NULL when the run named none.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.rubric_version IS 'The rubric''s version, e.g. v1.0: with rubric_sha8, the epoch.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.rubric_sha8 IS 'The first 8 hex digits of the rubric''s fingerprint as the receipt gives it.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.verdict IS 'pass, fail or inconclusive, as the database decided.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.overall_score IS 'Score on the rubric''s scale (1-10 for v1.0): the mean of the dimension means; NULL when no model contributed.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.dimension_means IS 'JSON object: dimension key to its mean score over the contributing judges (rubric''s scale, 1-10 for v1.0; null when none contributed).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.cost_usd IS 'USD: what the judges'' calls cost, every cycle.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.n_takes IS 'Count of takes in the sample.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.models IS 'The panel, provider:model each.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.judges IS 'live, recorded (the demo''s recordings) or mixed.';

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
-- journal_refuse_v1: a value canon-v1 has no form for (a non-finite number, a timestamp outside
-- years 1-9999) stops the write that carries it, so nothing enters the ledger that its journal
-- could not hash. Returns text only so that it fits where a value's canonical form is expected.
CREATE FUNCTION evalledger.journal_refuse_v1(what text, value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RAISE EXCEPTION 'evalledger: canon-v1 has no form for the % %', what, value
        USING ERRCODE = 'data_exception',
              HINT = 'numbers are finite and timestamps and dates lie in years 1 to 9999 (docs/ledger.md, canon-v1)';
END;
$$;

-- journal_timestamp_v1: a timestamp's canon-v1 form, a JSON string in UTC to the microsecond,
-- always six digits ("2026-03-01T09:30:00.000000Z"), whatever the session's TimeZone or DateStyle;
-- "infinity" and "-infinity" as they are; anything outside years 1-9999 is refused. Not STRICT, and
-- NULL handled in the CASE instead: a STRICT SQL function whose body is not strict is never inlined,
-- and this one runs for every timestamp of every row journalled.
CREATE FUNCTION evalledger.journal_timestamp_v1(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE
             WHEN t IS NULL THEN NULL
             WHEN t = 'infinity'::timestamptz THEN '"infinity"'
             WHEN t = '-infinity'::timestamptz THEN '"-infinity"'
             WHEN t >= '0001-01-01 00:00:00+00'::timestamptz AND t < '10000-01-01 00:00:00+00'::timestamptz
               THEN '"' || to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
             ELSE evalledger.journal_refuse_v1('timestamp', t::text)
           END
$$;

-- journal_date_v1: a date's canon-v1 form, a JSON string "YYYY-MM-DD" whatever the session's
-- DateStyle (a month key of the readers' panel tables is one); "infinity" and "-infinity" as they
-- are; anything outside years 1-9999 is refused. Not STRICT, for the reason journal_timestamp_v1
-- gives; formatted as a timestamp without time zone, so the session's TimeZone never enters.
CREATE FUNCTION evalledger.journal_date_v1(d date) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE
             WHEN d IS NULL THEN NULL
             WHEN d = 'infinity'::date THEN '"infinity"'
             WHEN d = '-infinity'::date THEN '"-infinity"'
             WHEN d >= '0001-01-01'::date AND d < '10000-01-01'::date
               THEN '"' || to_char(d::timestamp, 'YYYY-MM-DD') || '"'
             ELSE evalledger.journal_refuse_v1('date', d::text)
           END
$$;

-- journal_number_v1: a numeric's canon-v1 form, its exact decimal text as PostgreSQL writes it
-- (every stored digit, scale kept: 0.9500 stays 0.9500, never an exponent); NaN and the
-- infinities are refused. (Not STRICT, so that it is inlined: see journal_timestamp_v1.)
CREATE FUNCTION evalledger.journal_number_v1(n numeric) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN n IS NULL THEN NULL
                WHEN n = 'NaN'::numeric OR n = 'Infinity'::numeric OR n = '-Infinity'::numeric
                THEN evalledger.journal_refuse_v1('number', n::text)
                ELSE n::text END
$$;

-- journal_float_v1: a double's canon-v1 form: its value to 17 significant digits, correctly rounded
-- (C's %.16e, which always reads back as the same double), written out in full as a plain decimal
-- (0.1 is 0.10000000000000001, 220 is 220.00000000000000, -0 is 0.0000000000000000); NaN and the
-- infinities are refused. Not the shortest form: shortest-digit algorithms may pick either of two
-- candidates at a tie (PostgreSQL's and Python's do differ), and canon-v1 must be one text. STABLE,
-- as to_char is, and not STRICT, so that it is inlined (see journal_timestamp_v1).
CREATE FUNCTION evalledger.journal_float_v1(f double precision) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN f IS NULL THEN NULL
                WHEN f = 'NaN'::double precision OR f = 'Infinity'::double precision
                     OR f = '-Infinity'::double precision
                THEN evalledger.journal_refuse_v1('number', f::text)
                ELSE btrim(to_char(f, '9.9999999999999999EEEE'))::numeric::text END
$$;

-- journal_exempt_v1: the tables of the ledger's schema that carry no journal trigger, and why.
-- Every other table does, or journal_coverage_v1 names it (and its test fails): a table added by
-- a later migration is journalled by CALL journal_attach_v1() in that migration.
--   ledger_journal, ledger_block, ledger_digest, ledger_identity: the journal itself, its blocks
--     (chained and covered by the digests kept outside), the digests taken, the ledger's id;
--   capture_purge_marker, retention_purge_marker: a purge's own transaction id, deleted before
--     the purge returns, so never a row anyone reads;
--   capture_window: the capture writers' lock, a table that holds no row (its CHECK is false).
CREATE FUNCTION evalledger.journal_exempt_v1(table_name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT table_name IN ('ledger_journal', 'ledger_block', 'ledger_digest', 'ledger_identity',
                          'capture_purge_marker', 'retention_purge_marker', 'capture_window')
$$;

-- journal_tables_v1: the tables the journal covers: every table of the ledger's schema (a
-- partitioned one as itself, not its partitions) but journal_exempt_v1's; the one list that
-- journal_attach_v1, journal_coverage_v1 and verify read.
CREATE FUNCTION evalledger.journal_tables_v1()
RETURNS TABLE (rel oid, table_name text, row_type oid)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.oid, c.relname::text, c.reltype
      FROM pg_catalog.pg_class c
     WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       AND NOT evalledger.journal_exempt_v1(c.relname)
     ORDER BY c.relname
$$;

-- journal_source_v1: the SQL of a table's two canon-v1 functions, generated from its columns.
-- parts: one element per column, in code-point order of the column names, each '"name":' and the
-- value's canonical form, NULL for a NULL value (canon-v1 leaves NULL columns out, so a column
-- added later leaves older rows' hashes as they were). key: the primary key's columns as one
-- canonical JSON object. fingerprints: hashtext of each part, by position (journal_row_v1 stores
-- them so that verify can name the columns that changed). A jsonb value is written as jsonb writes itself (jsonb_out: keys shorter
-- first, then bytewise; ", " and ": " between items): that is a canonical form already, stable since
-- jsonb exists, and costs nothing to make, where re-sorting every document's keys in PL/pgSQL cost
-- every row with a document a tenth of its write. A column of a type canon-v1 has no form for is
-- refused here, at migration time, rather than hashed in some form nobody wrote down.
CREATE FUNCTION evalledger.journal_source_v1(rel regclass, OUT parts text, OUT key text, OUT fingerprints text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col record;
    part text;
    all_parts text[] := '{}';
    key_parts text[] := '{}';
BEGIN
    FOR col IN
        SELECT a.attname::text AS name, format('r.%I', a.attname) AS ref, t.typname::text AS typ, t.typtype,
               e.typname::text AS elem,
               coalesce(a.attnum = ANY (i.indkey), false) AS in_key
          FROM pg_attribute a
          JOIN pg_type t ON t.oid = a.atttypid
          LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
          LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
         WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY a.attname COLLATE "C"
    LOOP
        part := CASE
            WHEN col.typ = 'bool' THEN format('CASE WHEN %1$s THEN ''true'' WHEN NOT %1$s THEN ''false'' END', col.ref)
            WHEN col.typ IN ('int2', 'int4', 'int8') THEN format('%s::text', col.ref)
            WHEN col.typ = 'numeric' THEN format('evalledger.journal_number_v1(%s)', col.ref)
            WHEN col.typ = 'float8' THEN format('evalledger.journal_float_v1(%s)', col.ref)
            WHEN col.typ IN ('text', 'varchar', 'bpchar', 'name') OR col.typtype = 'e'
                THEN format('to_json(%s)::text', col.ref)
            WHEN col.typ = 'uuid' THEN format('''"'' || %s::text || ''"''', col.ref)
            WHEN col.typ = 'timestamptz' THEN format('evalledger.journal_timestamp_v1(%s)', col.ref)
            WHEN col.typ = 'date' THEN format('evalledger.journal_date_v1(%s)', col.ref)
            WHEN col.typ = 'jsonb' THEN format('%s::text', col.ref)
            WHEN col.elem IN ('text', 'varchar', 'bpchar', 'name', 'int2', 'int4', 'int8', 'bool')
                THEN format('array_to_json(%s)::text', col.ref)
        END;
        IF part IS NULL THEN
            RAISE EXCEPTION 'evalledger: canon-v1 has no form for column %.% of type %', rel, col.name,
                    format_type((SELECT a.atttypid FROM pg_attribute a WHERE a.attrelid = rel AND a.attname = col.name), NULL)
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'use a type docs/ledger.md gives a canonical form, or define the next canon version';
        END IF;
        part := format('%L || %s', to_json(col.name)::text || ':', part);
        all_parts := all_parts || part;
        IF col.in_key THEN
            key_parts := key_parts || part;
        END IF;
    END LOOP;
    IF cardinality(key_parts) = 0 THEN
        RAISE EXCEPTION 'evalledger: % has no primary key: its journal entries would name no row', rel
            USING ERRCODE = 'feature_not_supported';
    END IF;
    parts := format('SELECT ARRAY[%s]', array_to_string(all_parts, ', '));
    -- One hashtext per part, NULL for a NULL column, by position: an array the planner builds without
    -- a subquery (the trigger's cheapest way to fingerprint each column).
    fingerprints := format('SELECT ARRAY[%s]', (SELECT string_agg(format('hashtext(parts[%s])', n), ', ' ORDER BY n)
                                                  FROM generate_series(1, cardinality(all_parts)) n));
    key := format('SELECT ''{'' || %s || ''}''', array_to_string(key_parts, ' || '','' || '));
END;
$$;

-- journal_leaf_v1: a row's RFC 6962 leaf hash, SHA-256(0x00 || its canon-v1 bytes), from the
-- parts journal_parts_v1 made of it: '{' and the non-NULL parts joined by ',' and '}', in UTF-8.
-- STABLE, as convert_to and array_to_string are: declared IMMUTABLE it would never be inlined.
CREATE FUNCTION evalledger.journal_leaf_v1(parts text[]) RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256('\x00'::bytea || convert_to('{' || array_to_string(parts, ',') || '}', 'UTF8'))
$$;

-- ledger_merkle_root_v1: RFC 6962's Merkle tree hash of leaf hashes given in order: pairs of
-- adjacent nodes hashed as SHA-256(0x01 || left || right), an odd node at the end of a level
-- carried up unchanged, until one is left. That is RFC 6962's split at the largest power of two
-- below n, computed level by level; the empty tree is SHA-256 of nothing.
CREATE FUNCTION evalledger.ledger_merkle_root_v1(leaves bytea[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    level bytea[] := leaves;
BEGIN
    IF coalesce(cardinality(level), 0) = 0 THEN
        RETURN sha256(''::bytea);
    END IF;
    WHILE cardinality(level) > 1 LOOP
        level := ARRAY(SELECT CASE WHEN cardinality(p.pair) = 2 THEN sha256('\x01'::bytea || p.pair[1] || p.pair[2])
                                   ELSE p.pair[1] END
                         FROM (SELECT (u.n + 1) / 2 AS g, array_agg(u.h ORDER BY u.n) AS pair
                                 FROM unnest(level) WITH ORDINALITY u(h, n) GROUP BY 1) p
                        ORDER BY p.g);
    END LOOP;
    RETURN level[1];
END;
$$;

-- journal_batch_v1: what one journal entry records of the rows one statement wrote (or deleted),
-- given each row's canonical key and leaf: a single row as itself (its key object, its leaf hash);
-- several as one entry whose key is the JSON array of their keys in code-point order, whose root is
-- the Merkle tree hash of their leaves in that order, and whose row_leaves keeps each leaf (32
-- bytes apiece, the same order), so any one of them still checks alone. No rows, no entry.
CREATE FUNCTION evalledger.journal_batch_v1(keys text[], leaves bytea[])
RETURNS TABLE (row_key text, row_count integer, rows_root bytea, row_leaves bytea)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    sorted_keys text[];
    sorted_leaves bytea[];
BEGIN
    IF coalesce(cardinality(keys), 0) = 0 THEN
        RETURN;
    END IF;
    IF cardinality(keys) = 1 THEN
        row_key := keys[1];
        row_count := 1;
        rows_root := leaves[1];
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT array_agg(u.k ORDER BY u.k COLLATE "C"), array_agg(u.l ORDER BY u.k COLLATE "C"),
           string_agg(u.l, ''::bytea ORDER BY u.k COLLATE "C")
      INTO sorted_keys, sorted_leaves, row_leaves
      FROM unnest(keys, leaves) u(k, l);
    row_key := '[' || array_to_string(sorted_keys, ',') || ']';
    row_count := cardinality(sorted_keys);
    rows_root := evalledger.ledger_merkle_root_v1(sorted_leaves);
    RETURN NEXT;
END;
$$;

-- journal_row_v1: AFTER INSERT OR UPDATE of each row of a ledger table, one journal entry for the
-- row version as it was written: the table, the primary key, the operation, and the SHA-256 leaf
-- hash of its canon-v1 form (RFC 6962: SHA-256(0x00 || canonical bytes)), with a fingerprint per
-- column (by position, NULL for NULL) so verify can name the columns that changed. An AFTER trigger, so it sees the row exactly
-- as stored (every BEFORE trigger's computed column, the decision included) and never a row an
-- ON CONFLICT skipped. SECURITY DEFINER: only the code role writes the journal. It takes no lock
-- and reads nothing but the row: entry ids come from a sequence, and ordering is the seal's job.
CREATE FUNCTION evalledger.journal_row_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    parts text[];
BEGIN
    parts := evalledger.journal_parts_v1(NEW);
    INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, rows_root, column_fingerprints)
    VALUES (TG_TABLE_NAME, TG_OP, evalledger.journal_key_v1(NEW),
            evalledger.journal_leaf_v1(parts), evalledger.journal_fingerprints_v1(NEW, parts));
    RETURN NULL;
END;
$$;

-- journal_deleted_v1: AFTER DELETE, once per statement, the rows it deleted (the transition table
-- journal_old): one entry for a single row, else one entry whose key lists every row's key and
-- whose root is the RFC 6962 Merkle tree hash of their leaves (kept one by one in row_leaves), so
-- a purge of thousands of rows is one entry, and each of them still checks alone. Dynamic SQL:
-- the statement names the table's own canon-v1 functions (a transition table's rows are records,
-- cast to the table's type), and deletes are rare (only the retention purge may).
CREATE FUNCTION evalledger.journal_deleted_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    EXECUTE format(
        'INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves) '
        'SELECT %1$L, ''DELETE'', b.row_key, b.row_count, b.rows_root, b.row_leaves '
        '  FROM (SELECT array_agg(evalledger.journal_key_v1(o.r)) AS keys, '
        '               array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(o.r))) AS leaves '
        '          FROM (SELECT x::evalledger.%1$I AS r FROM journal_old x) o) d '
        ' CROSS JOIN LATERAL evalledger.journal_batch_v1(d.keys, d.leaves) b',
        TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

-- journal_capture_v1: captured queries are written in batches (one INSERT of up to a thousand rows),
-- so they are journalled once per statement and partition: one entry for eval_candidates whose key
-- lists each row's key and whose root is the Merkle tree hash of the rows' leaves (row_leaves keeps
-- each one, so a row still checks alone after its neighbours are purged), and one entry for the
-- eval_candidate_keys rows that capture_dedupe_v1 wrote for them in the same statement (a nested
-- INSERT per row, which a trigger of its own would journal at the cost of a statement each).
-- Rows are grouped by the UTC month of created_at, the partition they live in, so the purge of a
-- partition explains whole entries. New rows are read back from the table by their keys (typed
-- rows, so the canon-v1 functions apply without casting each record); a DELETE's from journal_old.
-- Runs for INSERT, UPDATE and DELETE on the partitioned parent (an UPDATE or DELETE is refused
-- before it gets here, unless a superuser lifted the guards).
CREATE FUNCTION evalledger.journal_capture_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
        SELECT 'eval_candidates', TG_OP, b.row_key, b.row_count, b.rows_root, b.row_leaves
          FROM (SELECT to_char((o.r).created_at AT TIME ZONE 'UTC', 'YYYYMM') AS month,
                       array_agg(evalledger.journal_key_v1(o.r)) AS keys,
                       array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(o.r))) AS leaves
                  FROM (SELECT x::evalledger.eval_candidates AS r FROM journal_old x) o GROUP BY 1) m
         CROSS JOIN LATERAL evalledger.journal_batch_v1(m.keys, m.leaves) b
         ORDER BY m.month;
        RETURN NULL;
    END IF;
    INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
    SELECT 'eval_candidates', TG_OP, b.row_key, b.row_count, b.rows_root, b.row_leaves
      FROM (SELECT to_char(c.created_at AT TIME ZONE 'UTC', 'YYYYMM') AS month,
                   array_agg(evalledger.journal_key_v1(c)) AS keys,
                   array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(c))) AS leaves
              FROM evalledger.eval_candidates c
             WHERE (c.created_at, c.id) IN (SELECT n.created_at, n.id FROM journal_new n)
             GROUP BY 1) m
     CROSS JOIN LATERAL evalledger.journal_batch_v1(m.keys, m.leaves) b
     ORDER BY m.month;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
        SELECT 'eval_candidate_keys', TG_OP, b.row_key, b.row_count, b.rows_root, b.row_leaves
          FROM (SELECT to_char(k.created_at AT TIME ZONE 'UTC', 'YYYYMM') AS month,
                       array_agg(evalledger.journal_key_v1(k)) AS keys,
                       array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(k))) AS leaves
                  FROM evalledger.eval_candidate_keys k
                 WHERE k.capture_key IN (SELECT n.capture_key FROM journal_new n)
                 GROUP BY 1) m
         CROSS JOIN LATERAL evalledger.journal_batch_v1(m.keys, m.leaves) b
         ORDER BY m.month;
    END IF;
    RETURN NULL;
END;
$$;

-- journal_attach_v1: journal every table of the ledger's schema but the exempt ones
-- (journal_exempt_v1): its canon-v1 functions journal_parts_v1(row), journal_key_v1(row) and
-- journal_fingerprints_v1(row, parts),
-- generated from its columns (journal_source_v1), and its journal triggers, ENABLE ALWAYS.
-- Idempotent, so every migration that adds or reshapes a table calls it. Where a table's
-- functions are new or its columns changed, every row it holds gets a BASELINE entry: the row as
-- it stands when the journal first covers it (or when a migration reshaped it), so verify checks
-- rows written before the journal existed too, from then on.
--   every table:          <t>_90_journal         AFTER INSERT OR UPDATE, each row (journal_row_v1)
--                         <t>_90_journal_delete  AFTER DELETE, each statement (journal_deleted_v1)
--   eval_candidates:      <t>_90_journal_insert, _update, _delete, each statement (journal_capture_v1),
--                         which also journals the eval_candidate_keys rows the INSERT made;
--   eval_candidate_keys:  <t>_90_journal for UPDATE only, its INSERTs journalled as just said.
CREATE PROCEDURE evalledger.journal_attach_v1()
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
    src record;
    current_parts text;
    always text;
BEGIN
    FOR t IN SELECT j.rel AS oid, j.table_name AS name, j.row_type AS reltype FROM evalledger.journal_tables_v1() j LOOP
        src := evalledger.journal_source_v1(t.oid);
        SELECT p.prosrc INTO current_parts FROM pg_proc p
         WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_parts_v1'
           AND p.proargtypes[0] = t.reltype;
        IF current_parts IS DISTINCT FROM src.parts THEN
            EXECUTE format('CREATE OR REPLACE FUNCTION evalledger.journal_parts_v1(r evalledger.%I) RETURNS text[] '
                           'LANGUAGE sql STABLE PARALLEL SAFE AS %L', t.name, src.parts);
            EXECUTE format('CREATE OR REPLACE FUNCTION evalledger.journal_key_v1(r evalledger.%I) RETURNS text '
                           'LANGUAGE sql STABLE PARALLEL SAFE AS %L', t.name, src.key);
            EXECUTE format('CREATE OR REPLACE FUNCTION evalledger.journal_fingerprints_v1(r evalledger.%I, parts text[]) '
                           'RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L', t.name, src.fingerprints);
            EXECUTE format('REVOKE EXECUTE ON FUNCTION evalledger.journal_parts_v1(evalledger.%1$I), '
                           'evalledger.journal_key_v1(evalledger.%1$I), '
                           'evalledger.journal_fingerprints_v1(evalledger.%1$I, text[]) FROM PUBLIC', t.name);
        END IF;

        IF t.name = 'eval_candidates' THEN
            EXECUTE 'CREATE OR REPLACE TRIGGER eval_candidates_90_journal_insert AFTER INSERT ON evalledger.eval_candidates '
                    'REFERENCING NEW TABLE AS journal_new FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_capture_v1()';
            EXECUTE 'CREATE OR REPLACE TRIGGER eval_candidates_90_journal_update AFTER UPDATE ON evalledger.eval_candidates '
                    'REFERENCING NEW TABLE AS journal_new FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_capture_v1()';
            EXECUTE 'CREATE OR REPLACE TRIGGER eval_candidates_90_journal_delete AFTER DELETE ON evalledger.eval_candidates '
                    'REFERENCING OLD TABLE AS journal_old FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_capture_v1()';
        ELSE
            EXECUTE format('CREATE OR REPLACE TRIGGER %I AFTER %s ON evalledger.%I '
                           'FOR EACH ROW EXECUTE FUNCTION evalledger.journal_row_v1()',
                           t.name || '_90_journal',
                           CASE WHEN t.name = 'eval_candidate_keys' THEN 'UPDATE' ELSE 'INSERT OR UPDATE' END, t.name);
            EXECUTE format('CREATE OR REPLACE TRIGGER %I AFTER DELETE ON evalledger.%I '
                           'REFERENCING OLD TABLE AS journal_old FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_deleted_v1()',
                           t.name || '_90_journal_delete', t.name);
        END IF;
        SELECT string_agg(format('ENABLE ALWAYS TRIGGER %I', g.tgname), ', ' ORDER BY g.tgname) INTO always
          FROM pg_trigger g WHERE g.tgrelid = t.oid AND NOT g.tgisinternal;
        EXECUTE format('ALTER TABLE evalledger.%I %s', t.name, always);

        IF current_parts IS DISTINCT FROM src.parts THEN
            EXECUTE format('INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, rows_root, column_fingerprints) '
                           'SELECT %1$L, ''BASELINE'', evalledger.journal_key_v1(r), evalledger.journal_leaf_v1(p.parts), '
                           '       evalledger.journal_fingerprints_v1(r, p.parts) '
                           '  FROM evalledger.%1$I r CROSS JOIN LATERAL (SELECT evalledger.journal_parts_v1(r) AS parts) p '
                           ' ORDER BY evalledger.journal_key_v1(r) COLLATE "C"', t.name);
        END IF;
    END LOOP;
END;
$$;

-- journal_coverage_v1: what keeps the journal from covering a table of the ledger's schema, one
-- row per problem (none: every table is journalled as journal_attach_v1 journals it): a table
-- without its journal triggers, one whose trigger is not ENABLE ALWAYS or runs another function,
-- or one whose canon-v1 functions no longer match its columns. A migration that adds or changes
-- a table and does not CALL journal_attach_v1() shows here, in doctor, and in the tests.
CREATE FUNCTION evalledger.journal_coverage_v1()
RETURNS TABLE (table_name text, problem text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
    want record;
    found record;
    src record;
BEGIN
    FOR t IN SELECT j.rel AS oid, j.table_name AS name, j.row_type AS reltype FROM evalledger.journal_tables_v1() j LOOP
        table_name := t.name;
        FOR want IN
            SELECT w.tgname, w.fn, w.events, w.per_row
              FROM (VALUES (t.name || '_90_journal', 'journal_row_v1',
                            CASE WHEN t.name = 'eval_candidate_keys' THEN 'UPDATE' ELSE 'INSERT OR UPDATE' END, true),
                           (t.name || '_90_journal_delete', 'journal_deleted_v1', 'DELETE', false)) w(tgname, fn, events, per_row)
             WHERE t.name <> 'eval_candidates'
            UNION ALL
            SELECT 'eval_candidates_90_journal_' || lower(e), 'journal_capture_v1', e, false
              FROM unnest(ARRAY['INSERT', 'UPDATE', 'DELETE']) e WHERE t.name = 'eval_candidates'
        LOOP
            SELECT g.tgenabled, g.tgfoid::regproc::text AS fn, pg_get_triggerdef(g.oid) AS def INTO found
              FROM pg_trigger g WHERE g.tgrelid = t.oid AND g.tgname = want.tgname;
            IF found.def IS NULL THEN
                problem := format('no journal trigger %s (CALL evalledger.journal_attach_v1() in the migration that made it)',
                                  want.tgname);
                RETURN NEXT;
            ELSIF found.fn <> 'evalledger.' || want.fn
                  OR found.def NOT LIKE format('%% AFTER %s ON %%', want.events)
                  OR (found.def LIKE '% FOR EACH ROW %') <> want.per_row THEN
                problem := format('journal trigger %s is not AFTER %s FOR EACH %s EXECUTE FUNCTION evalledger.%s()',
                                  want.tgname, want.events, CASE WHEN want.per_row THEN 'ROW' ELSE 'STATEMENT' END, want.fn);
                RETURN NEXT;
            ELSIF found.tgenabled <> 'A' THEN
                problem := format('journal trigger %s is not ENABLE ALWAYS', want.tgname);
                RETURN NEXT;
            END IF;
        END LOOP;
        BEGIN
            src := evalledger.journal_source_v1(t.oid);
        EXCEPTION WHEN feature_not_supported THEN
            problem := SQLERRM;
            RETURN NEXT;
            CONTINUE;
        END;
        IF NOT EXISTS (SELECT 1 FROM pg_proc p
                        WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_parts_v1'
                          AND p.proargtypes[0] = t.reltype AND p.prosrc = src.parts)
           OR NOT EXISTS (SELECT 1 FROM pg_proc p
                           WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_key_v1'
                             AND p.proargtypes[0] = t.reltype AND p.prosrc = src.key)
           OR NOT EXISTS (SELECT 1 FROM pg_proc p
                           WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_fingerprints_v1'
                             AND p.proargtypes[0] = t.reltype AND p.prosrc = src.fingerprints) THEN
            problem := 'its canon-v1 functions do not match its columns (CALL evalledger.journal_attach_v1())';
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;

-- ledger_entry_text_v1: a journal entry's canon-v1 form, the bytes its block's Merkle tree hashes
-- (as the leaf SHA-256(0x00 || these bytes)): {"canon","entry","key","op","recorded_at","rows",
-- "rows_root","table"}, keys in code-point order, the key as the stored canonical JSON.
CREATE FUNCTION evalledger.ledger_entry_text_v1(e evalledger.ledger_journal) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{"canon":' || to_json(e.canon)::text || ',"entry":' || e.entry_id::text || ',"key":' || e.row_key
           || ',"op":' || to_json(e.operation)::text || ',"recorded_at":' || evalledger.journal_timestamp_v1(e.recorded_at)
           || ',"rows":' || e.row_count::text || ',"rows_root":"' || encode(e.rows_root, 'hex')
           || '","table":' || to_json(e.table_name)::text || '}'
$$;

-- ledger_block_text_v1: a block's canon-v1 header, the bytes whose SHA-256 is its block_hash:
-- {"block","canon","entries","first_entry","hi_txid","last_entry","lo_txid","previous","root",
-- "sealed_at","sealed_by"}. "previous" is the block before's hash (64 zeros for block 1): the chain.
CREATE FUNCTION evalledger.ledger_block_text_v1(b evalledger.ledger_block) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{"block":' || b.block_id::text || ',"canon":' || to_json(b.canon)::text
           || ',"entries":' || b.entry_count::text || ',"first_entry":' || b.first_entry_id::text
           || ',"hi_txid":' || b.hi_txid::text || ',"last_entry":' || b.last_entry_id::text
           || ',"lo_txid":' || b.lo_txid::text || ',"previous":"' || encode(b.previous_hash, 'hex')
           || '","root":"' || encode(b.merkle_root, 'hex') || '","sealed_at":' || evalledger.journal_timestamp_v1(b.sealed_at)
           || ',"sealed_by":' || to_json(b.sealed_by::text)::text || '}'
$$;

-- ledger_seal_v1: close a block over the journal entries not yet sealed, chained to the block
-- before. Writers never wait for it, nor it for them but as long as asked: an entry is appended
-- with an id from a sequence and its own transaction's id, and takes no lock. Ids are handed out
-- in time order but committed in any order, so a block is not a range of ids but of transaction
-- ids: [lo, hi), where hi is the xmin of the seal's snapshot (every transaction older than it has
-- finished, so every entry it wrote is committed or gone for good) and lo the previous block's hi.
-- No entry can later commit into a sealed range; an entry of a transaction still running waits
-- for the next seal. Within a block, entries are in id order; its root is the RFC 6962 Merkle
-- tree hash of their leaves; its hash covers its header, the root and the previous block's hash;
-- the ledger root is the Merkle tree hash of every block hash so far (what a digest holds, and
-- what consistency proofs are about). wait_seconds: how long to wait for the transactions running
-- when the seal began (a completion that just committed is sealed by the seal its command runs
-- next, unless an older transaction is still open); held_by names the oldest transaction still
-- holding entries back. Seals serialise on the block table's lock, which no writer takes.
CREATE FUNCTION evalledger.ledger_seal_v1(wait_seconds double precision DEFAULT 0)
RETURNS TABLE (block_id bigint, entry_count bigint, first_entry_id bigint, last_entry_id bigint,
               block_hash bytea, sealed_at timestamptz, unsealed bigint, held_by bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    last evalledger.ledger_block;
    made evalledger.ledger_block;
    -- This seal's own transaction id, taken first: every transaction that began before the seal has
    -- a smaller one. (A snapshot's xmax would not do: a transaction still running may have an id
    -- above every finished one, and then no snapshot lists it.)
    started bigint := txid_current();
    deadline timestamptz := clock_timestamp() + make_interval(secs => greatest(coalesce(wait_seconds, 0), 0));
    lo bigint;
    hi bigint;
    leaves bytea[];
    frontier bytea[];
    size bigint;
    carry bytea;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: the ledger is sealed under READ COMMITTED, not %',
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'each step must see what committed before it: seal in a READ COMMITTED transaction';
    END IF;
    -- One seal at a time; readers (ACCESS SHARE) pass, and no writer ever locks this table.
    LOCK TABLE evalledger.ledger_block IN EXCLUSIVE MODE;
    SELECT b.* INTO last FROM evalledger.ledger_block b ORDER BY b.block_id DESC LIMIT 1;
    lo := coalesce(last.hi_txid, 0);
    -- The snapshot's xmin is the oldest transaction still running, this one included: once it is
    -- this seal's own, every transaction that began before the seal has finished.
    LOOP
        hi := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
        EXIT WHEN hi >= started OR clock_timestamp() >= deadline;
        PERFORM pg_sleep(0.01);
    END LOOP;
    IF hi < lo THEN
        RAISE EXCEPTION 'evalledger: transaction ids went back from % to %: this ledger was loaded into another cluster', lo, hi
            USING ERRCODE = 'data_exception',
                  HINT = 'blocks are ranges of transaction ids; restore from a base backup, which keeps them (docs/ledger.md)';
    END IF;

    made.canon := 'canon-v1';
    SELECT count(*), min(e.entry_id), max(e.entry_id), array_agg(e.leaf ORDER BY e.entry_id),
           string_agg(e.leaf, ''::bytea ORDER BY e.entry_id)
      INTO made.entry_count, made.first_entry_id, made.last_entry_id, leaves, made.leaves
      FROM (SELECT j.entry_id,
                   sha256('\x00'::bytea || convert_to(evalledger.ledger_entry_text_v1(j), 'UTF8')) AS leaf
              FROM evalledger.ledger_journal j WHERE j.txid >= lo AND j.txid < hi) e;
    IF made.entry_count > 0 THEN
        made.block_id := coalesce(last.block_id, 0) + 1;
        made.lo_txid := lo;
        made.hi_txid := hi;
        made.merkle_root := evalledger.ledger_merkle_root_v1(leaves);
        made.previous_hash := coalesce(last.block_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea);
        made.sealed_at := now();
        made.sealed_by := session_user;
        made.block_hash := sha256(convert_to(evalledger.ledger_block_text_v1(made), 'UTF8'));
        -- The ledger tree over block hashes, kept as the roots of its perfect subtrees (largest
        -- first): appending a leaf merges one subtree per trailing 1-bit of the old size.
        frontier := coalesce(last.ledger_frontier, '{}');
        size := coalesce(last.block_id, 0);
        carry := sha256('\x00'::bytea || made.block_hash);
        WHILE size % 2 = 1 LOOP
            carry := sha256('\x01'::bytea || frontier[cardinality(frontier)] || carry);
            frontier := frontier[1:cardinality(frontier) - 1];
            size := size / 2;
        END LOOP;
        made.ledger_frontier := frontier || carry;
        made.ledger_root := made.ledger_frontier[cardinality(made.ledger_frontier)];
        FOR i IN REVERSE cardinality(made.ledger_frontier) - 1 .. 1 LOOP
            made.ledger_root := sha256('\x01'::bytea || made.ledger_frontier[i] || made.ledger_root);
        END LOOP;
        INSERT INTO evalledger.ledger_block SELECT made.*;
        block_id := made.block_id;
        entry_count := made.entry_count;
        first_entry_id := made.first_entry_id;
        last_entry_id := made.last_entry_id;
        block_hash := made.block_hash;
        sealed_at := made.sealed_at;
    END IF;
    SELECT count(*) INTO unsealed FROM evalledger.ledger_journal j WHERE j.txid >= hi;
    held_by := CASE WHEN hi < started THEN hi END;
    RETURN NEXT;
END;
$$;

-- ledger_digest_v1: seal, then say what a digest holds of the newest block: the ledger's id, the
-- block's number and hash, the ledger root over every block hash up to it (the Merkle tree size
-- is the block number), how many entries the blocks cover, and when; the digest taken is logged
-- (ledger_digest) so doctor can tell when none was. The digest is worth something only kept
-- where the database's superuser cannot reach it: the caller writes it out (evalledger ledger digest).
CREATE FUNCTION evalledger.ledger_digest_v1(wait_seconds double precision DEFAULT 5)
RETURNS TABLE (ledger_id uuid, block_id bigint, block_hash bytea, ledger_root bytea, entries numeric,
               sealed_at timestamptz, taken_at timestamptz, unsealed bigint, held_by bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    newest evalledger.ledger_block;
BEGIN
    SELECT s.unsealed, s.held_by INTO unsealed, held_by FROM evalledger.ledger_seal_v1(wait_seconds) s;
    SELECT b.* INTO newest FROM evalledger.ledger_block b ORDER BY b.block_id DESC LIMIT 1;
    IF newest.block_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no block is sealed yet: the journal is empty'
            USING ERRCODE = 'no_data_found';
    END IF;
    SELECT i.ledger_id INTO ledger_id FROM evalledger.ledger_identity i;
    INSERT INTO evalledger.ledger_digest (block_id) VALUES (newest.block_id) RETURNING ledger_digest.taken_at INTO taken_at;
    block_id := newest.block_id;
    block_hash := newest.block_hash;
    ledger_root := newest.ledger_root;
    sealed_at := newest.sealed_at;
    SELECT sum(b.entry_count) INTO entries FROM evalledger.ledger_block b WHERE b.block_id <= newest.block_id;
    RETURN NEXT;
END;
$$;

-- The recompute re-derives each suite's runs by the versions its triggers decide by.
-- ledger_recompute_brain_eval_v2: brain-eval's decision for a run, re-derived from its inputs now
-- by the functions its completion trigger (brain_eval_log_decide_v2) uses: brain_eval_decide_v2
-- for the aggregates, criteria, decision, rationale and cost, and the latest sign-off for the hours
-- and notes it copies. v1 named brain_eval_decide_v1, which the trigger stopped calling (issue 17):
-- it re-derived a run whose hard criterion applies to its prompt's brain but not its label by the
-- label. The one place the ledger's recompute names brain-eval's decision.
CREATE FUNCTION evalledger.ledger_recompute_brain_eval_v2(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.brain_eval_decide_v2(run)
           || jsonb_build_object('reviewer_hours_spent', s.reviewer_hours_spent, 'calibration_notes', s.calibration_notes)
      FROM (SELECT NULL) one
      LEFT JOIN LATERAL (SELECT v.reviewer_hours_spent, v.calibration_notes FROM evalledger.brain_eval_run_review v
                          WHERE v.eval_run_id = run.eval_run_id
                          ORDER BY v.created_at DESC, v.review_id DESC LIMIT 1) s ON true
$$;

-- ledger_recompute_takes_quality_v2: a takes-quality run's receipt, re-derived from its verdict rows
-- by the function its completion trigger (takes_quality_run_decide_v2) writes it
-- with (takes_quality_receipt_v3: each judge's current row, lost calls' estimates, retried failures);
-- the run's cycles_run, verdict, overall_score and cost_usd are read from it as the trigger reads
-- them. The one place the ledger's recompute names takes-quality's decision.
CREATE FUNCTION evalledger.ledger_recompute_takes_quality_v2(run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.takes_quality_receipt_v3(run_id)
$$;

-- ledger_recompute_work_quality_v2: a completed work-quality run's computed columns, re-derived
-- from its verdict rows: the means and spreads over the contributing judges, the note, what the
-- judges cost, the comparison with the previous snapshot (work_quality_compare_v1) and the document
-- (work_quality_document_v1), as work_quality_snapshot_decide_v3 computes them at completion (a skipped
-- judge is noted by its current row, and a call its runner lost counts its estimate). The
-- comparison and the document are the trigger's own functions; the means, spreads, note and cost
-- the trigger computes inline, so they are restated here, statement for statement, and the tests
-- hold the two equal on every completed snapshot until the trigger calls a shared function. The
-- one place the ledger's recompute names work-quality's decision.
CREATE FUNCTION evalledger.ledger_recompute_work_quality_v2(snap evalledger.eval_work_quality_snapshots) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s evalledger.eval_work_quality_snapshots := snap;
    dims text[];
    contributing integer;
    prev_mean jsonb;
BEGIN
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = s.snapshot_id AND v.contributes;
    dims := ARRAY(SELECT d ->> 'key' FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                   WHERE r.rubric_id = s.rubric_id ORDER BY n);
    SELECT jsonb_object_agg(d, a.mean), CASE WHEN contributing >= 2 THEN jsonb_object_agg(d, a.spread) END
      INTO s.mean_scores, s.disagreement
      FROM unnest(dims) d
     CROSS JOIN LATERAL (
            SELECT trim_scale(avg((v.scores ->> d)::numeric)) AS mean,
                   trim_scale(max((v.scores ->> d)::numeric) - min((v.scores ->> d)::numeric)) AS spread
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes) a;
    SELECT coalesce(string_agg(line, '; ' ORDER BY p, k), '') INTO s.note
      FROM (SELECT array_position(s.models, v.model) AS p, 1 AS k,
                   format('judge %s skipped: %s%s', v.model, v.error_kind, coalesce(': ' || v.error_message, '')) AS line
              FROM evalledger.work_quality_current_v1(s.snapshot_id) v
             WHERE NOT v.contributes
            UNION ALL
            SELECT array_position(s.models, v.model), 2,
                   format('judge %s shares the assessed run''s family (%s)', v.model, v.family)
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.same_family
            UNION ALL
            SELECT 0, 0, 'recorded replies shipped with evalledger, not live calls: '
                         || string_agg(v.model, ', ' ORDER BY array_position(s.models, v.model))
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.recorded
            HAVING count(*) > 0) notes;
    s.comparison := NULL;
    IF s.prev_snapshot_id IS NOT NULL THEN
        SELECT p.mean_scores INTO prev_mean FROM evalledger.eval_work_quality_snapshots p WHERE p.snapshot_id = s.prev_snapshot_id;
        s.comparison := evalledger.work_quality_compare_v1(prev_mean, s.mean_scores, s.prev_run_id);
    END IF;
    SELECT trim_scale(coalesce(sum(c.cost_usd + CASE WHEN c.call_started AND c.restarted THEN c.estimated_cost_usd
                                                      ELSE 0 END), 0))
      INTO s.judges_cost_usd
      FROM (SELECT v.cost_usd, v.call_started, v.estimated_cost_usd,
                   coalesce(lead(v.call_started) OVER (PARTITION BY v.model ORDER BY v.retry_no), false) AS restarted
              FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = s.snapshot_id) c;
    s.snapshot_json := evalledger.work_quality_document_v1(s);
    RETURN jsonb_build_object('mean_scores', s.mean_scores, 'disagreement', s.disagreement, 'note', s.note,
                              'comparison', s.comparison, 'judges_cost_usd', s.judges_cost_usd,
                              'snapshot_json', s.snapshot_json);
END;
$$;

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
-- The work-quality v1.0 rubric (seed 003): seven dimensions each judge scores from 0 to 1, the
-- comparison policy as data (same band 0.05: a smaller change of overall is "same"; default
-- regression tolerance 0.08: overall or value_for_money dropping by more is a regression), and
-- the judges' system prompt as a jinja2 template (rendered with `rubric` and `has_prev`).
-- Immutable: a different policy or prompt is a new rubric version, a new row.
INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'v1.0', $rubric$
{
  "suite": "work-quality",
  "version": "v1.0",
  "scale": {
    "min": 0,
    "max": 1
  },
  "dimensions": [
    {
      "key": "efficacy",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Did it actually accomplish the stated task, as proven by the artifact (the diff makes sense, added tests really assert, findings are real)? Reward real results, not effort."
    },
    {
      "key": "completeness",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Is the whole scope addressed, with no facade, stub, TODO-as-done or looks-done-but-is-not? Scaffolding presented as a finished feature scores low."
    },
    {
      "key": "output_quality",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Is the produced code or text idiomatic, correct, maintainable and free of over-engineering?"
    },
    {
      "key": "restraint",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Is the change minimal and on target: no unrequested churn, dead code, gratuitous rewrites or scope creep?"
    },
    {
      "key": "reliability",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Did the run converge cleanly (a sensible termination) without thrash, oscillation or an unexplained abort?"
    },
    {
      "key": "value_for_money",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Given the cost in USD, tokens, duration and iterations, was the quality achieved a good deal? A small correct change for a few cents is excellent value; a large spend for a facade is poor value."
    },
    {
      "key": "overall",
      "scored_by": "judge",
      "aggregate": "mean over contributing judges",
      "question": "Your holistic verdict, NOT a mechanical average: weigh efficacy and completeness most; a facade caps overall low whatever the other scores."
    }
  ],
  "compare": {
    "same_band": 0.05,
    "regress_tolerance": 0.08
  },
  "relative_values": [
    "better",
    "same",
    "worse",
    "n/a"
  ],
  "system_prompt_template": "You are an exacting, impartial quality auditor grading the REAL work product of an autonomous agent or feature run (\"the bot\"). You are external to the bot: it cannot see you, this rubric or your scores, and your judgement is never fed back into its loop. Grade ONLY the concrete artifact and the metrics you are given, never the bot's own description of what it did.\n\nScore each dimension from {{ rubric.scale.min }} (absent or broken) to {{ rubric.scale.max }} (excellent), 0.5 being mediocre or partial. Be calibrated and stingy: reserve scores above 0.9 for genuinely excellent work.\n{% for dim in rubric.dimensions %}\n- {{ dim.key }}: {{ dim.question }}{% endfor %}\n\nAgainst gaming:\n- Verbosity, padding, large diffs and confident prose are not quality. A facade (plausible but not working, or claiming a success it did not achieve) scores low on efficacy, completeness and overall.\n- If the artifact contradicts the claimed outcome, trust the artifact.\n- Judge substance, not style.\n{% if has_prev %}\nA PREVIOUS assessment of this target is given after the work product. For every dimension also judge this run against it in relative_vs_prev: \"better\", \"same\" or \"worse\", and explain in relative_narrative. Reward genuine improvement of the real result; call cosmetic or stylistic differences \"same\"; do not penalise a run for merely being different; say better or worse only when the evidence clearly supports it.\n{% else %}\nThere is no previous assessment of this target: set every relative_vs_prev value to \"n/a\" and leave relative_narrative empty.\n{% endif %}\nReply with the required structured output, every field present: the seven scores ({{ rubric.dimensions | map(attribute='key') | join(', ') }}) each a top-level number from {{ rubric.scale.min }} to {{ rubric.scale.max }}; narrative: 3 to 8 sentences grounding every score in specific evidence; confidence: from 0 to 1, in your own assessment; relative_vs_prev and relative_narrative as above."
}
$rubric$);

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
-- ledger_recompute_v3 (issue 18: brain-eval runs by brain_eval_decide_v2 and question rows by
-- brain_eval_question_verdict_v1, the versions their triggers decide by; v2 re-derived both by the
-- versions issue 17 replaced): every computed column of every completed run whose value now differs from
-- what its suite's decision computes from the run's inputs (one row per column): brain-eval runs
-- (aggregates, criteria, decision, rationale, cost, hours and notes) and their question rows
-- (question_passed), takes-quality runs (cycles, verdict, overall score, cost, receipt), and
-- work-quality runs (means, spreads, note, comparison, judges' cost, document). Values compare
-- as JSON values, so 0.50 and 0.5 are equal and nothing is rounded. It reads through each suite's
-- one entry point (ledger_recompute_<suite>_v1), which calls the functions the suite's trigger
-- calls: a rewritten decision shows here even where the journal was rewritten to match it. Runs
-- imported from history files are the files' own and are not re-derived.
CREATE FUNCTION evalledger.ledger_recompute_v3()
RETURNS TABLE (table_name text, row_key text, column_name text, stored text, recomputed text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH decided (table_name, row_key, was, now_is, columns) AS (
        SELECT 'brain_eval_log', evalledger.journal_key_v1(l), to_jsonb(l), evalledger.ledger_recompute_brain_eval_v2(l),
               ARRAY['aggregated_scores', 'hard_criteria_passed', 'soft_criteria_passed_count', 'decision',
                     'decision_rationale', 'token_cost_usd', 'reviewer_hours_spent', 'calibration_notes']
          FROM evalledger.brain_eval_log l WHERE l.completed_at IS NOT NULL
        UNION ALL
        SELECT 'brain_eval_question_score', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object('question_passed', evalledger.brain_eval_question_verdict_v1(
                   q, evalledger.brain_eval_question_policy_v2(q.eval_run_id, q.question_id))),
               ARRAY['question_passed']
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.completed_at IS NOT NULL
        UNION ALL
        SELECT 'eval_takes_quality_runs', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('cycles_run', x -> 'cycles_run', 'verdict', x -> 'verdict',
                                          'overall_score', x -> 'overall_score', 'cost_usd', x -> 'cost_usd',
                                          'receipt_json', x)
                  FROM (SELECT evalledger.ledger_recompute_takes_quality_v2(r.id) AS x) receipt),
               ARRAY['cycles_run', 'verdict', 'overall_score', 'cost_usd', 'receipt_json']
          FROM evalledger.eval_takes_quality_runs r WHERE r.completed_at IS NOT NULL
        UNION ALL
        SELECT 'eval_work_quality_snapshots', evalledger.journal_key_v1(s), to_jsonb(s),
               evalledger.ledger_recompute_work_quality_v2(s),
               ARRAY['mean_scores', 'disagreement', 'note', 'comparison', 'judges_cost_usd', 'snapshot_json']
          FROM evalledger.eval_work_quality_snapshots s WHERE s.completed_at IS NOT NULL AND s.origin = 'run')
    SELECT d.table_name, d.row_key, c, (d.was -> c)::text, (d.now_is -> c)::text
      FROM decided d CROSS JOIN LATERAL unnest(d.columns) c
     WHERE (d.was -> c) IS DISTINCT FROM (d.now_is -> c)
     ORDER BY 1, 2, 3
$$;

GRANT EXECUTE ON FUNCTION ledger_recompute_v3() TO evalledger_owner, evalledger_auditor;

RESET ROLE;

-- =============================================================================================
-- Guards no application role can lift: the event triggers (where a superuser installs)
-- =============================================================================================
-- The event-trigger functions live in a schema of their own, owned by the user who migrates.
CREATE SCHEMA evalledger_guard;
REVOKE ALL ON SCHEMA evalledger_guard FROM PUBLIC;
COMMENT ON SCHEMA evalledger_guard IS 'evalledger: event-trigger functions, out of every application role''s reach';
-- ddl_guard_v1: at the end of every DDL command (every tag: the event trigger has no WHEN filter),
-- an allow-list. On the ledger's objects (schema evalledger or evalledger_guard, a rule, policy or
-- trigger on one of its tables, and any GRANT, REVOKE or ALTER DEFAULT PRIVILEGES, whose target
-- the event does not name) a session that is not a superuser's may run only what the code role's
-- definer functions run: CREATE TABLE, CREATE TRIGGER, CREATE INDEX and ALTER TABLE on a capture
-- partition, as the code role that owns the schema; everything else is refused. For every session, the
-- superuser's included, each ledger table touched must then still be the code role's, permanent
-- (no UNLOGGED), in schema evalledger, without rules, with its partitions, row-level security
-- enabled and forced, and only ENABLE ALWAYS triggers that run the code role's functions.
-- Checking the resulting state catches every spelling; ownership, ENABLE ALWAYS and RLS are
-- checked after ALTER TABLE only: a new table or trigger is born without them, and the ALTER
-- TABLE that follows its creation is what this then checks.
CREATE FUNCTION evalledger_guard.ddl_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    code oid := (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'evalledger');
    command record;
    touched oid[];
    offence text;
BEGIN
    IF code IS NULL THEN
        RETURN;
    END IF;
    IF NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user) THEN
        SELECT c.command_tag || coalesce(' ' || c.object_identity, '') INTO offence
          FROM pg_event_trigger_ddl_commands() c
         WHERE (c.schema_name IN ('evalledger', 'evalledger_guard')
                OR c.object_identity ~ ' on evalledger\.'
                OR c.command_tag IN ('GRANT', 'REVOKE', 'ALTER DEFAULT PRIVILEGES'))
           AND NOT (current_user = code::regrole::name
                    AND c.command_tag IN ('CREATE TABLE', 'CREATE TRIGGER', 'CREATE INDEX', 'ALTER TABLE')
                    AND c.object_identity ~ '(^| on )evalledger\.eval_candidates_p[0-9]{6}($|_)')
         LIMIT 1;
        IF offence IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: DDL refused on the ledger: %', offence
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'the ledger''s schema changes only through `evalledger db migrate`';
        END IF;
    END IF;

    SELECT array_agg(DISTINCT CASE c.classid
                                WHEN 'pg_trigger'::regclass THEN (SELECT t.tgrelid FROM pg_trigger t WHERE t.oid = c.objid)
                                WHEN 'pg_rewrite'::regclass THEN (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = c.objid)
                                WHEN 'pg_policy'::regclass THEN (SELECT p.polrelid FROM pg_policy p WHERE p.oid = c.objid)
                                ELSE c.objid END)
      INTO touched
      FROM pg_event_trigger_ddl_commands() c
     WHERE c.classid IN ('pg_class'::regclass, 'pg_trigger'::regclass, 'pg_rewrite'::regclass, 'pg_policy'::regclass);
    SELECT array_agg(r.oid) INTO touched
      FROM pg_class r
     WHERE r.oid = ANY (touched) AND r.relkind IN ('r', 'p')
       AND (r.relnamespace = 'evalledger'::regnamespace
            OR EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
                        WHERE t.tgrelid = r.oid AND p.pronamespace = 'evalledger'::regnamespace));
    IF touched IS NULL THEN
        RETURN;
    END IF;

    SELECT format('%I.%I', r.relnamespace::regnamespace, r.relname) INTO offence
      FROM pg_class r WHERE r.oid = ANY (touched) AND r.relnamespace <> 'evalledger'::regnamespace LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger table % stays in schema evalledger', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT format('%s is owned by %s', r.relname, pg_get_userbyid(r.relowner)) INTO offence
      FROM pg_class r WHERE r.oid = ANY (touched) AND r.relowner <> code AND TG_TAG = 'ALTER TABLE' LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger tables stay the code role''s: %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT r.relname INTO offence
      FROM pg_class r WHERE r.oid = ANY (touched) AND r.relpersistence <> 'p' LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger table % stays logged: a crash must not lose it', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT format('%s on %s', w.rulename, r.relname) INTO offence
      FROM pg_rewrite w JOIN pg_class r ON r.oid = w.ev_class WHERE r.oid = ANY (touched) LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: no rule rewrites a write to a ledger table: rule %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    IF current_query() ~* '\mDETACH\s+PARTITION\M' THEN
        RAISE EXCEPTION 'evalledger: DETACH PARTITION refused on a ledger table'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'partitions leave only through the retention purge';
    END IF;

    SELECT format('%s on %s runs %s, owned by %s', t.tgname, c.relname, t.tgfoid::regprocedure,
                  pg_get_userbyid(p.proowner))
      INTO offence
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE c.oid = ANY (touched) AND NOT t.tgisinternal AND p.proowner <> code
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger triggers run the code role''s functions: trigger %', offence
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'create trigger functions in a migration, acting as evalledger_code';
    END IF;

    SELECT format('%s on %s is %s', t.tgname, c.relname,
                  CASE t.tgenabled WHEN 'D' THEN 'disabled' WHEN 'R' THEN 'replica-only' ELSE 'origin-only' END)
      INTO offence
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.oid = ANY (touched) AND NOT t.tgisinternal AND t.tgenabled <> 'A'
       AND TG_TAG = 'ALTER TABLE'
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger guards stay ENABLE ALWAYS: trigger %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT r.relname INTO offence
      FROM pg_class r
     WHERE r.oid = ANY (touched) AND NOT (r.relrowsecurity AND r.relforcerowsecurity)
       AND TG_TAG = 'ALTER TABLE'
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: row level security stays enabled and forced on %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END;
$$;

-- drop_guard_v1: no trigger, policy, rule, table, view, function or schema of the ledger is dropped,
-- except a capture partition past retention inside the retention purge (retention_purge_v2). It lives in a schema the
-- no application role can use, so that neither DROP FUNCTION ... CASCADE nor DROP SCHEMA evalledger
-- CASCADE can take the guard away first. The capture functions are called
-- dynamically: when a DROP SCHEMA cascades, they are already gone by the time this runs.
CREATE FUNCTION evalledger_guard.drop_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    dropped record;
    purging boolean := false;
    expired boolean;
BEGIN
    FOR dropped IN
        SELECT d.object_type, d.object_identity,
               substring(d.object_identity FROM '(?:^| on )evalledger\.(eval_candidates_p[0-9]{6})$') AS partition
          FROM pg_event_trigger_dropped_objects() d
         WHERE (d.object_type IN ('trigger', 'policy', 'rule', 'table', 'view', 'function', 'schema')
                -- dropped by name, not as a part of a dropped partition
                OR (d.original AND d.object_type IN ('table column', 'table constraint', 'index', 'type')))
           AND (d.schema_name IN ('evalledger', 'evalledger_guard')
                OR d.object_identity IN ('evalledger', 'evalledger_guard')
                OR d.object_identity LIKE '% on evalledger.%')
           AND NOT d.is_temporary
    LOOP
        -- Asked only for a capture partition: only the purge (the code role) may run these.
        IF dropped.partition IS NOT NULL AND to_regprocedure('evalledger.capture_purging_v1()') IS NOT NULL THEN
            EXECUTE 'SELECT evalledger.capture_purging_v1()' INTO purging;
        END IF;
        IF purging AND dropped.partition IS NOT NULL THEN
            EXECUTE 'SELECT evalledger.capture_partition_expired_v2($1)' INTO expired USING dropped.partition;
            CONTINUE WHEN expired;
        END IF;
        RAISE EXCEPTION 'evalledger: DROP refused: % % is part of the ledger', dropped.object_type, dropped.object_identity
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'replace a trigger with CREATE OR REPLACE TRIGGER and a new _vN function';
    END LOOP;
END;
$$;

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
