-- finite_v1: a number the ledger can hold: not NaN and not infinite (NULL stays NULL). Every numeric
-- and floating-point column of a ledger table has a CHECK calling it (<table>_<column>_finite), so
-- no NaN or infinity enters the append-only ledger, where it could never be repaired.
CREATE FUNCTION evalledger.finite_v1(x numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT x OPERATOR(pg_catalog.<>) 'NaN'::numeric
       AND x OPERATOR(pg_catalog.<) 'Infinity'::numeric AND x OPERATOR(pg_catalog.>) '-Infinity'::numeric
$$;
