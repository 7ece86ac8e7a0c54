-- The capture table's dedupe key is written once per statement, not once per row (issue 20, item
-- 4): capture_keys_v1, an AFTER INSERT statement trigger, writes every key a statement stored in one
-- INSERT from its transition table, where capture_dedupe_v1 ran a nested INSERT per row. A key is
-- still stored once: one stored before, or twice in a statement, now fails the statement instead of
-- skipping its row, and the capture writer leaves out the keys capture_keys_stored_v1 says are
-- stored, so a replay still writes nothing twice. No role may write or read anything it could not
-- before: eval_candidate_keys stays the code role's, and the runner, which captures, may ask which
-- of its keys are taken.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- capture_keys_v1: after each INSERT statement on eval_candidates, one INSERT of every captured
-- row's capture_key (with its created_at, for the purge) into eval_candidate_keys, whose primary
-- key is the UNIQUE key a table partitioned by time cannot carry itself. A key stored before, or
-- twice in one statement, fails the whole statement (unique_violation on eval_candidate_keys_pkey,
-- naming the key): a captured row is stored once or not at all, whoever writes it. A writer that
-- replays what it may have written already leaves out the keys capture_keys_stored_v1 finds.
-- Two writers racing with one key: the second waits on the first's key and fails once it commits.
-- One statement per batch: capture_dedupe_v1, the row trigger this replaces, ran a nested INSERT
-- per row, about a quarter of the writer's server time (bench/capture.py).
CREATE FUNCTION evalledger.capture_keys_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_candidate_keys (capture_key, created_at)
    SELECT n.capture_key, n.created_at FROM capture_new n;
    RETURN NULL;
END;
$$;

-- capture_keys_stored_v1: which of these capture keys are stored already. The capture writer's
-- INSERT leaves them out, so replaying a spool after a crash between the INSERT and the spool's
-- truncation writes nothing twice and refuses nothing. SECURITY DEFINER: nobody but the code role
-- reads eval_candidate_keys; what this tells a writer is only whether keys it holds are taken.
CREATE FUNCTION evalledger.capture_keys_stored_v1(keys uuid[]) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT k.capture_key FROM evalledger.eval_candidate_keys k WHERE k.capture_key = ANY (keys);
$$;

GRANT EXECUTE ON FUNCTION capture_keys_stored_v1(uuid[]) TO evalledger_runner;

-- Named to fire first of the statement's AFTER triggers, before the journal's (90), which reads the
-- keys it wrote back from their table.
CREATE TRIGGER eval_candidates_10_keys AFTER INSERT ON eval_candidates
    REFERENCING NEW TABLE AS capture_new FOR EACH STATEMENT EXECUTE FUNCTION capture_keys_v1();
ALTER TABLE eval_candidates ENABLE ALWAYS TRIGGER eval_candidates_10_keys;

-- Dropping the row trigger on the parent drops its clone on every partition.
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

DROP TRIGGER eval_candidates_10_dedupe ON eval_candidates;
DROP FUNCTION capture_dedupe_v1();
-- The drop guard back on, after the drops drop_guard_off.sql let through (see it).
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
