-- changed_columns_v1: the columns whose value differs between two versions of a row, leaving
-- out those an UPDATE may change; NULL when nothing else changed.
CREATE OR REPLACE FUNCTION evalledger.changed_columns_v1(new_row jsonb, old_row jsonb, allowed text[])
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(n.key, ', ' ORDER BY n.key)
      FROM jsonb_each(new_row) n JOIN jsonb_each(old_row) o USING (key)
     WHERE n.value IS DISTINCT FROM o.value AND n.key <> ALL (allowed);
$$;

-- require_read_committed_v1: a row-lock handshake only works if the check after the lock reads
-- with a fresh snapshot, which READ COMMITTED alone takes; any older snapshot could miss a row
-- committed while this transaction waited.
CREATE OR REPLACE FUNCTION evalledger.require_read_committed_v1(action text) RETURNS void
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

-- refuse_supplied_v1: raise when a caller supplied any of the values the database computes.
CREATE OR REPLACE FUNCTION evalledger.refuse_supplied_v1(table_name text, computed jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    supplied text;
BEGIN
    SELECT string_agg(key, ', ' ORDER BY key) INTO supplied
      FROM jsonb_each(computed) WHERE value <> 'null'::jsonb;
    IF supplied IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: %.% computed by the database: leave it out', table_name, supplied
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'decisions, aggregates and computed flags are policy, not input';
    END IF;
END;
$$;
