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
    CONSTRAINT brain_eval_catalog_question_type_known CHECK (question_type::text IN (
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

CREATE POLICY brain_eval_catalog_question_read ON brain_eval_catalog_question FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_catalog_question TO evalledger_runner, evalledger_revops, evalledger_auditor;
GRANT SELECT (catalog_version, position, question_id, question_type, question_text, sources, uses_stale_fixture,
              created_at)
    ON brain_eval_catalog_question TO evalledger_reviewer;
