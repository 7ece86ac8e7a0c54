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

\ir ../triggers/capture/capture_keys_v1.sql
\ir ../sql/capture/capture_keys_stored_v1.sql
GRANT EXECUTE ON FUNCTION capture_keys_stored_v1(uuid[]) TO evalledger_runner;

-- Named to fire first of the statement's AFTER triggers, before the journal's (90), which reads the
-- keys it wrote back from their table.
CREATE TRIGGER eval_candidates_10_keys AFTER INSERT ON eval_candidates
    REFERENCING NEW TABLE AS capture_new FOR EACH STATEMENT EXECUTE FUNCTION capture_keys_v1();
ALTER TABLE eval_candidates ENABLE ALWAYS TRIGGER eval_candidates_10_keys;

-- Dropping the row trigger on the parent drops its clone on every partition.
\ir steps/drop_guard_off.sql
DROP TRIGGER eval_candidates_10_dedupe ON eval_candidates;
DROP FUNCTION capture_dedupe_v1();
\ir steps/drop_guard_on.sql
