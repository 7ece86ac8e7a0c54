-- One row per version of a brain under test: its model, its system prompt (the text; the
-- database hashes it) and the lever enum its proposed actions must keep to. A new prompt, model
-- or lever set is a new version; nothing is edited.
CREATE TABLE brain_version (
    brain_version_id   bigint      GENERATED ALWAYS AS IDENTITY,
    target_id          varchar(16) NOT NULL,
    version            integer     NOT NULL,
    provider           varchar(16) NOT NULL,
    model_id           varchar(64) NOT NULL,
    system_prompt      text        NOT NULL,
    system_prompt_hash varchar(64) NOT NULL,
    version_label      varchar(64),
    levers             text[]      NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_version_pkey PRIMARY KEY (brain_version_id),
    CONSTRAINT brain_version_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT brain_version_number_key UNIQUE (target_id, version),
    -- The same configuration registered twice is the same version.
    CONSTRAINT brain_version_config_key UNIQUE (target_id, provider, model_id, system_prompt_hash, levers),
    CONSTRAINT brain_version_label_key UNIQUE (target_id, version_label),
    CONSTRAINT brain_version_number_positive CHECK (version >= 1),
    CONSTRAINT brain_version_provider_format CHECK (provider ~ '^[a-z][a-z0-9_-]*$'),
    CONSTRAINT brain_version_model_id_format CHECK (btrim(model_id) <> '' AND model_id !~ '[[:space:][:cntrl:]]'),
    CONSTRAINT brain_version_prompt_not_blank CHECK (btrim(system_prompt) <> ''),
    CONSTRAINT brain_version_prompt_hash_is_sha256 CHECK (system_prompt_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT brain_version_label_not_blank CHECK (btrim(version_label) <> '' AND version_label !~ '[[:cntrl:]]'),
    CONSTRAINT brain_version_levers_format CHECK (
        array_position(levers, NULL) IS NULL AND coalesce(array_ndims(levers), 1) = 1
        AND (cardinality(levers) = 0 OR array_to_string(levers, ',') ~ '^[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*$'))
);

-- Production-vs-eval comparisons look a prompt hash up across brain versions.
CREATE INDEX brain_version_prompt_hash_idx ON brain_version (system_prompt_hash);

-- A new version's prompt is looked up by its normal form among every brain's (brain_version_admit_v2).
CREATE INDEX brain_version_prompt_normal_idx ON brain_version (evalledger.prompt_normal_hash_v1(system_prompt));

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON brain_version TO evalledger_owner;

CREATE POLICY brain_version_read ON brain_version FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_version TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
