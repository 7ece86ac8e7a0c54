-- The seed-002 ledger: targets, rubrics, reviewers, prompt tuners, brain analyses, runs and question scores, with their guards, roles and row-level security.

-- =============================================================================================
-- Roles
-- =============================================================================================
-- Roles are cluster-wide, so they are created only where missing: several databases on one
-- server share them. None is superuser, none bypasses row-level security.
DO $roles$
DECLARE
    wanted text[] := ARRAY['evalledger_owner:NOLOGIN', 'evalledger_runner:LOGIN',
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
-- Whoever migrates may act as the owner, so that every object below is the owner's.
GRANT evalledger_owner TO CURRENT_USER;

CREATE SCHEMA evalledger AUTHORIZATION evalledger_owner;
REVOKE ALL ON SCHEMA evalledger FROM PUBLIC;
GRANT USAGE ON SCHEMA evalledger
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- Functions are not PUBLIC: a SECURITY DEFINER function would otherwise read past RLS for anyone.
ALTER DEFAULT PRIVILEGES FOR ROLE evalledger_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

SET LOCAL ROLE evalledger_owner;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- Types
-- =============================================================================================
-- Why a run happened (seed 002, exactly as written).
CREATE TYPE eval_run_trigger AS ENUM ('pre_launch', 'quarterly', 'prompt_change', 'model_promotion', 'on_demand');
-- The rubric's verdict on a completed run.
CREATE TYPE eval_decision AS ENUM ('pass', 'pass_with_notes', 'conditional', 'fail');

-- =============================================================================================
-- Registries: targets, rubrics, reviewers, prompt tuners, legal holds
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
    token_cost_usd     numeric(10,4) NOT NULL,
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
    CONSTRAINT brain_analysis_log_cost_not_negative CHECK (token_cost_usd >= 0)
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
    CONSTRAINT brain_eval_log_pkey PRIMARY KEY (eval_run_id),
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
            'lever_mapping_correctness', 'confidence_calibration_in_band', 'narrative_coherence_mean'])
);

-- BrainEvalQuestionScore: one row per (run, question).
CREATE TABLE brain_eval_question_score (
    question_score_id              uuid         NOT NULL DEFAULT gen_random_uuid(),
    eval_run_id                    uuid         NOT NULL,
    question_id                    varchar(16)  NOT NULL,
    brain_analysis_id              uuid         NOT NULL,
    question_type                  varchar(32)  NOT NULL,
    uses_stale_fixture             boolean      NOT NULL,
    citation_rate                  numeric(5,4) NOT NULL,
    hallucinations_detected        integer      NOT NULL,
    total_claims                   integer      NOT NULL,
    staleness_correctly_recognized boolean,
    diagnosis_accuracy_score       numeric(3,2),
    lever_mapping_violations       integer,
    confidence_distribution        jsonb        NOT NULL,
    narrative_coherence_rating     integer,
    reviewer_comments              text,
    question_passed                boolean      NOT NULL,
    created_at                     timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT brain_eval_question_score_pkey PRIMARY KEY (question_score_id),
    -- No CASCADE: runs are append-only.
    CONSTRAINT brain_eval_question_score_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_question_score_analysis_fkey FOREIGN KEY (brain_analysis_id) REFERENCES brain_analysis_log (analysis_id),
    CONSTRAINT brain_eval_question_score_question_once_per_run UNIQUE (eval_run_id, question_id),
    CONSTRAINT brain_eval_question_score_question_type_known CHECK (question_type IN (
        'plan_diagnosis', 'coverage_gap', 'play_retrospective', 'forecast_bias', 'churn_diagnosis',
        'expansion_qualification', 'handoff_briefing', 'qbr_narrative')),
    CONSTRAINT brain_eval_question_score_citation_rate_range CHECK (citation_rate BETWEEN 0 AND 1),
    CONSTRAINT brain_eval_question_score_claims_consistent CHECK (
        total_claims >= 0 AND hallucinations_detected BETWEEN 0 AND total_claims),
    CONSTRAINT brain_eval_question_score_staleness_only_on_stale_fixture CHECK (
        (staleness_correctly_recognized IS NOT NULL) = uses_stale_fixture),
    CONSTRAINT brain_eval_question_score_diagnosis_scale CHECK (
        diagnosis_accuracy_score IS NULL OR diagnosis_accuracy_score IN (0.0, 0.5, 1.0)),
    CONSTRAINT brain_eval_question_score_lever_violations_not_negative CHECK (
        lever_mapping_violations IS NULL OR lever_mapping_violations >= 0),
    CONSTRAINT brain_eval_question_score_coherence_scale CHECK (
        narrative_coherence_rating IS NULL OR narrative_coherence_rating BETWEEN 1 AND 5),
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
        AND (confidence_distribution ->> 'speculation_pct')::numeric BETWEEN 0 AND 100)
);

