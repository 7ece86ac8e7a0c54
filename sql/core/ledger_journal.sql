-- One row per row version of a ledger table (or per statement and partition for captured queries,
-- and for multi-row deletes): what journal_row_v2, journal_deleted_v2 and journal_capture_v2 write,
-- and nothing else does. rows_root is the row's RFC 6962 leaf hash (several rows: the Merkle tree
-- hash of their leaves, each kept in row_leaves); column_fingerprints (hashtext of each non-NULL
-- column's canonical part) only help verify name the column that changed; txid is the writing
-- transaction's (txid_current(): 64 bits, as the purge log records it), which decides the block the
-- entry is sealed in (ledger_seal_v1).
-- No CHECK constraints: a journalled row version is written by a one-row statement, for which each
-- CHECK costs about 5 us of CPU to prepare (measured: four of them were a third of an entry's cost),
-- only the code role's functions write here, and verify checks every entry's shape itself.
CREATE TABLE ledger_journal (
    entry_id            bigint      GENERATED ALWAYS AS IDENTITY,
    table_name          text        NOT NULL,
    operation           text        NOT NULL,
    row_key             text        NOT NULL,
    row_count           integer     NOT NULL DEFAULT 1,
    rows_root           bytea       NOT NULL,
    row_leaves          bytea,
    column_fingerprints integer[],
    canon               text        NOT NULL DEFAULT 'canon-v1',
    txid                bigint      NOT NULL DEFAULT txid_current(),
    recorded_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_journal_pkey PRIMARY KEY (entry_id)
);

-- Seals and verify read the journal by transaction id range; ids are handed out nearly in the order
-- rows are appended, so a BRIN index finds a range for almost nothing at each write.
CREATE INDEX ledger_journal_txid_idx ON ledger_journal USING brin (txid);

-- The journal's own tables: only the code role writes them (through its functions); the owner role
-- reads them (verify reads as the owner role, the one application role that reads every ledger
-- table, prompt_tuner included); the auditor reads them too, but for prompt_tuner's entries, whose
-- keys would say who tunes which brain.
GRANT SELECT ON ledger_journal TO evalledger_auditor;

CREATE POLICY ledger_journal_auditor ON ledger_journal FOR SELECT TO evalledger_auditor
    USING (table_name <> 'prompt_tuner');
