-- No NaN or infinity anywhere (issue 17): every numeric and floating-point column CHECKs finite_v1
-- (<table>_<column>_finite), and the JSON objects the database reads as numbers json_numbers_v1
-- (sql/schema.sql builds both before the tables).
-- finite_v1: a number the ledger can hold: not NaN and not infinite (NULL stays NULL). Every numeric
-- and floating-point column of a ledger table has a CHECK calling it (<table>_<column>_finite), so
-- no NaN or infinity enters the append-only ledger, where it could never be repaired.
CREATE FUNCTION evalledger.finite_v1(x numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT x OPERATOR(pg_catalog.<>) 'NaN'::numeric
       AND x OPERATOR(pg_catalog.<) 'Infinity'::numeric AND x OPERATOR(pg_catalog.>) '-Infinity'::numeric
$$;

-- A CHECK's function runs with the writer's rights: every role that writes a ledger row needs these.
GRANT EXECUTE ON FUNCTION finite_v1(numeric) TO evalledger_runner, evalledger_reviewer, evalledger_owner, evalledger_retention;