-- Runs a legal hold keeps past the purge horizon; released holds stay as history.
CREATE TABLE legal_hold (
    hold_id     bigint      GENERATED ALWAYS AS IDENTITY,
    eval_run_id uuid        NOT NULL,
    reason      text        NOT NULL,
    placed_at   timestamptz NOT NULL DEFAULT now(),
    released_at timestamptz,
    CONSTRAINT legal_hold_pkey PRIMARY KEY (hold_id),
    CONSTRAINT legal_hold_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id)
);

-- =============================================================================================
-- Indexes (seed 002's six)
-- =============================================================================================
CREATE INDEX brain_eval_log_brain_started_idx ON brain_eval_log (brain_under_test, started_at DESC);
CREATE INDEX brain_eval_log_decision_started_idx ON brain_eval_log (decision, started_at DESC);
CREATE INDEX brain_eval_log_system_prompt_hash_idx ON brain_eval_log (system_prompt_hash);
CREATE INDEX brain_eval_question_score_question_created_idx ON brain_eval_question_score (question_id, created_at DESC);
CREATE INDEX brain_eval_question_score_run_idx ON brain_eval_question_score (eval_run_id);
CREATE INDEX brain_eval_question_score_stale_fixture_idx ON brain_eval_question_score (uses_stale_fixture, staleness_correctly_recognized);
-- Foreign keys that the seed does not index but joins and the purge walk.
CREATE INDEX brain_analysis_log_prompt_hash_idx ON brain_analysis_log (system_prompt_hash);
CREATE INDEX brain_eval_question_score_analysis_idx ON brain_eval_question_score (brain_analysis_id);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
\ir ../core/sql/refuse_supplied_v1.sql
\ir ../core/sql/purgeable_v1.sql
\ir ../core/sql/refuse_change_v1.sql
\ir ../core/sql/rubric_fingerprint_v1.sql
\ir ../suites/brain_eval/sql/prompt_tuner_admit_v1.sql
\ir ../suites/brain_eval/sql/brain_eval_log_admit_v1.sql
\ir ../suites/brain_eval/sql/brain_eval_log_guard_update_v1.sql
\ir ../suites/brain_eval/sql/brain_eval_decide_v1.sql
\ir ../suites/brain_eval/sql/brain_eval_question_score_write_v1.sql
-- reviewer_id_of: the reviewer_user_id of a database role (NULL for anyone else).
CREATE FUNCTION reviewer_id_of(role_name name) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
    SELECT r.reviewer_user_id FROM evalledger.reviewer r WHERE r.role_name = reviewer_id_of.role_name;
$$;

-- Trigger names carry their firing order (PostgreSQL fires them alphabetically).
CREATE TRIGGER rubric_10_fingerprint BEFORE INSERT ON rubric
    FOR EACH ROW EXECUTE FUNCTION rubric_fingerprint_v1();
CREATE TRIGGER prompt_tuner_10_admit BEFORE INSERT ON prompt_tuner
    FOR EACH ROW EXECUTE FUNCTION prompt_tuner_admit_v1();
CREATE TRIGGER brain_eval_log_10_admit BEFORE INSERT ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_admit_v1();
CREATE TRIGGER brain_eval_log_10_guard_update BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_guard_update_v1();
CREATE TRIGGER brain_eval_log_20_decide BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_decide_v1();
CREATE TRIGGER brain_eval_question_score_10_write BEFORE INSERT OR UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v1();

-- Append-only guards: every UPDATE a table does not explicitly allow, every DELETE inside the
-- retention horizon, and every TRUNCATE.
CREATE TRIGGER target_00_append_only BEFORE UPDATE OR DELETE ON target
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER rubric_00_append_only BEFORE UPDATE OR DELETE ON rubric
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER reviewer_00_append_only BEFORE UPDATE OR DELETE ON reviewer
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER prompt_tuner_00_append_only BEFORE UPDATE OR DELETE ON prompt_tuner
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_analysis_log_00_append_only BEFORE UPDATE OR DELETE ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_log_00_append_only BEFORE DELETE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_question_score_00_append_only BEFORE DELETE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER legal_hold_00_append_only BEFORE DELETE ON legal_hold
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER target_00_no_truncate BEFORE TRUNCATE ON target
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER rubric_00_no_truncate BEFORE TRUNCATE ON rubric
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER reviewer_00_no_truncate BEFORE TRUNCATE ON reviewer
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER prompt_tuner_00_no_truncate BEFORE TRUNCATE ON prompt_tuner
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_analysis_log_00_no_truncate BEFORE TRUNCATE ON brain_analysis_log
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_log_00_no_truncate BEFORE TRUNCATE ON brain_eval_log
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_question_score_00_no_truncate BEFORE TRUNCATE ON brain_eval_question_score
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER legal_hold_00_no_truncate BEFORE TRUNCATE ON legal_hold
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();

-- ENABLE ALWAYS: with session_replication_role = replica an ordinary trigger is skipped.
DO $always$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.relname, tg.tgname FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
              WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT tg.tgisinternal LOOP
        EXECUTE format('ALTER TABLE evalledger.%I ENABLE ALWAYS TRIGGER %I', t.relname, t.tgname);
    END LOOP;
END
$always$;

-- =============================================================================================
-- Row-level security and privileges
-- =============================================================================================
-- FORCE: the owner is held to the policies too; it sees everything through its own policy.
DO $rls$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['target', 'rubric', 'reviewer', 'prompt_tuner', 'brain_analysis_log',
                             'brain_eval_log', 'brain_eval_question_score', 'legal_hold'] LOOP
        EXECUTE format('ALTER TABLE evalledger.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE evalledger.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY %I ON evalledger.%I TO evalledger_owner USING (true) WITH CHECK (true)',
                       t || '_owner_all', t);
    END LOOP;
END
$rls$;

-- Reference data every reading role needs.
CREATE POLICY target_read ON target FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY rubric_read ON rubric FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON target, rubric TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- The runner writes runs, question rows and analyses, reads them back, and completes runs.
CREATE POLICY brain_eval_log_runner ON brain_eval_log TO evalledger_runner USING (true) WITH CHECK (true);
CREATE POLICY brain_eval_question_score_runner ON brain_eval_question_score TO evalledger_runner USING (true) WITH CHECK (true);
CREATE POLICY brain_analysis_log_runner ON brain_analysis_log TO evalledger_runner USING (true) WITH CHECK (true);
CREATE POLICY reviewer_runner ON reviewer FOR SELECT TO evalledger_runner USING (true);
GRANT SELECT, INSERT ON brain_eval_log, brain_eval_question_score, brain_analysis_log TO evalledger_runner;
GRANT UPDATE (completed_at) ON brain_eval_log TO evalledger_runner;
GRANT SELECT ON reviewer TO evalledger_runner;

-- A reviewer sees its own runs, their question rows and the analyses behind them, and scores
-- the reviewer-scored fields of those question rows.
CREATE POLICY brain_eval_log_reviewer ON brain_eval_log FOR SELECT TO evalledger_reviewer
    USING (reviewer_user_id = evalledger.reviewer_id_of(current_user));
CREATE POLICY brain_eval_question_score_reviewer ON brain_eval_question_score TO evalledger_reviewer
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.eval_run_id = brain_eval_question_score.eval_run_id))
    WITH CHECK (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.eval_run_id = brain_eval_question_score.eval_run_id));
