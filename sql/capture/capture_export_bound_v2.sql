-- capture_export_bound_v2: the exclusive upper bound of an export window: waits for every open
-- capture transaction (SHARE on evalledger.capture_window, which conflicts with the writers' ROW
-- EXCLUSIVE), reads clock_timestamp(), and releases the lock at once (taken in a subtransaction that
-- is rolled back). Call it in its own statement and read in a later one (READ COMMITTED): every row
-- stamped before the bound is then committed and visible, and no row stamped later can be earlier.
-- SECURITY DEFINER: no reader holds a privilege on the lock's table, so none can hold it longer.
CREATE FUNCTION evalledger.capture_export_bound_v2() RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    bound timestamptz;
BEGIN
    BEGIN
        LOCK TABLE evalledger.capture_window IN SHARE MODE;
        bound := clock_timestamp();
        RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'evalledger: release the capture window lock';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
    RETURN bound;
END;
$$;

-- An export's bound is a lock only writers and readers of captures take: not the owner role's.
GRANT EXECUTE ON FUNCTION capture_export_bound_v2() TO evalledger_runner, evalledger_revops, evalledger_auditor;
