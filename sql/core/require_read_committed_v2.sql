-- require_read_committed_v2: a definer function that decides or deletes after waiting on a lock
-- must then read with a fresh snapshot, which READ COMMITTED alone takes: under REPEATABLE READ or
-- SERIALIZABLE the snapshot predates the wait, and the check would miss what it waited for (a
-- legal hold, a tuner, a run). Raises naming what was attempted.
CREATE FUNCTION evalledger.require_read_committed_v2(action text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: % runs under READ COMMITTED, not %', action,
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = format('%s in a READ COMMITTED transaction (the default isolation level)', action);
    END IF;
END;
$$;
