-- brain_version_admit_v2: a brain under test's configuration is a new version of its target: the
-- database numbers it, hashes its system prompt (SHA-256 of the UTF-8 text) and orders its levers;
-- the caller supplies none of these. The brain then owns the prompt (brain_prompt_claim_v1), which a
-- brain may not take on while a run of that prompt under another brain is open. A prompt is one
-- identity however it is spelt (issue 37, item 1): a text whose normal form (prompt_normal_v1) is
-- another brain's prompt spelt differently is refused, naming both brains, so every rule that reads
-- the registry by the exact hash (independence, levers, holds) reads one spelling per normal form
-- across brains. The same text registered by two brains stays one prompt both own, as before. The
-- registrations' own lock (brain_version_registration, a table no role may lock) makes two versions
-- registered at once wait for each other, and the second, under READ COMMITTED, sees the first: not
-- an advisory key on the prompt, which any login that knew the prompt could hold to stall its
-- registration.
CREATE FUNCTION evalledger.brain_version_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    normal varchar;
    other varchar;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_version', jsonb_build_object(
        'version', NEW.version, 'system_prompt_hash', NEW.system_prompt_hash));
    -- Locking the target serialises two versions of one brain added at once.
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.target_id AND t.kind = 'brain' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: % is not a registered brain', NEW.target_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'target_id',
                  CONSTRAINT = 'brain_version_target_fkey';
    END IF;
    NEW.version := coalesce((SELECT max(v.version) FROM evalledger.brain_version v
                              WHERE v.target_id = NEW.target_id), 0) + 1;
    NEW.system_prompt_hash := encode(sha256(convert_to(NEW.system_prompt, 'UTF8')), 'hex');
    normal := evalledger.prompt_normal_hash_v1(NEW.system_prompt);
    PERFORM evalledger.require_read_committed_v2('a brain version''s registration (one prompt per spelling)');
    LOCK TABLE evalledger.brain_version_registration IN EXCLUSIVE MODE;
    SELECT v.target_id INTO other FROM evalledger.brain_version v
     WHERE evalledger.prompt_normal_hash_v1(v.system_prompt) = normal
       AND v.target_id <> NEW.target_id AND v.system_prompt_hash <> NEW.system_prompt_hash
     ORDER BY v.target_id LIMIT 1;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: %''s system prompt is %''s spelt differently (the same once normalised)',
                NEW.target_id, other
            USING ERRCODE = 'check_violation', COLUMN = 'system_prompt',
                  CONSTRAINT = 'brain_version_one_spelling_per_prompt',
                  HINT = format('register %s''s exact text to share the prompt, or a prompt of its own', other);
    END IF;
    NEW.levers := ARRAY(SELECT DISTINCT l FROM unnest(NEW.levers) AS l ORDER BY l);
    PERFORM evalledger.brain_prompt_claim_v1(NEW.target_id, NEW.system_prompt_hash, 'version');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_version_10_admit BEFORE INSERT ON brain_version
    FOR EACH ROW EXECUTE FUNCTION brain_version_admit_v2();
