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

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON brain_eval_catalog TO evalledger_owner;

-- Reference data, as target and rubric: the runner asks the questions and calls the brain, the
-- reviewer scores against the criteria, RevOps and auditors read. Brain agents and production
-- users: nothing.
CREATE POLICY brain_eval_catalog_read ON brain_eval_catalog FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_catalog TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- A reviewer reads a catalog's questions, texts and sources, but not their pass criteria (the
-- expected findings among them) nor the catalog document that holds them too: those come through
-- brain_eval_reference_v2, after the blind score.
GRANT SELECT (catalog_version, document_sha256, question_count, source_file, loaded_at)
    ON brain_eval_catalog TO evalledger_reviewer;
