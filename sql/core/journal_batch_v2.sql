-- journal_batch_v2: what one journal entry records of the rows one statement wrote (or deleted),
-- given each row's canonical key and leaf: a single row as itself (its key object, its leaf hash);
-- several as one entry whose key is the JSON array of their keys in code-point order, whose root is
-- the Merkle tree hash of their leaves in that order, and whose row_leaves keeps each leaf (32
-- bytes apiece, the same order), so any one of them still checks alone. No rows, no entry.
-- As journal_batch_v1, with the root from ledger_merkle_root_v2 (the same tree, computed faster).
CREATE FUNCTION evalledger.journal_batch_v2(keys text[], leaves bytea[])
RETURNS TABLE (row_key text, row_count integer, rows_root bytea, row_leaves bytea)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    sorted_keys text[];
    sorted_leaves bytea[];
BEGIN
    IF coalesce(cardinality(keys), 0) = 0 THEN
        RETURN;
    END IF;
    IF cardinality(keys) = 1 THEN
        row_key := keys[1];
        row_count := 1;
        rows_root := leaves[1];
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT array_agg(u.k ORDER BY u.k COLLATE "C"), array_agg(u.l ORDER BY u.k COLLATE "C"),
           string_agg(u.l, ''::bytea ORDER BY u.k COLLATE "C")
      INTO sorted_keys, sorted_leaves, row_leaves
      FROM unnest(keys, leaves) u(k, l);
    row_key := '[' || array_to_string(sorted_keys, ',') || ']';
    row_count := cardinality(sorted_keys);
    rows_root := evalledger.ledger_merkle_root_v2(sorted_leaves);
    RETURN NEXT;
END;
$$;
