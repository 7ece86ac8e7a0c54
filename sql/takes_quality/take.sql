-- The corpus: one row per take (a claim someone holds, with a kind, a weight and a source).
-- take_sha is the SHA-256 of the take's seven fields, so loading a file twice adds nothing.
CREATE TABLE take (
    take_id   bigint      GENERATED ALWAYS AS IDENTITY,
    take_sha  char(64)    NOT NULL,
    slug      text        NOT NULL,
    kind      text        NOT NULL,
    holder    text        NOT NULL,
    weight    numeric     NOT NULL,
    since     text        NOT NULL,
    source    text        NOT NULL,
    claim     text        NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT take_pkey PRIMARY KEY (take_id),
    CONSTRAINT take_sha_key UNIQUE (take_sha),
    CONSTRAINT take_sha_is_sha256 CHECK (take_sha ~ '^[0-9a-f]{64}$'),
    CONSTRAINT take_slug_format CHECK (slug ~ '^[^\s]+$'),
    CONSTRAINT take_kind_format CHECK (kind ~ '^[a-z][a-z0-9_-]*$'),
    CONSTRAINT take_holder_not_blank CHECK (btrim(holder) <> ''),
    CONSTRAINT take_weight_range CHECK (weight BETWEEN 0 AND 1),
    CONSTRAINT take_weight_finite CHECK (finite_v1(weight)),
    CONSTRAINT take_since_format CHECK (since ~ '^\d{4}(-\d{2}(-\d{2})?)?$'),
    CONSTRAINT take_source_not_blank CHECK (btrim(source) <> ''),
    CONSTRAINT take_claim_not_blank CHECK (btrim(claim) <> '')
);

-- --slug-prefix filters the corpus by LIKE 'prefix%'.
CREATE INDEX take_slug_prefix_idx ON take (slug text_pattern_ops);

-- The runner loads the corpus, starts runs, records verdicts, completes runs, and reads them
-- back; it writes only the columns it observes (the rest are the database's).
CREATE POLICY take_runner ON take TO evalledger_runner USING (true) WITH CHECK (true);
GRANT SELECT ON take TO evalledger_runner;
GRANT INSERT (take_sha, slug, kind, holder, weight, since, source, claim) ON take TO evalledger_runner;

-- RevOps reads the hot tier; auditors read everything. Agents: nothing.
CREATE POLICY take_revops ON take FOR SELECT TO evalledger_revops USING (loaded_at >= evalledger.hot_tier_start_v1());

CREATE POLICY take_auditor ON take FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON take TO evalledger_revops, evalledger_auditor;
