-- changed_columns_v1: the columns whose value differs between two versions of a row, leaving
-- out those an UPDATE may change; NULL when nothing else changed.
CREATE OR REPLACE FUNCTION evalledger.changed_columns_v1(new_row jsonb, old_row jsonb, allowed text[])
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(n.key, ', ' ORDER BY n.key)
      FROM jsonb_each(new_row) n JOIN jsonb_each(old_row) o USING (key)
     WHERE n.value IS DISTINCT FROM o.value AND n.key <> ALL (allowed);
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
