-- journal_row_v2: AFTER INSERT OR UPDATE of each row of a ledger table, one journal entry for the
-- row version as it was written: the table, the primary key, the operation, and the SHA-256 leaf
-- hash of its canon-v1 form (RFC 6962: SHA-256(0x00 || canonical bytes)), with a fingerprint per
-- column (by position, NULL for NULL) so verify can name the columns that changed. An AFTER
-- trigger, so it sees the row exactly as stored (every BEFORE trigger's computed column, the
-- decision included) and never a row an ON CONFLICT skipped. SECURITY DEFINER: only the code role
-- writes the journal. It takes no lock and reads nothing but the row: entry ids come from a
-- sequence, and ordering is the seal's job.
-- The same entry as journal_row_v1's, computed where it costs least: the key, the leaf and the
-- fingerprints are each a PL/pgSQL assignment, which runs the table's inlined canon-v1 functions
-- on NEW as a simple expression, and the INSERT gets plain values. v1 called the key and
-- fingerprint functions inside its INSERT, where each field of NEW is fetched through the
-- statement's parameters: measured on the runner's writes (bench/journal.py), that was about a
-- fifth of what the journal cost them.
CREATE FUNCTION evalledger.journal_row_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    parts text[];
    row_key text;
    leaf bytea;
    fingerprints integer[];
BEGIN
    parts := evalledger.journal_parts_v1(NEW);
    row_key := evalledger.journal_key_v1(NEW);
    leaf := evalledger.journal_leaf_v1(parts);
    fingerprints := evalledger.journal_fingerprints_v1(NEW, parts);
    INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, rows_root, column_fingerprints)
    VALUES (TG_TABLE_NAME, TG_OP, row_key, leaf, fingerprints);
    RETURN NULL;
END;
$$;
