-- brain_eval_levers_v1: the lever enum the proposed actions of a run's answers must keep to, or NULL
-- where the rubric maps levers for none of the run's brains (run_brains_v1: its label and every
-- brain of its prompt). The levers are those every registered version of a lever-mapped brain with
-- this prompt has (the strictest reading where two disagree); none when no such version exists, so
-- that every proposed action then counts as outside the levers: unknown levers are not met.
CREATE FUNCTION evalledger.brain_eval_levers_v1(brain varchar, prompt_hash varchar, policy jsonb) RETURNS text[]
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH mapped AS (
        SELECT b FROM unnest(evalledger.run_brains_v1(brain, prompt_hash)) b
         WHERE coalesce(policy #> '{question_pass,lever_mapping_applies_to}' ? b, false)
    ),
    versions AS (
        SELECT v.levers FROM evalledger.brain_version v
         WHERE v.system_prompt_hash = prompt_hash AND v.target_id IN (SELECT b FROM mapped)
    )
    SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM mapped) THEN NULL
                ELSE ARRAY(SELECT l FROM versions, unnest(versions.levers) l
                            GROUP BY l HAVING count(*) = (SELECT count(*) FROM versions) ORDER BY l) END
$$;
GRANT EXECUTE ON FUNCTION brain_eval_levers_v1(varchar, varchar, jsonb) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION brain_eval_levers_v1(character varying,character varying,jsonb) TO evalledger_owner;
