-- The prompts each brain owns (issue 17): registered by one of its versions, or carried by one of
-- its analyses (production or eval). Written only by brain_prompt_claim_v1; every rule that follows
-- the prompt rather than the label reads it by key (independence, levers, question needs, brain
-- holds). Reference data: never purged, readable by every reading role like brain_version.
CREATE TABLE brain_prompt (
    system_prompt_hash varchar(64) NOT NULL,
    target_id          varchar(16) NOT NULL,
    seen_as            text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_prompt_pkey PRIMARY KEY (system_prompt_hash, target_id),
    CONSTRAINT brain_prompt_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT brain_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    -- How the brain first showed the prompt: a registered version, or an analysis carrying it.
    CONSTRAINT brain_prompt_seen_as_known CHECK (seen_as IN ('version', 'analysis'))
);

CREATE INDEX brain_prompt_target_idx ON brain_prompt (target_id);

-- The prompts each brain owns: reference data, as brain_version.
CREATE POLICY brain_prompt_read ON brain_prompt FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_prompt TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
