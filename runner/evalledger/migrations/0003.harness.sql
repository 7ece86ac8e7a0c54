-- The brain-eval harness (issue 9): versioned question catalogs and the brains under test, each version of a brain's model, prompt and levers a row of its own.

SET LOCAL ROLE evalledger_owner;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- Tables
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

-- =============================================================================================
-- Indexes
-- =============================================================================================
-- Production-vs-eval comparisons look a prompt hash up across brain versions.
CREATE INDEX brain_version_prompt_hash_idx ON brain_version (system_prompt_hash);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
-- Created as the owner role; the baseline's adopt_code_v1 makes each one the installer's at once.
\ir ../suites/brain_eval/sql/brain_eval_catalog_admit_v1.sql
\ir ../suites/brain_eval/sql/brain_eval_catalog_expand_v1.sql
\ir ../suites/brain_eval/sql/brain_eval_catalog_question_admit_v1.sql
\ir ../suites/brain_eval/sql/brain_version_admit_v1.sql

CREATE TRIGGER brain_eval_catalog_10_admit BEFORE INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_admit_v1();
CREATE TRIGGER brain_eval_catalog_20_expand AFTER INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_expand_v1();
CREATE TRIGGER brain_eval_catalog_question_10_admit BEFORE INSERT ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_question_admit_v1();
CREATE TRIGGER brain_version_10_admit BEFORE INSERT ON brain_version
    FOR EACH ROW EXECUTE FUNCTION brain_version_admit_v1();

-- Append-only guards: catalogs and brain versions are never changed and not in purgeable_v1's
-- retention rule, so UPDATE, DELETE and TRUNCATE are refused for every role.
CREATE TRIGGER brain_eval_catalog_00_append_only BEFORE UPDATE OR DELETE ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_catalog_00_no_truncate BEFORE TRUNCATE ON brain_eval_catalog
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_catalog_question_00_append_only BEFORE UPDATE OR DELETE ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_eval_catalog_question_00_no_truncate BEFORE TRUNCATE ON brain_eval_catalog_question
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_version_00_append_only BEFORE UPDATE OR DELETE ON brain_version
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER brain_version_00_no_truncate BEFORE TRUNCATE ON brain_version
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- One ALTER TABLE per table enables and forces RLS and sets every trigger ENABLE ALWAYS, so the
-- DDL guard only ever sees the table in its final state.
ALTER TABLE brain_eval_catalog ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_00_append_only,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_00_no_truncate,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_10_admit,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_20_expand;
ALTER TABLE brain_eval_catalog_question ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_question_00_append_only,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_question_00_no_truncate,
    ENABLE ALWAYS TRIGGER brain_eval_catalog_question_10_admit;
ALTER TABLE brain_version ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER brain_version_00_append_only,
    ENABLE ALWAYS TRIGGER brain_version_00_no_truncate,
    ENABLE ALWAYS TRIGGER brain_version_10_admit;

-- The owner loads catalogs and registers brain versions (like every registry), and sees everything.
CREATE POLICY brain_eval_catalog_owner_all ON brain_eval_catalog TO evalledger_owner
    USING (true) WITH CHECK (true);
CREATE POLICY brain_eval_catalog_question_owner_all ON brain_eval_catalog_question TO evalledger_owner
    USING (true) WITH CHECK (true);
CREATE POLICY brain_version_owner_all ON brain_version TO evalledger_owner
    USING (true) WITH CHECK (true);

-- Reference data, as target and rubric: the runner asks the questions and calls the brain, the
-- reviewer scores against the criteria, RevOps and auditors read. Brain agents and production
-- users: nothing.
CREATE POLICY brain_eval_catalog_read ON brain_eval_catalog FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY brain_eval_catalog_question_read ON brain_eval_catalog_question FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
CREATE POLICY brain_version_read ON brain_version FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_catalog, brain_eval_catalog_question, brain_version
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- Functions: nothing is PUBLIC, and these are trigger functions, called by no one directly.
REVOKE EXECUTE ON FUNCTION brain_eval_catalog_admit_v1(), brain_eval_catalog_expand_v1(),
    brain_eval_catalog_question_admit_v1(), brain_version_admit_v1() FROM PUBLIC;

RESET ROLE;
