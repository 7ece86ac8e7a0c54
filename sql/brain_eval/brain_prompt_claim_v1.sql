-- Policy by the prompt (issue 17): who owns a prompt, its brains, its levers.
-- brain_prompt_claim_v1: brain `brain` shows system prompt `prompt_hash` (a version registers it,
-- or one of its analyses carries it): recorded once in brain_prompt, the registry every rule that
-- follows the prompt rather than the label reads by key (independence, lever mapping, question
-- needs, brain legal holds). A brain may not take on a prompt while a run of that prompt under
-- another brain is open: that run's reviewer was found independent of the prompt's brains as they
-- were, and its lever policy was fixed when it was admitted. The new claim locks the prompt's
-- registry rows FOR UPDATE; a run's admission holds them FOR SHARE, so whichever commits first is
-- seen by the other (under READ COMMITTED, which this checks).
CREATE FUNCTION evalledger.brain_prompt_claim_v1(brain varchar, prompt_hash varchar, seen_as text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM evalledger.brain_prompt p
                WHERE p.system_prompt_hash = prompt_hash AND p.target_id = brain) THEN
        RETURN;
    END IF;
    PERFORM evalledger.require_read_committed_v2('a brain taking on a prompt');
    PERFORM 1 FROM evalledger.brain_prompt p WHERE p.system_prompt_hash = prompt_hash
     ORDER BY p.target_id FOR UPDATE;
    IF EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                WHERE l.system_prompt_hash = prompt_hash AND l.completed_at IS NULL AND l.brain_under_test <> brain) THEN
        RAISE EXCEPTION 'evalledger: % cannot take on system prompt % while a run of it under another brain is open',
                brain, prompt_hash
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_prompt_no_open_run_of_another_brain',
                  HINT = 'complete that run first: its reviewer and its lever policy were decided without this brain';
    END IF;
    INSERT INTO evalledger.brain_prompt (system_prompt_hash, target_id, seen_as)
    VALUES (prompt_hash, brain, seen_as)
    ON CONFLICT ON CONSTRAINT brain_prompt_pkey DO NOTHING;
END;
$$;
