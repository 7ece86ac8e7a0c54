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
GRANT INSERT ON rubric TO evalledger_owner;

CREATE POLICY rubric_read ON rubric FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON rubric TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
