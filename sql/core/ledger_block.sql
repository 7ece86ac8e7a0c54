-- One row per sealed block: the entries of the transactions in [lo_txid, hi_txid), in entry order,
-- their leaves, their Merkle root, the header hash chained to the block before, and the ledger
-- root over every block hash so far (with the frontier of perfect subtrees the next seal extends).
CREATE TABLE ledger_block (
    block_id        bigint      NOT NULL,
    canon           text        NOT NULL,
    lo_txid         bigint      NOT NULL,
    hi_txid         bigint      NOT NULL,
    entry_count     bigint      NOT NULL,
    first_entry_id  bigint      NOT NULL,
    last_entry_id   bigint      NOT NULL,
    leaves          bytea       NOT NULL,
    merkle_root     bytea       NOT NULL,
    previous_hash   bytea       NOT NULL,
    block_hash      bytea       NOT NULL,
    ledger_root     bytea       NOT NULL,
    ledger_frontier bytea[]     NOT NULL,
    sealed_at       timestamptz NOT NULL,
    sealed_by       name        NOT NULL,
    CONSTRAINT ledger_block_pkey PRIMARY KEY (block_id),
    CONSTRAINT ledger_block_canon_known CHECK (canon = 'canon-v1'),
    CONSTRAINT ledger_block_number_positive CHECK (block_id >= 1),
    CONSTRAINT ledger_block_range_ordered CHECK (lo_txid < hi_txid),
    CONSTRAINT ledger_block_not_empty CHECK (entry_count >= 1 AND first_entry_id <= last_entry_id),
    CONSTRAINT ledger_block_a_leaf_per_entry CHECK (octet_length(leaves) = 32 * entry_count),
    CONSTRAINT ledger_block_hashes_are_sha256 CHECK (
        octet_length(merkle_root) = 32 AND octet_length(previous_hash) = 32 AND octet_length(block_hash) = 32
        AND octet_length(ledger_root) = 32)
);

-- The journal's own tables: only the code role writes them (through its functions); the owner role
-- reads them (verify reads as the owner role, the one application role that reads every ledger
-- table, prompt_tuner included); the auditor reads them too, but for prompt_tuner's entries, whose
-- keys would say who tunes which brain.
GRANT SELECT ON ledger_block TO evalledger_auditor;

CREATE POLICY ledger_block_auditor ON ledger_block FOR SELECT TO evalledger_auditor USING (true);
