-- The brain-eval harness (issue 9): versioned question catalogs, the brains under test (each version of a brain's model, prompt and levers a row of its own), and harness runs with the brain's answers, their automatic scores and the judges' suggestions.

SET LOCAL ROLE evalledger_code;
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
    CONSTRAINT brain_eval_harness_answer_pkey PRIMARY KEY (eval_run_id, question_id),
    CONSTRAINT brain_eval_harness_answer_run_fkey FOREIGN KEY (eval_run_id)
        REFERENCES brain_eval_harness_run (eval_run_id),
    CONSTRAINT brain_eval_harness_answer_analysis_key UNIQUE (analysis_id),
    CONSTRAINT brain_eval_harness_answer_analysis_fkey FOREIGN KEY (analysis_id)
        REFERENCES brain_analysis_log (analysis_id),
    CONSTRAINT brain_eval_harness_answer_contract_error_not_blank CHECK (btrim(contract_error) <> ''),
    CONSTRAINT brain_eval_harness_answer_counts_not_negative CHECK (latency_ms >= 0 AND attempts >= 0),
    CONSTRAINT brain_eval_harness_answer_citation_rate_range CHECK (citation_rate BETWEEN 0 AND 1),
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
    cost_usd             numeric(14,8) NOT NULL DEFAULT 0,
    latency_ms           integer       NOT NULL DEFAULT 0,
    attempts             integer       NOT NULL DEFAULT 0,
    created_at           timestamptz   NOT NULL DEFAULT now(),
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
        input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0 AND attempts >= 0)
);

-- =============================================================================================
-- Indexes
-- =============================================================================================
-- Production-vs-eval comparisons look a prompt hash up across brain versions.
CREATE INDEX brain_version_prompt_hash_idx ON brain_version (system_prompt_hash);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
-- Created as the code role, which owns them: the owner role can never redefine them.
\ir ../triggers/brain_eval/brain_eval_catalog_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_expand_v1.sql
\ir ../triggers/brain_eval/brain_eval_catalog_question_admit_v1.sql
\ir ../triggers/brain_eval/brain_version_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_harness_run_admit_v1.sql
\ir ../sql/brain_eval/brain_eval_open_harness_v1.sql
\ir ../triggers/brain_eval/brain_eval_harness_answer_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_harness_question_v1.sql
\ir ../triggers/brain_eval/brain_eval_judge_suggestion_admit_v1.sql
\ir ../sql/brain_eval/brain_eval_show_suggestions_v1.sql
CREATE TRIGGER brain_eval_catalog_10_admit BEFORE INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_admit_v1();
CREATE TRIGGER brain_eval_catalog_20_expand AFTER INSERT ON brain_eval_catalog
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_expand_v1();
CREATE TRIGGER brain_eval_catalog_question_10_admit BEFORE INSERT ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_question_admit_v1();
CREATE TRIGGER brain_version_10_admit BEFORE INSERT ON brain_version
    FOR EACH ROW EXECUTE FUNCTION brain_version_admit_v1();
CREATE TRIGGER brain_eval_harness_run_10_admit BEFORE INSERT ON brain_eval_harness_run
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_run_admit_v1();
CREATE TRIGGER brain_eval_harness_answer_10_admit BEFORE INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_answer_admit_v1();
CREATE TRIGGER brain_eval_harness_answer_20_question AFTER INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_question_v1();
CREATE TRIGGER brain_eval_judge_suggestion_10_admit BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION brain_eval_judge_suggestion_admit_v1();

