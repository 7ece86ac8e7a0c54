-- changed_columns_v1: the columns whose value differs between two versions of a row, leaving
-- out those an UPDATE may change; NULL when nothing else changed.
CREATE FUNCTION evalledger.changed_columns_v1(new_row jsonb, old_row jsonb, allowed text[])
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(n.key, ', ' ORDER BY n.key)
      FROM jsonb_each(new_row) n JOIN jsonb_each(old_row) o USING (key)
     WHERE n.value IS DISTINCT FROM o.value AND n.key <> ALL (allowed);
$$;
GRANT EXECUTE ON FUNCTION changed_columns_v1(jsonb, jsonb, text[]) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION changed_columns_v1(jsonb,jsonb,text[]) TO evalledger_owner;
