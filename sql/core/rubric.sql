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

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON rubric TO evalledger_owner;

CREATE POLICY rubric_read ON rubric FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON rubric TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
