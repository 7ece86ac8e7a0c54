-- journal_batch_v1: what one journal entry records of the rows one statement wrote (or deleted):
-- a single row as itself (its key object, its leaf hash, its column fingerprints); several as
-- one entry whose key is the JSON array of their keys in code-point order, whose root is the
-- Merkle tree hash of their leaves in that order, and whose row_leaves keeps each leaf (32 bytes
-- apiece, the same order), so any one of them still checks alone. No rows, no entry.
CREATE FUNCTION evalledger.journal_batch_v1(batch evalledger.journal_row[])
RETURNS TABLE (row_key text, row_count integer, rows_root bytea, row_leaves bytea, column_fingerprints integer[])
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    keys text[];
    leaves bytea[];
BEGIN
    IF coalesce(cardinality(batch), 0) = 0 THEN
        RETURN;
    END IF;
    IF cardinality(batch) = 1 THEN
        row_key := batch[1].key;
        row_count := 1;
        rows_root := evalledger.journal_leaf_v1(batch[1].parts);
        column_fingerprints := ARRAY(SELECT hashtext(p) FROM unnest(batch[1].parts) p WHERE p IS NOT NULL);
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT array_agg(b.key ORDER BY b.key COLLATE "C"), array_agg(evalledger.journal_leaf_v1(b.parts) ORDER BY b.key COLLATE "C")
      INTO keys, leaves
      FROM unnest(batch) b;
    row_key := '[' || array_to_string(keys, ',') || ']';
    row_count := cardinality(keys);
    rows_root := evalledger.ledger_merkle_root_v1(leaves);
    row_leaves := (SELECT string_agg(u.leaf, ''::bytea ORDER BY u.n) FROM unnest(leaves) WITH ORDINALITY u(leaf, n));
    column_fingerprints := NULL;
    RETURN NEXT;
END;
$$;
