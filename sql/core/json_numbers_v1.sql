-- json_numbers_v1: an object whose every value is a JSON number (JSON has no NaN or infinity, so
-- such an object holds only finite numbers); NULL for NULL. For the JSON fields the database reads
-- as numbers, where a string "NaN" would otherwise cast to one.
CREATE FUNCTION evalledger.json_numbers_v1(doc jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.jsonb_typeof(doc) OPERATOR(pg_catalog.=) 'object'
       AND NOT pg_catalog.jsonb_path_exists(doc, '$.* ? (@.type() != "number")')
$$;

-- A CHECK's function runs with the writer's rights: every role that writes a ledger row needs these.
GRANT EXECUTE ON FUNCTION json_numbers_v1(jsonb) TO evalledger_runner, evalledger_reviewer, evalledger_owner, evalledger_retention;
