-- drop_guard_v1: no trigger, policy, rule, table, view, function or schema of the ledger is dropped,
-- except a capture partition past retention inside the retention purge (retention_purge_v2). It lives in a schema the
-- no application role can use, so that neither DROP FUNCTION ... CASCADE nor DROP SCHEMA evalledger
-- CASCADE can take the guard away first. The capture functions are called
-- dynamically: when a DROP SCHEMA cascades, they are already gone by the time this runs.
CREATE FUNCTION evalledger_guard.drop_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    dropped record;
    purging boolean := false;
    expired boolean;
BEGIN
    FOR dropped IN
        SELECT d.object_type, d.object_identity,
               substring(d.object_identity FROM '(?:^| on )evalledger\.(eval_candidates_p[0-9]{6})$') AS partition
          FROM pg_event_trigger_dropped_objects() d
         WHERE (d.object_type IN ('trigger', 'policy', 'rule', 'table', 'view', 'function', 'schema')
                -- dropped by name, not as a part of a dropped partition
                OR (d.original AND d.object_type IN ('table column', 'table constraint', 'index', 'type')))
           AND (d.schema_name IN ('evalledger', 'evalledger_guard')
                OR d.object_identity IN ('evalledger', 'evalledger_guard')
                OR d.object_identity LIKE '% on evalledger.%')
           AND NOT d.is_temporary
    LOOP
        -- Asked only for a capture partition: only the purge (the code role) may run these.
        IF dropped.partition IS NOT NULL AND to_regprocedure('evalledger.capture_purging_v1()') IS NOT NULL THEN
            EXECUTE 'SELECT evalledger.capture_purging_v1()' INTO purging;
        END IF;
        IF purging AND dropped.partition IS NOT NULL THEN
            EXECUTE 'SELECT evalledger.capture_partition_expired_v2($1)' INTO expired USING dropped.partition;
            CONTINUE WHEN expired;
        END IF;
        RAISE EXCEPTION 'evalledger: DROP refused: % % is part of the ledger', dropped.object_type, dropped.object_identity
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'replace a trigger with CREATE OR REPLACE TRIGGER and a new _vN function';
    END LOOP;
END;
$$;
REVOKE EXECUTE ON FUNCTION evalledger_guard.drop_guard_v1() FROM PUBLIC;

-- Where the migrating user is a superuser, the event triggers refuse DDL on the ledger that no
-- migration runs (docs/guards.md). Elsewhere (managed servers) there are none, and the installer,
-- a member of the code role, could lift any guard: `evalledger doctor` says which are missing.
DO $install$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN;
    END IF;
    CREATE EVENT TRIGGER evalledger_drop_guard_v1 ON sql_drop
        EXECUTE FUNCTION evalledger_guard.drop_guard_v1();
    ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
END
$install$;
