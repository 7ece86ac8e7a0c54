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

-- Named to fire first of the statement's AFTER triggers, before the journal's (90), which reads the
-- keys it wrote back from their table.
CREATE TRIGGER eval_candidates_10_keys AFTER INSERT ON eval_candidates
    REFERENCING NEW TABLE AS capture_new FOR EACH STATEMENT EXECUTE FUNCTION capture_keys_v1();
ALTER TABLE eval_candidates ENABLE ALWAYS TRIGGER eval_candidates_10_keys;
