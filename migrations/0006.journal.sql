-- Tamper evidence (issue 18): a journal of every ledger row version written by the database, blocks sealed over it as RFC 6962 Merkle trees chained by hash, digests to keep outside, and the functions verify re-derives decisions with.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- The ledger's identity and the journal
-- =============================================================================================
-- One row: the id every digest and proof names, so a digest of one ledger is never checked
-- against another.
CREATE TABLE ledger_identity (
    ledger_id  uuid        NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_identity_pkey PRIMARY KEY (ledger_id)
);
CREATE UNIQUE INDEX ledger_identity_one_row ON ledger_identity ((true));
INSERT INTO ledger_identity DEFAULT VALUES;

-- One row per row version of a ledger table (or per statement and partition for captured queries,
-- and for multi-row deletes): what journal_row_v1, journal_deleted_v1 and journal_capture_v1 write,
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

-- Every digest taken (the digest itself is kept outside): doctor warns when none is recent.
CREATE TABLE ledger_digest (
    digest_id bigint      GENERATED ALWAYS AS IDENTITY,
    block_id  bigint      NOT NULL,
    taken_at  timestamptz NOT NULL DEFAULT now(),
    taken_by  name        NOT NULL DEFAULT session_user,
    CONSTRAINT ledger_digest_pkey PRIMARY KEY (digest_id),
    CONSTRAINT ledger_digest_block_fkey FOREIGN KEY (block_id) REFERENCES ledger_block (block_id)
);

-- =============================================================================================
-- canon-v1, the journal triggers, the seal, digests and the recompute entry points
-- =============================================================================================
\ir ../sql/core/journal_refuse_v1.sql
\ir ../sql/core/journal_timestamp_v1.sql
\ir ../sql/core/journal_date_v1.sql
\ir ../sql/core/journal_number_v1.sql
\ir ../sql/core/journal_float_v1.sql
\ir ../sql/core/journal_exempt_v1.sql
\ir ../sql/core/journal_tables_v1.sql
\ir ../sql/core/journal_source_v1.sql
\ir ../sql/core/journal_leaf_v1.sql
\ir ../sql/core/ledger_merkle_root_v1.sql
\ir ../sql/core/journal_batch_v1.sql
\ir ../triggers/core/journal_row_v1.sql
\ir ../triggers/core/journal_deleted_v1.sql
\ir ../triggers/core/journal_capture_v1.sql
\ir ../sql/core/journal_attach_v1.sql
\ir ../sql/core/journal_coverage_v1.sql
\ir ../sql/core/ledger_entry_text_v1.sql
\ir ../sql/core/ledger_block_text_v1.sql
\ir ../sql/core/ledger_seal_v1.sql
\ir ../sql/core/ledger_digest_v1.sql
\ir ../sql/core/ledger_recompute_brain_eval_v1.sql
\ir ../sql/core/ledger_recompute_question_v1.sql
\ir ../sql/core/ledger_recompute_takes_quality_v1.sql
\ir ../sql/core/ledger_recompute_work_quality_v1.sql

-- =============================================================================================
-- The journal's own tables: append-only, row-level security, read by the auditor and the owner
-- =============================================================================================
CALL guard_append_only_v1(ARRAY[
    'ledger_identity:UPDATE OR DELETE:refuse_change_v2', 'ledger_journal:UPDATE OR DELETE:refuse_change_v2',
    'ledger_block:UPDATE OR DELETE:refuse_change_v2', 'ledger_digest:UPDATE OR DELETE:refuse_change_v2']);
CALL seal_tables_v1();
-- Only the code role writes them (through the functions above); the owner role, which
-- seal_tables_v1 gives the DML of every table, reads them (verify reads as the owner role, the
-- one application role that reads every ledger table, prompt_tuner included); the auditor reads
-- them too, but for prompt_tuner's entries, whose keys would say who tunes which brain.
REVOKE ALL ON ledger_identity, ledger_journal, ledger_block, ledger_digest FROM evalledger_owner;
GRANT SELECT ON ledger_identity, ledger_journal, ledger_block, ledger_digest TO evalledger_owner, evalledger_auditor;
CREATE POLICY ledger_identity_auditor ON ledger_identity FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY ledger_journal_auditor ON ledger_journal FOR SELECT TO evalledger_auditor
    USING (table_name <> 'prompt_tuner');
CREATE POLICY ledger_block_auditor ON ledger_block FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY ledger_digest_auditor ON ledger_digest FOR SELECT TO evalledger_auditor USING (true);

-- =============================================================================================
-- Journal every ledger table (and the rows already in them, as BASELINE entries)
-- =============================================================================================
CALL journal_attach_v1();
-- Compares the suites' runs by the keys the journal gives them: after the key functions exist.
\ir ../sql/core/ledger_recompute_v1.sql

-- =============================================================================================
-- Functions: who may seal, digest, recompute and ask what the journal does not cover
-- =============================================================================================
REVOKE EXECUTE ON PROCEDURE journal_attach_v1() FROM PUBLIC;
-- Completion (the runner), the purge (the retention role), digests (the auditor, the owner) seal.
GRANT EXECUTE ON FUNCTION ledger_seal_v1(double precision)
    TO evalledger_runner, evalledger_owner, evalledger_retention, evalledger_auditor;
GRANT EXECUTE ON FUNCTION ledger_digest_v1(double precision), ledger_recompute_v1(), journal_coverage_v1(),
    journal_exempt_v1(text), journal_tables_v1() TO evalledger_owner, evalledger_auditor;

RESET ROLE;
