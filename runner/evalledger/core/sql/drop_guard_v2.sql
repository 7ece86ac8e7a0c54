-- drop_guard_v2: drop_guard_v1's rule (no trigger, policy, table, view or function of the
-- evalledger schema is dropped) with one exception: inside evalledger.capture_purge_v1(), whose
-- transaction-local marker only that function (owned by the user who migrated) can write, a
-- monthly partition of eval_candidates wholly past the capture retention horizon may be dropped,
-- with the triggers on it. Anything else in the same DROP is still refused.
CREATE OR REPLACE FUNCTION evalledger.drop_guard_v2() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = evalledger, pg_catalog, pg_temp AS $$
DECLARE
    dropped record;
    purging boolean := evalledger.capture_purging_v1();
BEGIN
    SELECT d.object_type, d.object_identity INTO dropped
      FROM pg_event_trigger_dropped_objects() d
     WHERE d.object_type IN ('trigger', 'policy', 'table', 'view', 'function')
       AND (d.schema_name = 'evalledger' OR d.object_identity LIKE '% on evalledger.%')
       AND NOT d.is_temporary
       AND NOT (purging AND evalledger.capture_partition_expired_v1(
                    substring(d.object_identity FROM '(?:^| on )evalledger\.(eval_candidates_p[0-9]{6})$')))
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: DROP refused: % % is part of the ledger', dropped.object_type, dropped.object_identity
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'replace a trigger with CREATE OR REPLACE TRIGGER and a new _vN function';
    END IF;
END;
$$;
