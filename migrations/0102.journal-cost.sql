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

-- ledger_merkle_root_v2: RFC 6962's Merkle tree hash of leaf hashes given in order, as
-- ledger_merkle_root_v1 computes it (pairs of adjacent nodes hashed as SHA-256(0x01 || left ||
-- right), an odd node at the end of a level carried up unchanged, until one is left; the empty
-- tree is SHA-256 of nothing), in a loop over each level's array instead of a query per level
-- that numbered, grouped and re-aggregated its nodes: about half the time for a capture batch of
-- a thousand rows, whose root every batch computes twice (its rows and their capture keys).
-- test_the_merkle_roots_are_rfc_6962s holds both equal to check.py's.
CREATE FUNCTION evalledger.ledger_merkle_root_v2(leaves bytea[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    level bytea[] := leaves;
    next bytea[];
    n integer := coalesce(cardinality(leaves), 0);
    i integer;
BEGIN
    IF n = 0 THEN
        RETURN sha256(''::bytea);
    END IF;
    WHILE n > 1 LOOP
        next := '{}';
        i := 1;
        WHILE i < n LOOP
            next := next || sha256('\x01'::bytea || level[i] || level[i + 1]);
            i := i + 2;
        END LOOP;
        IF i = n THEN
            next := next || level[n];
        END IF;
        level := next;
        n := cardinality(level);
    END LOOP;
    RETURN level[1];
END;
$$;

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

-- journal_attach_v2: journal every table of the ledger's schema but the exempt ones
-- (journal_exempt_v1): its canon-v1 functions journal_parts_v1(row), journal_key_v1(row) and
-- journal_fingerprints_v1(row, parts),
-- generated from its columns (journal_source_v1), and its journal triggers, ENABLE ALWAYS.
-- Idempotent, so every migration that adds or reshapes a table calls it. Where a table's
-- functions are new or its columns changed, every row it holds gets a BASELINE entry: the row as
-- it stands when the journal first covers it (or when a migration reshaped it), so verify checks
-- rows written before the journal existed too, from then on.
--   every table:          <t>_90_journal         AFTER INSERT OR UPDATE, each row (journal_row_v2)
--                         <t>_90_journal_delete  AFTER DELETE, each statement (journal_deleted_v2)
--   eval_candidates:      <t>_90_journal_insert, _update, _delete, each statement (journal_capture_v2),
--                         which also journals the eval_candidate_keys rows the INSERT made;
--   eval_candidate_keys:  <t>_90_journal for UPDATE only, its INSERTs journalled as just said.
-- journal_attach_v1's procedure, attaching the v2 trigger functions (migration 0102, which made the
-- journal cheaper for its writers and left every entry as it was).
CREATE PROCEDURE evalledger.journal_attach_v2()
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
    src record;
    current_parts text;
    always text;
BEGIN
    FOR t IN SELECT j.rel AS oid, j.table_name AS name, j.row_type AS reltype FROM evalledger.journal_tables_v1() j LOOP
        src := evalledger.journal_source_v1(t.oid);
        SELECT p.prosrc INTO current_parts FROM pg_proc p
         WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_parts_v1'
           AND p.proargtypes[0] = t.reltype;
        IF current_parts IS DISTINCT FROM src.parts THEN
            EXECUTE format('CREATE OR REPLACE FUNCTION evalledger.journal_parts_v1(r evalledger.%I) RETURNS text[] '
                           'LANGUAGE sql STABLE PARALLEL SAFE AS %L', t.name, src.parts);
            EXECUTE format('CREATE OR REPLACE FUNCTION evalledger.journal_key_v1(r evalledger.%I) RETURNS text '
                           'LANGUAGE sql STABLE PARALLEL SAFE AS %L', t.name, src.key);
            EXECUTE format('CREATE OR REPLACE FUNCTION evalledger.journal_fingerprints_v1(r evalledger.%I, parts text[]) '
                           'RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L', t.name, src.fingerprints);
            EXECUTE format('REVOKE EXECUTE ON FUNCTION evalledger.journal_parts_v1(evalledger.%1$I), '
                           'evalledger.journal_key_v1(evalledger.%1$I), '
                           'evalledger.journal_fingerprints_v1(evalledger.%1$I, text[]) FROM PUBLIC', t.name);
        END IF;

        IF t.name = 'eval_candidates' THEN
            EXECUTE 'CREATE OR REPLACE TRIGGER eval_candidates_90_journal_insert AFTER INSERT ON evalledger.eval_candidates '
                    'REFERENCING NEW TABLE AS journal_new FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_capture_v2()';
            EXECUTE 'CREATE OR REPLACE TRIGGER eval_candidates_90_journal_update AFTER UPDATE ON evalledger.eval_candidates '
                    'REFERENCING NEW TABLE AS journal_new FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_capture_v2()';
            EXECUTE 'CREATE OR REPLACE TRIGGER eval_candidates_90_journal_delete AFTER DELETE ON evalledger.eval_candidates '
                    'REFERENCING OLD TABLE AS journal_old FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_capture_v2()';
        ELSE
            EXECUTE format('CREATE OR REPLACE TRIGGER %I AFTER %s ON evalledger.%I '
                           'FOR EACH ROW EXECUTE FUNCTION evalledger.journal_row_v2()',
                           t.name || '_90_journal',
                           CASE WHEN t.name = 'eval_candidate_keys' THEN 'UPDATE' ELSE 'INSERT OR UPDATE' END, t.name);
            EXECUTE format('CREATE OR REPLACE TRIGGER %I AFTER DELETE ON evalledger.%I '
                           'REFERENCING OLD TABLE AS journal_old FOR EACH STATEMENT EXECUTE FUNCTION evalledger.journal_deleted_v2()',
                           t.name || '_90_journal_delete', t.name);
        END IF;
        SELECT string_agg(format('ENABLE ALWAYS TRIGGER %I', g.tgname), ', ' ORDER BY g.tgname) INTO always
          FROM pg_trigger g WHERE g.tgrelid = t.oid AND NOT g.tgisinternal;
        EXECUTE format('ALTER TABLE evalledger.%I %s', t.name, always);

        IF current_parts IS DISTINCT FROM src.parts THEN
            EXECUTE format('INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, rows_root, column_fingerprints) '
                           'SELECT %1$L, ''BASELINE'', evalledger.journal_key_v1(r), evalledger.journal_leaf_v1(p.parts), '
                           '       evalledger.journal_fingerprints_v1(r, p.parts) '
                           '  FROM evalledger.%1$I r CROSS JOIN LATERAL (SELECT evalledger.journal_parts_v1(r) AS parts) p '
                           ' ORDER BY evalledger.journal_key_v1(r) COLLATE "C"', t.name);
        END IF;
    END LOOP;
END;
$$;

-- journal_coverage_v2: what keeps the journal from covering a table of the ledger's schema, one
-- row per problem (none: every table is journalled as journal_attach_v2 journals it): a table
-- without its journal triggers, one whose trigger is not ENABLE ALWAYS or runs another function,
-- or one whose canon-v1 functions no longer match its columns. A migration that adds or changes
-- a table and does not CALL journal_attach_v2() shows here, in doctor, and in the tests.
-- journal_coverage_v1's checks, for the trigger functions journal_attach_v2 attaches.
CREATE FUNCTION evalledger.journal_coverage_v2()
RETURNS TABLE (table_name text, problem text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
    want record;
    found record;
    src record;
BEGIN
    FOR t IN SELECT j.rel AS oid, j.table_name AS name, j.row_type AS reltype FROM evalledger.journal_tables_v1() j LOOP
        table_name := t.name;
        FOR want IN
            SELECT w.tgname, w.fn, w.events, w.per_row
              FROM (VALUES (t.name || '_90_journal', 'journal_row_v2',
                            CASE WHEN t.name = 'eval_candidate_keys' THEN 'UPDATE' ELSE 'INSERT OR UPDATE' END, true),
                           (t.name || '_90_journal_delete', 'journal_deleted_v2', 'DELETE', false)) w(tgname, fn, events, per_row)
             WHERE t.name <> 'eval_candidates'
            UNION ALL
            SELECT 'eval_candidates_90_journal_' || lower(e), 'journal_capture_v2', e, false
              FROM unnest(ARRAY['INSERT', 'UPDATE', 'DELETE']) e WHERE t.name = 'eval_candidates'
        LOOP
            SELECT g.tgenabled, g.tgfoid::regproc::text AS fn, pg_get_triggerdef(g.oid) AS def INTO found
              FROM pg_trigger g WHERE g.tgrelid = t.oid AND g.tgname = want.tgname;
            IF found.def IS NULL THEN
                problem := format('no journal trigger %s (CALL evalledger.journal_attach_v2() in the migration that made it)',
                                  want.tgname);
                RETURN NEXT;
            ELSIF found.fn <> 'evalledger.' || want.fn
                  OR found.def NOT LIKE format('%% AFTER %s ON %%', want.events)
                  OR (found.def LIKE '% FOR EACH ROW %') <> want.per_row THEN
                problem := format('journal trigger %s is not AFTER %s FOR EACH %s EXECUTE FUNCTION evalledger.%s()',
                                  want.tgname, want.events, CASE WHEN want.per_row THEN 'ROW' ELSE 'STATEMENT' END, want.fn);
                RETURN NEXT;
            ELSIF found.tgenabled <> 'A' THEN
                problem := format('journal trigger %s is not ENABLE ALWAYS', want.tgname);
                RETURN NEXT;
            END IF;
        END LOOP;
        BEGIN
            src := evalledger.journal_source_v1(t.oid);
        EXCEPTION WHEN feature_not_supported THEN
            problem := SQLERRM;
            RETURN NEXT;
            CONTINUE;
        END;
        IF NOT EXISTS (SELECT 1 FROM pg_proc p
                        WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_parts_v1'
                          AND p.proargtypes[0] = t.reltype AND p.prosrc = src.parts)
           OR NOT EXISTS (SELECT 1 FROM pg_proc p
                           WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_key_v1'
                             AND p.proargtypes[0] = t.reltype AND p.prosrc = src.key)
           OR NOT EXISTS (SELECT 1 FROM pg_proc p
                           WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proname = 'journal_fingerprints_v1'
                             AND p.proargtypes[0] = t.reltype AND p.prosrc = src.fingerprints) THEN
            problem := 'its canon-v1 functions do not match its columns (CALL evalledger.journal_attach_v2())';
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;

GRANT EXECUTE ON FUNCTION journal_coverage_v2() TO evalledger_owner, evalledger_auditor;

CALL journal_attach_v2();
REVOKE EXECUTE ON PROCEDURE journal_attach_v2() FROM PUBLIC;

-- The versions replaced, dropped past the drop guard (steps/drop_guard_off.sql says how).
-- For a migration that drops a function, trigger or constraint of the ledger, which the drop guard
-- refuses: its owner, the superuser who installed it, turns it off here, inside the migration's
-- transaction (where no superuser installed there is no drop guard), and drop_guard_on.sql turns
-- it back on before the migration ends. The session acts as the code role after this.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

DROP PROCEDURE journal_attach_v1();
DROP FUNCTION journal_coverage_v1();
DROP FUNCTION journal_row_v1();
DROP FUNCTION journal_deleted_v1();
DROP FUNCTION journal_capture_v1();
DROP FUNCTION journal_batch_v1(text[], bytea[]);
-- The drop guard back on, after the drops drop_guard_off.sql let through (see it).
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
