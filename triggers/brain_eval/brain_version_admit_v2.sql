-- brain_version_admit_v2: a brain under test's configuration is a new version of its target: the
-- database numbers it, hashes its system prompt (SHA-256 of the UTF-8 text) and orders its levers;
-- the caller supplies none of these. The brain then owns the prompt (brain_prompt_claim_v1), which a
-- brain may not take on while a run of that prompt under another brain is open.
CREATE FUNCTION evalledger.brain_version_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
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
    NEW.levers := ARRAY(SELECT DISTINCT l FROM unnest(NEW.levers) AS l ORDER BY l);
    PERFORM evalledger.brain_prompt_claim_v1(NEW.target_id, NEW.system_prompt_hash, 'version');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_version_10_admit BEFORE INSERT ON brain_version
    FOR EACH ROW EXECUTE FUNCTION brain_version_admit_v2();
