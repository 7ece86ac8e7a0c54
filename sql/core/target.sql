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
GRANT INSERT ON target TO evalledger_owner;

-- Reference data every reading role needs.
CREATE POLICY target_read ON target FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON target TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
