-- The drop guard back on, after the drops drop_guard_off.sql let through (see it).
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
