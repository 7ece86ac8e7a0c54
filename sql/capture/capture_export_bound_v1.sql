-- capture_export_bound_v1: the exclusive upper bound of an export window: takes the capture window lock exclusively for an instant and returns clock_timestamp(). Call it in its own statement and read in a later one (READ COMMITTED): every row stamped before the bound is then committed and visible, and no row stamped later can be earlier.
CREATE FUNCTION evalledger.capture_export_bound_v1() RETURNS timestamptz
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bound timestamptz;
BEGIN
    PERFORM pg_catalog.pg_advisory_lock(1702257505, 1);
    bound := clock_timestamp();
    PERFORM pg_catalog.pg_advisory_unlock(1702257505, 1);
    RETURN bound;
END;
$$;
