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
-- The columns of these tables in code-point order: type, kind (e: enum), array element type, whether in the primary key, type oid.
SELECT c.relname::text, a.attname::text, t.typname::text, t.typtype::text, e.typname::text,
       coalesce(a.attnum = ANY (i.indkey), false), t.oid::int
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  JOIN pg_type t ON t.oid = a.atttypid
  LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
  LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
 WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND c.relname = ANY(%(tables)s)
 ORDER BY c.relname, a.attname COLLATE "C";

-- name: catalog_tables
-- Every table of the ledger's schema (a partitioned one as itself) and its primary key's columns, from the catalog.
SELECT c.relname::text,
       ARRAY(SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
              WHERE i.indrelid = c.oid AND i.indisprimary)
  FROM pg_class c
 WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
 ORDER BY 1;

-- name: catalog_triggers
-- Every user trigger of those tables: table, name, enabled (A: always), the function it runs and its definition.
SELECT c.relname::text, g.tgname::text, g.tgenabled::text, n.nspname || '.' || p.proname, pg_get_triggerdef(g.oid)
  FROM pg_trigger g
  JOIN pg_class c ON c.oid = g.tgrelid
  JOIN pg_proc p ON p.oid = g.tgfoid
  JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT c.relispartition AND NOT g.tgisinternal;

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
-- What the retention purge says it deleted, per transaction and table (and partition dropped), by log row.
SELECT purge_log_id, txid, table_name, row_count, partition_name FROM evalledger.retention_purge_log ORDER BY purge_log_id;

-- name: holds
-- Every legal hold's scope (verify reads which held what at each deletion; the rows are checked against the journal).
SELECT hold_id, eval_run_id, target_id, held_from, held_to FROM evalledger.legal_hold;

-- name: question_runs
-- Each question row's run (verify: a reviewer's change after its run completed is refused).
SELECT question_score_id, eval_run_id FROM evalledger.brain_eval_question_score;

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

-- name: writers_open
-- Transactions of logins that may write the ledger, open longer than seconds, with what they hold back: pid (NULL: a prepared one), login, age in seconds (NULL: not visible to this login).
SELECT w.pid, w.login, extract(epoch FROM clock_timestamp() - w.xact_start)::float8
  FROM evalledger.ledger_writers_v1() w
 WHERE w.xact_start IS NULL OR w.xact_start < clock_timestamp() - make_interval(secs => %(seconds)s)
 ORDER BY w.txid;
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

-- name: code_session
-- Names in the code's definitions written in full (schema-qualified), and their constants as one session writes them (a timestamptz literal of a CHECK follows TimeZone and DateStyle, an interval IntervalStyle, a float extra_float_digits), whatever the session's own settings, until the transaction ends.
SELECT set_config('search_path', 'pg_catalog', true), set_config('TimeZone', 'UTC', true),
       set_config('DateStyle', 'ISO, MDY', true), set_config('IntervalStyle', 'postgres', true),
       set_config('extra_float_digits', '1', true), set_config('bytea_output', 'hex', true);

-- name: code_definitions
-- Every definition of the ledger's code in the ledger's schemas (evalledger, evalledger_guard): kind, name, its text as the server writes it.
WITH ns AS (SELECT n.oid, n.nspname FROM pg_namespace n WHERE n.nspname IN ('evalledger', 'evalledger_guard')),
rel AS (SELECT c.* FROM pg_class c JOIN ns ON ns.oid = c.relnamespace WHERE NOT c.relispartition)
SELECT 'function', p.oid::regprocedure::text,
       CASE WHEN p.prokind = 'a' THEN format('aggregate %s', (SELECT a::text FROM pg_aggregate a WHERE a.aggfnoid = p.oid))
            ELSE pg_get_functiondef(p.oid) END
       || E'\nowner ' || p.proowner::regrole::text || E'\nacl ' || coalesce(nullif(p.proacl, acldefault('f', p.proowner))::text, 'default')
  FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
UNION ALL
SELECT 'trigger', g.tgrelid::regclass::text || '.' || g.tgname, pg_get_triggerdef(g.oid) || E'\nenabled ' || g.tgenabled::text
  FROM pg_trigger g JOIN rel c ON c.oid = g.tgrelid WHERE NOT g.tgisinternal
UNION ALL
SELECT 'event_trigger', e.evtname::text, format('ON %s WHEN TAG IN %s EXECUTE FUNCTION %s enabled %s owner %s',
       e.evtevent, coalesce(e.evttags::text, 'any'), e.evtfoid::regprocedure, e.evtenabled, e.evtowner::regrole)
  FROM pg_event_trigger e JOIN pg_proc p ON p.oid = e.evtfoid JOIN ns ON ns.oid = p.pronamespace
UNION ALL
SELECT 'policy', y.polrelid::regclass::text || '.' || y.polname,
       format('%s FOR %s TO %s USING (%s) WITH CHECK (%s)', CASE WHEN y.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END,
              y.polcmd, (SELECT string_agg(CASE WHEN r = 0 THEN 'public' ELSE r::regrole::text END, ', ' ORDER BY 1)
                           FROM unnest(y.polroles) r),
              pg_get_expr(y.polqual, y.polrelid), pg_get_expr(y.polwithcheck, y.polrelid))
  FROM pg_policy y JOIN rel c ON c.oid = y.polrelid
UNION ALL
SELECT 'relation', c.oid::regclass::text,
       format('kind %s owner %s acl %s rls %s forced %s columns %s%s', c.relkind, c.relowner::regrole,
              coalesce(nullif(c.relacl, acldefault((CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END)::"char", c.relowner))::text, 'default'),
              c.relrowsecurity, c.relforcerowsecurity,
              coalesce((SELECT string_agg(a.attname || '=' || a.attacl::text, ', ' ORDER BY a.attname)
                          FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL), 'default'),
              CASE WHEN c.relkind IN ('v', 'm') THEN E'\n' || pg_get_viewdef(c.oid) ELSE '' END)
  FROM rel c WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
UNION ALL
SELECT 'constraint', k.conrelid::regclass::text || '.' || k.conname, pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN rel c ON c.oid = k.conrelid
UNION ALL
SELECT 'schema', ns.nspname::text, format('owner %s acl %s', n.nspowner::regrole, coalesce(nullif(n.nspacl, acldefault('n', n.nspowner))::text, 'default'))
  FROM ns JOIN pg_namespace n ON n.oid = ns.oid;

-- name: recompute_install_session
-- The package's functions go into this session's temporary schema in any order (bodies are checked when they run).
SET LOCAL check_function_bodies = off;

-- name: recompute_key_source
-- A table's canon-v1 key function body, as the package's journal_source_v1 (installed in pg_temp) writes it.
SELECT (pg_temp.journal_source_v1(%(table)s::regclass)).key;

-- name: recompute_key_function
-- A table's key function in pg_temp, its body the package's ({table}, {body}: composed by the caller).
CREATE OR REPLACE FUNCTION pg_temp.journal_key_v1(r evalledger.{table}) RETURNS text LANGUAGE sql STABLE AS {body}

-- name: recompute_package
-- Every computed column of a completed run that differs from what the package's own decision functions compute now (installed in pg_temp by recompute.py).
SELECT table_name, row_key, column_name, stored, recomputed FROM pg_temp.ledger_recompute_v3();
