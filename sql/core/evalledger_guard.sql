-- The event-trigger functions live in a schema of their own, owned by the user who migrates.
-- The event-trigger functions live in a schema of their own, owned by the user who migrates.
CREATE SCHEMA evalledger_guard;
REVOKE ALL ON SCHEMA evalledger_guard FROM PUBLIC;
COMMENT ON SCHEMA evalledger_guard IS 'evalledger: event-trigger functions, out of every application role''s reach';
