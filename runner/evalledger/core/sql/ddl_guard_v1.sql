-- ddl_guard_v1: after an ALTER TABLE on a table of the evalledger schema, that table must still
-- have row level security enabled and forced and every trigger ENABLE ALWAYS; and its
-- partitions stay attached. Checking the resulting state, not the statement's text, catches
-- every spelling (DISABLE TRIGGER ALL, ENABLE REPLICA TRIGGER, NO FORCE ROW LEVEL SECURITY...).
CREATE OR REPLACE FUNCTION evalledger.ddl_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = evalledger, pg_catalog, pg_temp AS $$
DECLARE
    altered oid[];
    offence text;
BEGIN
    SELECT array_agg(c.objid) INTO altered FROM pg_event_trigger_ddl_commands() c
     WHERE c.schema_name = 'evalledger' AND c.command_tag = 'ALTER TABLE' AND c.classid = 'pg_class'::regclass;
    IF altered IS NULL THEN
        RETURN;
    END IF;
    IF current_query() ~* '\mDETACH\s+PARTITION\M' THEN
        RAISE EXCEPTION 'evalledger: DETACH PARTITION refused on a ledger table'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'partitions leave only through the retention purge';
    END IF;

    SELECT format('%s on %s is %s', t.tgname, c.relname,
                  CASE t.tgenabled WHEN 'D' THEN 'disabled' WHEN 'R' THEN 'replica-only'
                                   ELSE 'origin-only' END)
      INTO offence
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.oid = ANY (altered) AND NOT t.tgisinternal AND t.tgenabled <> 'A'
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: ledger guards stay ENABLE ALWAYS: trigger %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;

    SELECT c.relname INTO offence
      FROM pg_class c
     WHERE c.oid = ANY (altered) AND c.relkind IN ('r', 'p')
       AND NOT (c.relrowsecurity AND c.relforcerowsecurity)
     LIMIT 1;
    IF offence IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: row level security stays enabled and forced on %', offence
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END;
$$;

-- drop_guard_v1: no trigger, policy or table of the evalledger schema is dropped.
CREATE OR REPLACE FUNCTION evalledger.drop_guard_v1() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = evalledger, pg_catalog, pg_temp AS $$
DECLARE
    dropped record;
BEGIN
    SELECT d.object_type, d.object_identity INTO dropped
      FROM pg_event_trigger_dropped_objects() d
     WHERE d.object_type IN ('trigger', 'policy', 'table', 'view', 'function')
       AND (d.schema_name = 'evalledger' OR d.object_identity LIKE '% on evalledger.%')
       AND NOT d.is_temporary
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: DROP refused: % % is part of the ledger', dropped.object_type, dropped.object_identity
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'replace a trigger with CREATE OR REPLACE TRIGGER and a new _vN function';
    END IF;
END;
$$;
