-- ddl_guard_v1: after an ALTER TABLE or CREATE TRIGGER touching a ledger table (a table of schema
-- evalledger, or one carrying the ledger's triggers elsewhere), that table must still be in
-- schema evalledger, keep its partitions, have row-level security enabled and forced, and run
-- only ENABLE ALWAYS triggers whose functions belong to whoever installed this guard: so the
-- owner role can neither switch a guard off nor swap in a function of its own. Checking the
-- resulting state, not the statement's text, catches every spelling. The ENABLE ALWAYS and RLS
-- states are checked after ALTER TABLE only: a new table or trigger is born without them, and
-- the ALTER TABLE that follows its creation is what this then checks.
CREATE FUNCTION evalledger_guard.ddl_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    installer oid := (SELECT e.evtowner FROM pg_event_trigger e WHERE e.evtname = 'evalledger_ddl_guard_v1');
    touched oid[];
    offence text;
BEGIN
    SELECT array_agg(DISTINCT CASE WHEN c.classid = 'pg_trigger'::regclass
                                   THEN (SELECT t.tgrelid FROM pg_trigger t WHERE t.oid = c.objid)
                                   ELSE c.objid END)
      INTO touched
      FROM pg_event_trigger_ddl_commands() c
     WHERE c.classid IN ('pg_class'::regclass, 'pg_trigger'::regclass);
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

    IF current_query() ~* '\mDETACH\s+PARTITION\M' THEN
        RAISE EXCEPTION 'evalledger: DETACH PARTITION refused on a ledger table'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'partitions leave only through the retention purge';
    END IF;

    SELECT format('%s on %s runs %s, owned by %s', t.tgname, c.relname, t.tgfoid::regprocedure,
                  pg_get_userbyid(p.proowner))
      INTO offence
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE c.oid = ANY (touched) AND NOT t.tgisinternal AND p.proowner <> installer
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger triggers run the installer''s functions: trigger %', offence
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'create trigger functions as the user who migrates, not as evalledger_owner';
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
