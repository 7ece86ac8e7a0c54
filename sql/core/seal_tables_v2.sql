-- seal_tables_v2: idempotent, so every migration calls it; each ledger table (partitions aside)
-- not yet under row-level security gets it enabled and FORCEd, its <t>_owner_all and <t>_code_all
-- policies where missing and the owner role's SELECT (no more: a migration grants INSERT on a
-- registry the owner role maintains; UPDATE, DELETE or TRUNCATE would let it LOCK the table
-- against every reader, issue 17); every trigger turns ENABLE ALWAYS in that same ALTER TABLE,
-- since the DDL guard checks both on the table each ALTER TABLE leaves.
CREATE PROCEDURE evalledger.seal_tables_v2()
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.relname, NOT c.relrowsecurity AS fresh,
                    (SELECT string_agg(format(', ENABLE ALWAYS TRIGGER %I', tg.tgname), '' ORDER BY tg.tgname)
                       FROM pg_trigger tg WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal) AS always
               FROM pg_class c
              WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                AND (NOT (c.relrowsecurity AND c.relforcerowsecurity)
                     OR EXISTS (SELECT 1 FROM pg_trigger tg
                                 WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal AND tg.tgenabled <> 'A'))
              ORDER BY c.relname LOOP
        EXECUTE format('ALTER TABLE evalledger.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY%s',
                       t.relname, coalesce(t.always, ''));
        CONTINUE WHEN NOT t.fresh;
        IF NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = format('evalledger.%I', t.relname)::regclass
                                                   AND p.polname = t.relname || '_owner_all') THEN
            EXECUTE format('CREATE POLICY %I ON evalledger.%I TO evalledger_owner USING (true) WITH CHECK (true)',
                           t.relname || '_owner_all', t.relname);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = format('evalledger.%I', t.relname)::regclass
                                                   AND p.polname = t.relname || '_code_all') THEN
            EXECUTE format('CREATE POLICY %I ON evalledger.%I TO evalledger_code USING (true) WITH CHECK (true)',
                           t.relname || '_code_all', t.relname);
        END IF;
        EXECUTE format('GRANT SELECT ON evalledger.%I TO evalledger_owner', t.relname);
    END LOOP;
END;
$$;

-- Migrations' own steps (the role they act as owns them): no one else runs them.
REVOKE EXECUTE ON PROCEDURE seal_tables_v2() FROM PUBLIC;
