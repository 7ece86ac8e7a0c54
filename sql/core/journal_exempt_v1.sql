-- journal_exempt_v1: the tables of the ledger's schema that carry no journal trigger, and why.
-- Every other table does, or journal_coverage_v2 names it (and its test fails): a table added by
-- a later migration is journalled by CALL journal_attach_v2() in that migration.
--   ledger_journal, ledger_block, ledger_digest, ledger_identity: the journal itself, its blocks
--     (chained and covered by the digests kept outside), the digests taken, the ledger's id;
--   capture_purge_marker, retention_purge_marker: a purge's own transaction id, deleted before
--     the purge returns, so never a row anyone reads;
--   capture_window: the capture writers' lock, a table that holds no row (its CHECK is false).
CREATE FUNCTION evalledger.journal_exempt_v1(table_name text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT table_name IN ('ledger_journal', 'ledger_block', 'ledger_digest', 'ledger_identity',
                          'capture_purge_marker', 'retention_purge_marker', 'capture_window')
$$;
GRANT EXECUTE ON FUNCTION journal_exempt_v1(text) TO evalledger_owner, evalledger_auditor;
