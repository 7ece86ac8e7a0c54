-- Guards the owner role cannot lift: the ledger's functions belong to the user who migrates, and the event triggers live in a schema of their own.

-- =============================================================================================
-- A schema for the event-trigger functions, owned by the user who migrates (not the owner role)
-- =============================================================================================
CREATE SCHEMA evalledger_guard;
REVOKE ALL ON SCHEMA evalledger_guard FROM PUBLIC;
COMMENT ON SCHEMA evalledger_guard IS 'evalledger: event-trigger functions, out of evalledger_owner''s reach';

\ir ../core/sql/ddl_guard_v2.sql
\ir ../core/sql/drop_guard_v3.sql
REVOKE EXECUTE ON FUNCTION evalledger_guard.ddl_guard_v2(), evalledger_guard.drop_guard_v3() FROM PUBLIC;

-- =============================================================================================
-- Code belongs to the installer; the owner role keeps its tables and views
-- =============================================================================================
-- Where the migrating user is a superuser, every function of schema evalledger becomes its own,
-- so evalledger_owner can no longer CREATE OR REPLACE a guard or decision function; and the new
-- event triggers replace the old ones. Elsewhere there are no event triggers to install, and a
-- migrating user who is a member of evalledger_owner could lift any guard anyway.
DO $install$
DECLARE
    f regprocedure;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'evalledger: not a superuser: guard event triggers not installed';
        RETURN;
    END IF;
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = 'evalledger'::regnamespace LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', f, current_user);
    END LOOP;
    -- The owner role may still run what the writing roles run (its writes pass the same
    -- triggers), and nothing more: the capture purge stays the installer's alone.
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = 'evalledger'::regnamespace
                AND (has_function_privilege('evalledger_runner', p.oid, 'EXECUTE')
                     OR has_function_privilege('evalledger_reviewer', p.oid, 'EXECUTE')) LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO evalledger_owner', f);
    END LOOP;

    DROP EVENT TRIGGER IF EXISTS evalledger_ddl_guard_v1;
    DROP EVENT TRIGGER IF EXISTS evalledger_drop_guard_v1;
    CREATE EVENT TRIGGER evalledger_ddl_guard_v2 ON ddl_command_end
        WHEN TAG IN ('ALTER TABLE', 'CREATE TRIGGER') EXECUTE FUNCTION evalledger_guard.ddl_guard_v2();
    CREATE EVENT TRIGGER evalledger_drop_guard_v3 ON sql_drop
        EXECUTE FUNCTION evalledger_guard.drop_guard_v3();
    ALTER EVENT TRIGGER evalledger_ddl_guard_v2 ENABLE ALWAYS;
    ALTER EVENT TRIGGER evalledger_drop_guard_v3 ENABLE ALWAYS;
END
$install$;
