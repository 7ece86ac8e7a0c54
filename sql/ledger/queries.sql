-- The ledger's named queries (runner/evalledger/ledger/): the journal, its blocks and digests, read
-- back to be checked outside the database. Each starts with a "-- name: <name>" line and a comment
-- that says what it does (loaded by core/queries.py).

-- name: session
-- The session verify and proofs read with: values come in binary (canon.py), messages in UTC.
SET TimeZone = 'UTC';

-- name: one_snapshot
-- Read the journal, its blocks and every row in one snapshot, writing nothing.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;

-- name: identity
-- The ledger's id, the one every digest and proof names.
SELECT ledger_id FROM evalledger.ledger_identity;

-- name: columns
-- Each journalled table's columns in code-point order: type, kind (e: enum), array element type, whether in the primary key, type oid.
SELECT c.relname::text, a.attname::text, t.typname::text, t.typtype::text, e.typname::text,
       coalesce(a.attnum = ANY (i.indkey), false), t.oid::int
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  JOIN pg_type t ON t.oid = a.atttypid
  LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
  LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
 WHERE c.oid IN (SELECT j.rel FROM evalledger.journal_tables_v1() j)
 ORDER BY c.relname, a.attname COLLATE "C";

-- name: rows
-- Every row of one table, its columns in the order given ({columns}, {table}: composed by the caller).
SELECT {columns} FROM evalledger.{table}

-- name: rows_where
-- The rows of one table whose column equals a value ({columns}, {table}, {column}: composed by the caller).
SELECT {columns} FROM evalledger.{table} WHERE {column} = ANY(%(values)s)

-- name: blocks
-- Every sealed block, first to last, with what its header hashes and what it sealed.
SELECT block_id, canon, lo_txid, hi_txid, entry_count, first_entry_id, last_entry_id,
       leaves, merkle_root, previous_hash, block_hash, ledger_root, sealed_at, sealed_by::text
  FROM evalledger.ledger_block ORDER BY block_id;

-- name: entries
-- Every journal entry in entry order, with what its leaf hashes and what verify compares with the rows.
SELECT entry_id, canon, table_name, operation, row_key, row_count, rows_root, row_leaves, column_fingerprints,
       txid, recorded_at
  FROM evalledger.ledger_journal ORDER BY entry_id;

-- name: entries_of
-- The journal entries of these tables and keys, in entry order (a proof's rows).
SELECT entry_id, canon, table_name, operation, row_key, row_count, rows_root, row_leaves, column_fingerprints,
       txid, recorded_at
  FROM evalledger.ledger_journal
 WHERE table_name = ANY(%(tables)s) AND row_key = ANY(%(keys)s)
 ORDER BY entry_id;

-- name: manifest_of
-- The MANIFEST entries (a run's completion journals one) whose key lists this item: the run's own row.
SELECT entry_id, canon, table_name, operation, row_key, row_count, rows_root, row_leaves, column_fingerprints,
       txid, recorded_at
  FROM evalledger.ledger_journal
 WHERE table_name = 'brain_eval_log' AND operation = 'MANIFEST' AND strpos(row_key, %(item)s) > 0
 ORDER BY entry_id;

-- name: purges
-- What the retention purge deleted, per transaction and table (and partition dropped).
SELECT txid, table_name, row_count, partition_name FROM evalledger.retention_purge_log ORDER BY purge_log_id;

-- name: fingerprints
-- The column fingerprints of a row's canonical parts, by position (NULL for NULL), as the journal's trigger computes them.
SELECT ARRAY(SELECT hashtext(u.p) FROM unnest(%(parts)s::text[]) WITH ORDINALITY u(p, n) ORDER BY u.n);

-- name: recompute
-- Every computed column of a completed run that differs from what its suite's decision computes now.
SELECT table_name, row_key, column_name, stored, recomputed FROM evalledger.ledger_recompute_v3();

-- name: seal
-- Seal a block over the entries not yet sealed, waiting up to wait_seconds for transactions running now.
SELECT block_id, entry_count, first_entry_id, last_entry_id, block_hash, sealed_at, unsealed, held_by
  FROM evalledger.ledger_seal_v1(%(wait_seconds)s);

-- name: digest
-- Seal, then the newest block as a digest holds it (and log that a digest was taken).
SELECT ledger_id, block_id, block_hash, ledger_root, entries, sealed_at, taken_at, unsealed, held_by
  FROM evalledger.ledger_digest_v1(%(wait_seconds)s);

-- name: coverage
-- Tables the journal does not cover as it should, one row per problem.
SELECT table_name, problem FROM evalledger.journal_coverage_v2();

-- name: health
-- When the newest block was sealed and the newest digest taken, and the oldest entry not yet sealed.
SELECT (SELECT max(b.sealed_at) FROM evalledger.ledger_block b),
       (SELECT max(d.taken_at) FROM evalledger.ledger_digest d),
       (SELECT min(j.recorded_at) FROM evalledger.ledger_journal j
         WHERE j.txid >= coalesce((SELECT max(b.hi_txid) FROM evalledger.ledger_block b), 0)),
       (SELECT max(b.block_id) FROM evalledger.ledger_block b);

-- name: heads
-- The ledger's id, every block hash in order (32 bytes apiece), the entries they cover, the newest seal's time.
SELECT ledger_id, blocks, block_hashes, entries, sealed_at FROM evalledger.ledger_heads_v1();

-- name: installed
-- Whether the journal (issue 18) is installed.
SELECT to_regclass('evalledger.ledger_journal') IS NOT NULL;

-- name: run_analyses
-- The analyses a brain-eval run's question rows and harness answers point at.
SELECT q.brain_analysis_id FROM evalledger.brain_eval_question_score q WHERE q.eval_run_id = %(run)s
UNION
SELECT a.analysis_id FROM evalledger.brain_eval_harness_answer a WHERE a.eval_run_id = %(run)s;

-- name: run_rubric
-- The rubric a brain-eval run is judged by.
SELECT rubric_id FROM evalledger.brain_eval_log WHERE eval_run_id = %(run)s;
