-- Human reviewers: a database role name mapped to the reviewer_user_id that runs carry.
CREATE TABLE reviewer (
    reviewer_user_id uuid        NOT NULL,
    role_name        name        NOT NULL,
    display_name     text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT reviewer_pkey PRIMARY KEY (reviewer_user_id),
    CONSTRAINT reviewer_role_name_key UNIQUE (role_name)
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
GRANT INSERT ON reviewer TO evalledger_owner;

CREATE POLICY reviewer_runner ON reviewer FOR SELECT TO evalledger_runner USING (true);
GRANT SELECT ON reviewer TO evalledger_runner;

CREATE POLICY reviewer_self ON reviewer FOR SELECT TO evalledger_reviewer USING (role_name = current_user);
GRANT SELECT ON reviewer TO evalledger_reviewer;

-- The auditor reads the reviewer registry: who reviewed (display names) is part of the audit.
-- RevOps reads reviewer ids (the runs'); a reviewer reads itself (reviewer_self).
CREATE POLICY reviewer_auditor ON reviewer FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON reviewer TO evalledger_auditor;
