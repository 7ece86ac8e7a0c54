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

-- A migration's own step (the role it acts as owns it): no one else runs it.
REVOKE EXECUTE ON PROCEDURE journal_attach_v2() FROM PUBLIC;