CREATE POLICY brain_analysis_log_reviewer ON brain_analysis_log FOR SELECT TO evalledger_reviewer
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q WHERE q.brain_analysis_id = brain_analysis_log.analysis_id));
CREATE POLICY reviewer_self ON reviewer FOR SELECT TO evalledger_reviewer USING (role_name = current_user);
GRANT SELECT ON brain_eval_log, brain_eval_question_score, brain_analysis_log, reviewer TO evalledger_reviewer;
GRANT UPDATE (hallucinations_detected, total_claims, diagnosis_accuracy_score, narrative_coherence_rating, reviewer_comments)
    ON brain_eval_question_score TO evalledger_reviewer;

-- RevOps reads the hot tier (24 months); auditors read everything the ledger retains.
CREATE POLICY brain_eval_log_revops ON brain_eval_log FOR SELECT TO evalledger_revops
    USING (started_at >= now() - interval '24 months');
CREATE POLICY brain_eval_question_score_revops ON brain_eval_question_score FOR SELECT TO evalledger_revops
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.eval_run_id = brain_eval_question_score.eval_run_id));
CREATE POLICY brain_analysis_log_revops ON brain_analysis_log FOR SELECT TO evalledger_revops
    USING (produced_at >= now() - interval '24 months');
CREATE POLICY brain_eval_log_auditor ON brain_eval_log FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_question_score_auditor ON brain_eval_question_score FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_analysis_log_auditor ON brain_analysis_log FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY legal_hold_auditor ON legal_hold FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_log, brain_eval_question_score, brain_analysis_log TO evalledger_revops, evalledger_auditor;
GRANT SELECT ON legal_hold TO evalledger_auditor;

