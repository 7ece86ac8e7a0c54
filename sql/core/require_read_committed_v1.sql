-- require_read_committed_v1: a row-lock handshake only works if the check after the lock reads
-- with a fresh snapshot, which READ COMMITTED alone takes; any older snapshot could miss a row
-- committed while this transaction waited.
CREATE FUNCTION evalledger.require_read_committed_v1(action text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: reviewer independence is checked under READ COMMITTED, not %',
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = format('%s in a READ COMMITTED transaction', action);
    END IF;
END;
$$;
