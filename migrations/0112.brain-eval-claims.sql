-- One runner per brain-eval run (issue 39, item 2). Two `evalledger run brain-eval` of the same run
-- at once both asked the brain every unanswered question, and the second to store died on the
-- answer's primary key: the brain's calls were made, and paid, twice. A brain-eval run now takes a
-- run claim as takes-quality and work-quality runs do (one mechanism, core/claims.py): a row of
-- run_claim never committed. A brain-eval run's id is a uuid, so a claim's run_id is now text (the
-- table never holds a committed row, so no row is converted), and 'brain-eval' is a suite it knows.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The check is swapped under its name, which the drop guard refuses but for its owner, the
-- superuser who installed it: off here, inside the migration's transaction, and on again below.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE run_claim
    ALTER COLUMN run_id TYPE text USING run_id::text,
    DROP CONSTRAINT run_claim_suite_known,
    ADD CONSTRAINT run_claim_suite_known CHECK (suite IN ('takes-quality', 'work-quality', 'brain-eval'));

RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;

-- run_claim's journal functions are generated from its columns: run_id is text now.
CALL journal_attach_v2();