-- Functions the policies and triggers call on a role's behalf; nothing else is executable.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA evalledger FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lock_run_v1(uuid), question_passes_v1(brain_eval_question_score, jsonb, text),
    refuse_supplied_v1(text, jsonb), changed_columns_v1(jsonb, jsonb, text[])
    TO evalledger_runner, evalledger_reviewer;
GRANT EXECUTE ON FUNCTION reviewer_id_of(name) TO evalledger_reviewer;

-- =============================================================================================
-- Seed data: the brains of seed 002 and the brain-eval v1 rubric
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
    {"key": "staleness_recognition_rate", "label": "staleness recognition", "scored_by": "automatic", "aggregate": "recognised / stale-fixture questions", "unit": "rate"},
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

RESET ROLE;

-- =============================================================================================
-- Event triggers (superuser only; elsewhere `evalledger doctor` explains their absence)
-- =============================================================================================
\ir ../core/sql/ddl_guard_v1.sql
REVOKE EXECUTE ON FUNCTION evalledger.ddl_guard_v1(), evalledger.drop_guard_v1() FROM PUBLIC;

DO $events$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        CREATE EVENT TRIGGER evalledger_ddl_guard_v1 ON ddl_command_end
            WHEN TAG IN ('ALTER TABLE') EXECUTE FUNCTION evalledger.ddl_guard_v1();
        CREATE EVENT TRIGGER evalledger_drop_guard_v1 ON sql_drop
            EXECUTE FUNCTION evalledger.drop_guard_v1();
        ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS;
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    ELSE
        RAISE NOTICE 'evalledger: not a superuser: DDL event triggers not installed';
    END IF;
END
$events$;
