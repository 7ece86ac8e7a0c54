-- ddl_guard_v1: at the end of every DDL command (every tag: the event trigger has no WHEN filter),
-- an allow-list. On the ledger's objects (schema evalledger or evalledger_guard, a rule, policy or
-- trigger on one of its tables, and any GRANT, REVOKE or ALTER DEFAULT PRIVILEGES, whose target
-- the event does not name) a session that is not a superuser's may run only what the code role's
-- definer functions run: CREATE TABLE, CREATE TRIGGER, CREATE INDEX and ALTER TABLE on a capture
-- partition, as the code role that owns the schema; everything else is refused. For every session, the
-- superuser's included, each ledger table touched must then still be the code role's, permanent
-- (no UNLOGGED), in schema evalledger, without rules, with its partitions, row-level security
-- enabled and forced, and only ENABLE ALWAYS triggers that run the code role's functions.
-- Checking the resulting state catches every spelling; ownership, ENABLE ALWAYS and RLS are
-- checked after ALTER TABLE only: a new table or trigger is born without them, and the ALTER
-- TABLE that follows its creation is what this then checks.
CREATE FUNCTION evalledger_guard.ddl_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    code oid := (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'evalledger');
    command record;
    touched oid[];
    offence text;
BEGIN
    IF code IS NULL THEN
        RETURN;
    END IF;
    IF NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user) THEN
        SELECT c.command_tag || coalesce(' ' || c.object_identity, '') INTO offence
          FROM pg_event_trigger_ddl_commands() c
         WHERE (c.schema_name IN ('evalledger', 'evalledger_guard')
                OR c.object_identity ~ ' on evalledger\.'
                OR c.command_tag IN ('GRANT', 'REVOKE', 'ALTER DEFAULT PRIVILEGES'))
           AND NOT (current_user = code::regrole::name
                    AND c.command_tag IN ('CREATE TABLE', 'CREATE TRIGGER', 'CREATE INDEX', 'ALTER TABLE')
                    AND c.object_identity ~ '(^| on )evalledger\.eval_candidates_p[0-9]{6}($|_)')
         LIMIT 1;
        IF offence IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: DDL refused on the ledger: %', offence
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'the ledger''s schema changes only through `evalledger db migrate`';
        END IF;
    END IF;

    SELECT array_agg(DISTINCT CASE c.classid
                                WHEN 'pg_trigger'::regclass THEN (SELECT t.tgrelid FROM pg_trigger t WHERE t.oid = c.objid)
                                WHEN 'pg_rewrite'::regclass THEN (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = c.objid)
                                WHEN 'pg_policy'::regclass THEN (SELECT p.polrelid FROM pg_policy p WHERE p.oid = c.objid)
                                ELSE c.objid END)
      INTO touched
      FROM pg_event_trigger_ddl_commands() c
     WHERE c.classid IN ('pg_class'::regclass, 'pg_trigger'::regclass, 'pg_rewrite'::regclass, 'pg_policy'::regclass);
    SELECT array_agg(r.oid) INTO touched
      FROM pg_class r
     WHERE r.oid = ANY (touched) AND r.relkind IN ('r', 'p')
       AND (r.relnamespace = 'evalledger'::regnamespace
            OR EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
                        WHERE t.tgrelid = r.oid AND p.pronamespace = 'evalledger'::regnamespace));
    IF touched IS NULL THEN
        RETURN;
    END IF;

    SELECT format('%I.%I', r.relnamespace::regnamespace, r.relname) INTO offence
      FROM pg_class r WHERE r.oid = ANY (touched) AND r.relnamespace <> 'evalledger'::regnamespace LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger table % stays in schema evalledger', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT format('%s is owned by %s', r.relname, pg_get_userbyid(r.relowner)) INTO offence
      FROM pg_class r WHERE r.oid = ANY (touched) AND r.relowner <> code AND TG_TAG = 'ALTER TABLE' LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger tables stay the code role''s: %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT r.relname INTO offence
      FROM pg_class r WHERE r.oid = ANY (touched) AND r.relpersistence <> 'p' LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger table % stays logged: a crash must not lose it', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT format('%s on %s', w.rulename, r.relname) INTO offence
      FROM pg_rewrite w JOIN pg_class r ON r.oid = w.ev_class WHERE r.oid = ANY (touched) LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: no rule rewrites a write to a ledger table: rule %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    IF current_query() ~* '\mDETACH\s+PARTITION\M' THEN
        RAISE EXCEPTION 'evalledger: DETACH PARTITION refused on a ledger table'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'partitions leave only through the retention purge';
    END IF;

    SELECT format('%s on %s runs %s, owned by %s', t.tgname, c.relname, t.tgfoid::regprocedure,
                  pg_get_userbyid(p.proowner))
      INTO offence
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE c.oid = ANY (touched) AND NOT t.tgisinternal AND p.proowner <> code
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger triggers run the code role''s functions: trigger %', offence
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'create trigger functions in a migration, acting as evalledger_code';
    END IF;

    SELECT format('%s on %s is %s', t.tgname, c.relname,
                  CASE t.tgenabled WHEN 'D' THEN 'disabled' WHEN 'R' THEN 'replica-only' ELSE 'origin-only' END)
      INTO offence
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.oid = ANY (touched) AND NOT t.tgisinternal AND t.tgenabled <> 'A'
       AND TG_TAG = 'ALTER TABLE'
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger guards stay ENABLE ALWAYS: trigger %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT r.relname INTO offence
      FROM pg_class r
     WHERE r.oid = ANY (touched) AND NOT (r.relrowsecurity AND r.relforcerowsecurity)
       AND TG_TAG = 'ALTER TABLE'
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: row level security stays enabled and forced on %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END;
$$;
REVOKE EXECUTE ON FUNCTION evalledger_guard.ddl_guard_v1() FROM PUBLIC;

-- Where the migrating user is a superuser, the event triggers refuse DDL on the ledger that no
-- migration runs (docs/guards.md). Elsewhere (managed servers) there are none, and the installer,
-- a member of the code role, could lift any guard: `evalledger doctor` says which are missing.
DO $install$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'evalledger: not a superuser: guard event triggers not installed';
        RETURN;
    END IF;
    CREATE EVENT TRIGGER evalledger_ddl_guard_v1 ON ddl_command_end
        EXECUTE FUNCTION evalledger_guard.ddl_guard_v1();
    ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS;
END
$install$;
