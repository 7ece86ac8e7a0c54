-- Who tunes each brain's prompt; readable by the owner alone, consulted by the independence check.
CREATE TABLE prompt_tuner (
    target_id     varchar(16) NOT NULL,
    user_id       uuid        NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT prompt_tuner_pkey PRIMARY KEY (target_id, user_id),
    CONSTRAINT prompt_tuner_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id)
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
GRANT INSERT ON prompt_tuner TO evalledger_owner;
