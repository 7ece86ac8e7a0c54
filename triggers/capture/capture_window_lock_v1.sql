-- capture_window_lock_v1: before any INSERT statement on eval_candidates (or one of its
-- partitions, COPY included), take the capture window lock in shared mode for the rest of the
-- transaction. created_at defaults to clock_timestamp(), which is read after this trigger fires,
-- so every row is stamped while its transaction holds the lock. capture_export_bound_v1() takes
-- the same lock exclusively for an instant: the bound it reads is later than every created_at of
-- a transaction that is still open or already committed, and earlier than (or equal to) every
-- created_at still to come. That is what makes chained export windows exact.
CREATE FUNCTION evalledger.capture_window_lock_v1() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- 1702257505 is 'evca' (eval capture); 1 is the window lock.
    PERFORM pg_catalog.pg_advisory_xact_lock_shared(1702257505, 1);
    RETURN NULL;
END;
$$;
