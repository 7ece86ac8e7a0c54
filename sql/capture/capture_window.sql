-- The capture window lock (issue 17): writers take ROW EXCLUSIVE on this table, an export's bound
-- SHARE for an instant, a partition maker SHARE UPDATE EXCLUSIVE. It holds no rows. No application
-- role holds any privilege on it, so only the code role's functions lock it: no login can stall the
-- writers (as any login could hold a well-known advisory key).
CREATE TABLE capture_window (
    nothing boolean,
    CONSTRAINT capture_window_holds_no_rows CHECK (false)
);
REVOKE ALL ON capture_window FROM PUBLIC;
ALTER TABLE capture_window ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
