-- brain_version_admit_v1: a brain under test's configuration is a new version of its target: the
-- database numbers it, hashes its system prompt (SHA-256 of the UTF-8 text) and orders its levers;
-- the caller supplies none of these.
CREATE FUNCTION evalledger.brain_version_admit_v1() RETURNS trigger
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
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
