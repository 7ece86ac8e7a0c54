-- capture_dedupe_v1: each captured row carries a client-generated capture_key. The key goes into
-- eval_candidate_keys (a real UNIQUE key: a partitioned table cannot have one that leaves out its
-- partition key); a key seen before makes the row a no-op, so replaying a spool after a crash
-- between the INSERT and the spool's truncation writes every row exactly once. A statement that
-- fails afterwards rolls the key back with the row.
CREATE FUNCTION evalledger.capture_dedupe_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_candidate_keys (capture_key, created_at)
    VALUES (NEW.capture_key, NEW.created_at)
    ON CONFLICT (capture_key) DO NOTHING;
    IF FOUND THEN
        RETURN NEW;
    END IF;
    RETURN NULL;
END;
$$;
