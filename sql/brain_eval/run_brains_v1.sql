-- run_brains_v1: the brains a run (or an analysis) of label `brain` and system prompt `prompt_hash`
-- belongs to: its label and every brain that registered the prompt or carried it in an analysis
-- (brain_prompt, by key; reference data every reading role may read). Policy follows the prompt, not the label: the lever mapping, the question
-- needs, the hard criteria that apply to a brain, and a legal hold on a brain all ask this.
CREATE FUNCTION evalledger.run_brains_v1(brain varchar, prompt_hash varchar) RETURNS text[]
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT ARRAY(SELECT b FROM (SELECT brain::text AS b
                                UNION
                                SELECT p.target_id::text FROM evalledger.brain_prompt p
                                 WHERE p.system_prompt_hash = prompt_hash) x
                  WHERE b IS NOT NULL ORDER BY b)
$$;
GRANT EXECUTE ON FUNCTION run_brains_v1(varchar, varchar) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION run_brains_v1(character varying,character varying) TO evalledger_owner;
