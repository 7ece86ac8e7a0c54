-- For a migration that drops a function, trigger or constraint of the ledger, which the drop guard
-- refuses: its owner, the superuser who installed it, turns it off here, inside the migration's
-- transaction (where no superuser installed there is no drop guard), and drop_guard_on.sql turns
-- it back on before the migration ends. The session acts as the code role after this.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;
