-- capture_window_lock_v2: before any INSERT statement on eval_candidates (or one of its partitions,
-- COPY included), take the capture window lock, ROW EXCLUSIVE on evalledger.capture_window, for the
-- rest of the transaction. created_at defaults to clock_timestamp(), read after this trigger fires
-- (no application role may supply it), so every row is stamped while its transaction holds the lock; capture_export_bound_v2() takes SHARE on the
-- same table for an instant. The lock is on a table of the code role's on which no application role
-- holds any privilege: only the ledger's writers take it (this trigger, as the code role), and no
-- login can stall captures by holding a well-known advisory key.
CREATE FUNCTION evalledger.capture_window_lock_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    LOCK TABLE evalledger.capture_window IN ROW EXCLUSIVE MODE;
    RETURN NULL;
END;
$$;

-- Statement-level: the window lock before any row is stamped (COPY included).
CREATE TRIGGER eval_candidates_05_window_lock BEFORE INSERT ON eval_candidates
    FOR EACH STATEMENT EXECUTE FUNCTION capture_window_lock_v2();
