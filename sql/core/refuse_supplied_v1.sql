-- refuse_supplied_v1: raise when a caller supplied any of the values the database computes.
CREATE FUNCTION evalledger.refuse_supplied_v1(table_name text, computed jsonb) RETURNS void
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
GRANT EXECUTE ON FUNCTION refuse_supplied_v1(text, jsonb) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION refuse_supplied_v1(text,jsonb) TO evalledger_owner;
