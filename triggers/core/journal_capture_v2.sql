-- journal_capture_v2: captured queries are written in batches (one INSERT of up to a thousand rows),
-- so they are journalled once per statement and partition: one entry for eval_candidates whose key
-- lists each row's key and whose root is the Merkle tree hash of the rows' leaves (row_leaves keeps
-- each one, so a row still checks alone after its neighbours are purged), and one entry for the
-- eval_candidate_keys rows written for them in the same statement (by capture_dedupe_v1's nested
-- INSERT per row, which a trigger of its own would journal at the cost of a statement each; from
-- migration 0103 by capture_keys_v1, which fires first among the statement's AFTER triggers).
-- Rows are grouped by the UTC month of created_at, the partition they live in, so the purge of a
-- partition explains whole entries. Runs for INSERT, UPDATE and DELETE on the partitioned parent
-- (an UPDATE or DELETE is refused before it gets here, unless a superuser lifted the guards).
-- The entries are journal_capture_v1's; what changed is where the rows are read. v1 read new rows
-- back from the table by their keys, which cost a join, and each row a conversion from its
-- partition's row type to the parent's for every canon-v1 function it was passed to. Here they come
-- from the transition table, cast to the table's row type: the planner expands the cast into the
-- row's columns, so the inlined functions read the columns directly (with ledger_merkle_root_v2,
-- through journal_batch_v2: about a fifth less server CPU per captured row, bench/journal.py).
-- The capture keys are still read back from their table: they have no transition table here.
CREATE FUNCTION evalledger.journal_capture_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
        SELECT 'eval_candidates', TG_OP, b.row_key, b.row_count, b.rows_root, b.row_leaves
          FROM (SELECT to_char((o.r).created_at AT TIME ZONE 'UTC', 'YYYYMM') AS month,
                       array_agg(evalledger.journal_key_v1(o.r)) AS keys,
                       array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(o.r))) AS leaves
                  FROM (SELECT x::evalledger.eval_candidates AS r FROM journal_old x) o GROUP BY 1) m
         CROSS JOIN LATERAL evalledger.journal_batch_v2(m.keys, m.leaves) b
         ORDER BY m.month;
        RETURN NULL;
    END IF;
    INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
    SELECT 'eval_candidates', TG_OP, b.row_key, b.row_count, b.rows_root, b.row_leaves
      FROM (SELECT to_char((o.r).created_at AT TIME ZONE 'UTC', 'YYYYMM') AS month,
                   array_agg(evalledger.journal_key_v1(o.r)) AS keys,
                   array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(o.r))) AS leaves
              FROM (SELECT x::evalledger.eval_candidates AS r FROM journal_new x) o GROUP BY 1) m
     CROSS JOIN LATERAL evalledger.journal_batch_v2(m.keys, m.leaves) b
     ORDER BY m.month;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
        SELECT 'eval_candidate_keys', TG_OP, b.row_key, b.row_count, b.rows_root, b.row_leaves
          FROM (SELECT to_char(k.created_at AT TIME ZONE 'UTC', 'YYYYMM') AS month,
                       array_agg(evalledger.journal_key_v1(k)) AS keys,
                       array_agg(evalledger.journal_leaf_v1(evalledger.journal_parts_v1(k))) AS leaves
                  FROM evalledger.eval_candidate_keys k
                 WHERE k.capture_key IN (SELECT n.capture_key FROM journal_new n)
                 GROUP BY 1) m
         CROSS JOIN LATERAL evalledger.journal_batch_v2(m.keys, m.leaves) b
         ORDER BY m.month;
    END IF;
    RETURN NULL;
END;
$$;
