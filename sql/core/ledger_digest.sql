-- Every digest taken (the digest itself is kept outside): doctor warns when none is recent.
CREATE TABLE ledger_digest (
    digest_id bigint      GENERATED ALWAYS AS IDENTITY,
    block_id  bigint      NOT NULL,
    taken_at  timestamptz NOT NULL DEFAULT now(),
    taken_by  name        NOT NULL DEFAULT session_user,
    CONSTRAINT ledger_digest_pkey PRIMARY KEY (digest_id),
    CONSTRAINT ledger_digest_block_fkey FOREIGN KEY (block_id) REFERENCES ledger_block (block_id)
);

-- The journal's own tables: only the code role writes them (through its functions); the owner role
-- reads them (verify reads as the owner role, the one application role that reads every ledger
-- table, prompt_tuner included); the auditor reads them too, but for prompt_tuner's entries, whose
-- keys would say who tunes which brain.
GRANT SELECT ON ledger_digest TO evalledger_auditor;

CREATE POLICY ledger_digest_auditor ON ledger_digest FOR SELECT TO evalledger_auditor USING (true);
