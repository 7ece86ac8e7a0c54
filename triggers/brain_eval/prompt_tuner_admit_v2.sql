-- prompt_tuner_admit_v2: a prompt tuner may not be registered while reviewing an open run of the
-- same brain, or of a prompt that brain owns (brain_prompt: it registered the prompt or carried it
-- in an analysis), looked up by key. The target row is taken FOR NO KEY UPDATE, which waits for (and
-- is waited on by) a run insert's FOR SHARE, so the two checks always see each other's committed rows.
CREATE FUNCTION evalledger.prompt_tuner_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_read_committed_v2('a prompt tuner''s registration (reviewer independence)');
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.target_id FOR NO KEY UPDATE;
    IF EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                WHERE l.reviewer_user_id = NEW.user_id AND l.completed_at IS NULL
                  AND (l.brain_under_test = NEW.target_id
                       OR EXISTS (SELECT 1 FROM evalledger.brain_prompt p
                                   WHERE p.system_prompt_hash = l.system_prompt_hash AND p.target_id = NEW.target_id))) THEN
        RAISE EXCEPTION 'evalledger: % reviews an open run of %: complete it before registering them as a prompt tuner',
                NEW.user_id, NEW.target_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'prompt_tuner_not_reviewing_open_run';
    END IF;
    NEW.registered_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER prompt_tuner_10_admit BEFORE INSERT ON prompt_tuner
    FOR EACH ROW EXECUTE FUNCTION prompt_tuner_admit_v2();
