-- prompt_normal_hash_v1: the SHA-256 (hex) of a system prompt's normal form (prompt_normal_v1), the
-- identity brain versions are compared by; the exact hash (brain_version.system_prompt_hash) stays
-- recorded beside it, as the runs and analyses carry it.
CREATE FUNCTION evalledger.prompt_normal_hash_v1(prompt text) RETURNS varchar
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT encode(sha256(convert_to(evalledger.prompt_normal_v1(prompt), 'UTF8')), 'hex')::varchar
$$;

-- The owner role registers brain versions, whose index computes it; the runner captures queries,
-- whose index computes it too (eval_candidates_prompt_idx); RevOps and auditors read production
-- beside eval, which matches a question to production's queries by it.
GRANT EXECUTE ON FUNCTION prompt_normal_hash_v1(text) TO evalledger_owner, evalledger_runner, evalledger_revops, evalledger_auditor;
