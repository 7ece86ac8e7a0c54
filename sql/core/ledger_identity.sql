-- One row: the id every digest and proof names, so a digest of one ledger is never checked
-- against another.
CREATE TABLE ledger_identity (
    ledger_id  uuid        NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_identity_pkey PRIMARY KEY (ledger_id)
);

-- The ledger's identity is one row.
CREATE UNIQUE INDEX ledger_identity_one_row ON ledger_identity ((true));

-- The journal's own tables: only the code role writes them (through its functions); the owner role
-- reads them (verify reads as the owner role, the one application role that reads every ledger
-- table, prompt_tuner included); the auditor reads them too, but for prompt_tuner's entries, whose
-- keys would say who tunes which brain.
GRANT SELECT ON ledger_identity TO evalledger_auditor;

CREATE POLICY ledger_identity_auditor ON ledger_identity FOR SELECT TO evalledger_auditor USING (true);

-- The ledger's identity: the id every digest and proof names.
INSERT INTO ledger_identity DEFAULT VALUES;
