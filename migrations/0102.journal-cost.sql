-- The journal costs its writers less (issue 18's last aim), every entry what it was: the same
-- canon-v1 bytes, leaf, key and fingerprints of every row version, hashed inside the writing
-- transaction. journal_row_v2 computes an entry in PL/pgSQL assignments and inserts plain values;
-- journal_capture_v2 reads a batch's rows from its transition table instead of back from the table;
-- batches and multi-row deletes take their Merkle roots from ledger_merkle_root_v2 (through
-- journal_batch_v2 and journal_deleted_v2). journal_attach_v2 puts every journal trigger on them
-- (no table's canonical form changes, so no BASELINE entry is written) and journal_coverage_v2
-- checks for them. The versions they replace are dropped; the seal keeps ledger_merkle_root_v1.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

\ir ../sql/core/ledger_merkle_root_v2.sql
\ir ../sql/core/journal_batch_v2.sql
\ir ../triggers/core/journal_row_v2.sql
\ir ../triggers/core/journal_deleted_v2.sql
\ir ../triggers/core/journal_capture_v2.sql
\ir ../sql/core/journal_attach_v2.sql
\ir ../sql/core/journal_coverage_v2.sql
GRANT EXECUTE ON FUNCTION journal_coverage_v2() TO evalledger_owner, evalledger_auditor;

CALL journal_attach_v2();
REVOKE EXECUTE ON PROCEDURE journal_attach_v2() FROM PUBLIC;

-- The versions replaced, dropped past the drop guard (steps/drop_guard_off.sql says how).
\ir steps/drop_guard_off.sql
DROP PROCEDURE journal_attach_v1();
DROP FUNCTION journal_coverage_v1();
DROP FUNCTION journal_row_v1();
DROP FUNCTION journal_deleted_v1();
DROP FUNCTION journal_capture_v1();
DROP FUNCTION journal_batch_v1(text[], bytea[]);
\ir steps/drop_guard_on.sql
