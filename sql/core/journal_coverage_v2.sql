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
