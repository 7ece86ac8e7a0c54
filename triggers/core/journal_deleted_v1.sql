-- journal_deleted_v1: AFTER DELETE, once per statement, the rows it deleted (the transition table
-- journal_old): one entry for a single row, else one entry whose key lists every row's key and
-- whose root is the RFC 6962 Merkle tree hash of their leaves (kept one by one in row_leaves), so
-- a purge of thousands of rows is one entry, and each of them still checks alone. Dynamic SQL:
-- the statement names the table's own canon-v1 functions, and deletes are rare (only the
-- retention purge may).
CREATE FUNCTION evalledger.journal_deleted_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    EXECUTE format(
        'INSERT INTO evalledger.ledger_journal '
        '       (table_name, operation, row_key, row_count, rows_root, row_leaves, column_fingerprints) '
        'SELECT %1$L, ''DELETE'', b.row_key, b.row_count, b.rows_root, b.row_leaves, b.column_fingerprints '
        '  FROM evalledger.journal_batch_v1(ARRAY(SELECT ROW(evalledger.journal_key_v1(o::evalledger.%1$I), '
        '                                                evalledger.journal_parts_v1(o::evalledger.%1$I))::evalledger.journal_row '
        '                                           FROM journal_old o)) b',
        TG_TABLE_NAME);
    RETURN NULL;
END;
$$;