-- Append-only guards: catalogs, brain versions and harness records are never changed and not in
-- purgeable_v1's retention rule, so UPDATE, DELETE and TRUNCATE are refused for every role.
CALL guard_append_only_v1(ARRAY[
    'brain_eval_catalog:UPDATE OR DELETE:refuse_change_v1',
    'brain_eval_catalog_question:UPDATE OR DELETE:refuse_change_v1',
    'brain_version:UPDATE OR DELETE:refuse_change_v1',
    'brain_eval_harness_run:UPDATE OR DELETE:refuse_change_v1',
    'brain_eval_harness_answer:UPDATE OR DELETE:refuse_change_v1',
    'brain_eval_judge_suggestion:UPDATE OR DELETE:refuse_change_v1']);

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- RLS enabled and FORCEd, every trigger ENABLE ALWAYS, the owner role (which loads catalogs and
-- registers brain versions, like every registry) and the code role see everything through their
-- policies, and the owner role holds the DML privileges, which the triggers guard.
CALL seal_tables_v1();

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

-- Harness runs as seed 002's role table has runs: the runner inserts (the columns it observes)
-- and reads; a reviewer reads its own runs' records; RevOps the hot tier; auditors everything.
CREATE POLICY brain_eval_harness_run_runner ON brain_eval_harness_run TO evalledger_runner
    USING (true) WITH CHECK (true);
CREATE POLICY brain_eval_harness_answer_runner ON brain_eval_harness_answer TO evalledger_runner
    USING (true) WITH CHECK (true);
GRANT SELECT ON brain_eval_harness_run, brain_eval_harness_answer TO evalledger_runner;
GRANT INSERT (eval_run_id, brain_version_id, catalog_version, question_ids, contracts, answers)
    ON brain_eval_harness_run TO evalledger_runner;
GRANT INSERT (eval_run_id, question_id, analysis_id, recorded, contract_error, latency_ms, attempts)
    ON brain_eval_harness_answer TO evalledger_runner;
-- Visible exactly where the run itself is (brain_eval_log's own policies decide).
CREATE POLICY brain_eval_harness_run_readers ON brain_eval_harness_run FOR SELECT
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.eval_run_id = brain_eval_harness_run.eval_run_id));
CREATE POLICY brain_eval_harness_answer_readers ON brain_eval_harness_answer FOR SELECT
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.eval_run_id = brain_eval_harness_answer.eval_run_id));
GRANT SELECT ON brain_eval_harness_run, brain_eval_harness_answer
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
CREATE POLICY brain_eval_judge_suggestion_runner ON brain_eval_judge_suggestion TO evalledger_runner
    USING (true) WITH CHECK (true);
GRANT SELECT ON brain_eval_judge_suggestion TO evalledger_runner;
GRANT INSERT (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind,
              error_message, input_tokens, output_tokens, cost_usd, latency_ms, attempts)
    ON brain_eval_judge_suggestion TO evalledger_runner;
CREATE POLICY brain_eval_judge_suggestion_readers ON brain_eval_judge_suggestion FOR SELECT
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.eval_run_id = brain_eval_judge_suggestion.eval_run_id));
GRANT SELECT ON brain_eval_judge_suggestion TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- A reviewer reads the brain's answers in its own harness runs before any question row points at
-- them (the baseline's policy shows a reviewer only analyses its question rows point at).
CREATE POLICY brain_analysis_log_reviewer_harness ON brain_analysis_log FOR SELECT TO evalledger_reviewer
    USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer a
                    WHERE a.analysis_id = brain_analysis_log.analysis_id));

-- Functions: nothing is PUBLIC; the trigger functions and their helper are called by no one directly.
REVOKE EXECUTE ON FUNCTION brain_eval_catalog_admit_v1(), brain_eval_catalog_expand_v1(),
    brain_eval_catalog_question_admit_v1(), brain_version_admit_v1(), brain_eval_harness_run_admit_v1(),
    brain_eval_harness_answer_admit_v1(), brain_eval_harness_question_v1(), brain_eval_judge_suggestion_admit_v1(),
    brain_eval_open_harness_v1(uuid, text), brain_eval_show_suggestions_v1(uuid, text) FROM PUBLIC;
-- The reviewer asks to see suggestions through this one function (blind review).
GRANT EXECUTE ON FUNCTION brain_eval_show_suggestions_v1(uuid, text) TO evalledger_reviewer;

RESET ROLE;
