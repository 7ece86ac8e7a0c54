-- The release of a hold, once, with its reason: the hold's history is its rows, never an UPDATE.
-- It goes with its hold when the purge takes that (CASCADE: both are past the horizon by then).
CREATE TABLE legal_hold_release (
    hold_id     bigint      NOT NULL,
    reason      text        NOT NULL,
    released_at timestamptz NOT NULL DEFAULT now(),
    released_by name        NOT NULL DEFAULT session_user,
    CONSTRAINT legal_hold_release_pkey PRIMARY KEY (hold_id),
    CONSTRAINT legal_hold_release_hold_fkey FOREIGN KEY (hold_id) REFERENCES legal_hold (hold_id) ON DELETE CASCADE,
    CONSTRAINT legal_hold_release_reason_not_blank CHECK (btrim(reason) <> '')
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
GRANT INSERT ON legal_hold_release TO evalledger_owner;

CREATE POLICY legal_hold_release_auditor ON legal_hold_release FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON legal_hold_release TO evalledger_auditor;
