-- journal_deleted_v2: AFTER DELETE, once per statement, the rows it deleted (the transition table
-- journal_old): one entry for a single row, else one entry whose key lists every row's key and
-- whose root is the RFC 6962 Merkle tree hash of their leaves (kept one by one in row_leaves), so
-- a purge of thousands of rows is one entry, and each of them still checks alone. Dynamic SQL:
-- the statement names the table's own canon-v1 functions (a transition table's rows are records,
-- cast to the table's type), and deletes are rare (only the retention purge may).
-- As journal_deleted_v1, through journal_batch_v2 (the same entries, the root computed faster).
CREATE FUNCTION evalledger.journal_deleted_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    EXECUTE format(
        'INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves) '
        'SELECT %1$L, ''DELETE'', b.row_key, b.row_count, b.rows_root, b.row_leaves '
        '  FROM (SELECT array_agg(evalledger.journal_key_v1(o.r)) AS keys, '
        '               array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(o.r))) AS leaves '
        '          FROM (SELECT x::evalledger.%1$I AS r FROM journal_old x) o) d '
        ' CROSS JOIN LATERAL evalledger.journal_batch_v2(d.keys, d.leaves) b',
        TG_TABLE_NAME);
    RETURN NULL;
END;
$$;
