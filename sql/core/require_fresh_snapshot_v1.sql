-- require_fresh_snapshot_v1: a completion that waited for the rows locking its run (question rows,
-- verdicts) must then read them: only READ COMMITTED gives the trigger a snapshot taken after the
-- wait; an older one would decide without them.
CREATE FUNCTION evalledger.require_fresh_snapshot_v1(run_kind text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: a % is completed under READ COMMITTED, not %', run_kind,
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'set completed_at in a READ COMMITTED transaction';
    END IF;
END;
$$;
