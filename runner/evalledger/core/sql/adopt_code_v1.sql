-- adopt_code_v1: a function that `evalledger db migrate` creates in schema evalledger while the
-- migration acts as evalledger_owner (SET LOCAL ROLE, as migrations do) becomes the installer's
-- at once, like all ledger code: the owner role can then never redefine it, and the DDL guard
-- accepts the triggers that run it. The owner keeps EXECUTE WITH GRANT OPTION (what it had as
-- creator, less the right to redefine), so the migration's own GRANT lines still work. Only a
-- superuser session that holds the migration lock (core/migrate.py, ADVISORY_LOCK_KEY: classid
-- and objid are its high and low 32 bits) is served: anyone else acting as the owner role keeps
-- what it creates, and the DDL guard refuses a trigger that runs it.
CREATE FUNCTION evalledger_guard.adopt_code_v1() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    installer oid := (SELECT e.evtowner FROM pg_event_trigger e WHERE e.evtname = 'evalledger_adopt_code_v1');
    f regprocedure;
BEGIN
    IF NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user)
       OR NOT EXISTS (SELECT 1 FROM pg_locks l
                       WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
                         AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                         AND l.classid = 1702257004 AND l.objid = 1818584167 AND l.objsubid = 1) THEN
        RETURN;
    END IF;
    FOR f IN SELECT p.oid::regprocedure
               FROM pg_event_trigger_ddl_commands() c JOIN pg_proc p ON p.oid = c.objid
              WHERE c.classid = 'pg_proc'::regclass AND p.pronamespace = 'evalledger'::regnamespace
                AND p.proowner <> installer LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', f, pg_get_userbyid(installer));
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO evalledger_owner WITH GRANT OPTION', f);
    END LOOP;
END;
$$;
