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

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON legal_hold_release TO evalledger_owner;

CREATE POLICY legal_hold_release_auditor ON legal_hold_release FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON legal_hold_release TO evalledger_auditor;
