-- One row per takes-quality run. An eval's identity is the seed's four fingerprints, then where
-- the sample was drawn from (scope_sha8, the database's), how the run is judged (judges: live or
-- recorded) and which judging of the eval it is (rerun: 0 the first, one more for each `--rerun`):
-- and how many times each judge is asked (repeats): a second identical run is INSERT ... ON
-- CONFLICT DO NOTHING. A run without completed_at was
-- stopped halfway; at completion the database computes the verdict and writes the whole receipt
-- (receipt_json). started_at (the receipt's ts, the trend's order) is the database's: no default
-- to tell apart from a supplied value, so the admission trigger refuses any and stamps now().
CREATE TABLE eval_takes_quality_runs (
    id            bigint       GENERATED ALWAYS AS IDENTITY,
    started_at    timestamptz  NOT NULL,
    completed_at  timestamptz,
    rubric_id     bigint       NOT NULL,
    target_id     varchar(16),
    corpus_source text         NOT NULL,
    corpus_path   text,
    slug_prefix   text,
    sample_limit  integer      NOT NULL,
    seed          bigint       NOT NULL,
    n_takes       integer      NOT NULL,
    corpus_sha8   char(8)      NOT NULL,
    prompt_sha8   char(8)      NOT NULL,
    models_sha8   char(8)      NOT NULL,
    rubric_sha8   char(8)      NOT NULL,
    models        text[]       NOT NULL,
    cycles_run    integer,
    verdict       text,
    overall_score numeric,
    cost_usd      numeric,
    receipt_json  jsonb,
    created_at    timestamptz  NOT NULL DEFAULT now(),
    scope_sha8    char(8),
    judges        text         DEFAULT 'live',
    rerun         integer      DEFAULT 0,
    -- How many times each judge is asked per cycle (--repeats K): a part of the eval's identity.
    repeats       integer      NOT NULL DEFAULT 1,
    CONSTRAINT eval_takes_quality_runs_pkey PRIMARY KEY (id),
    CONSTRAINT eval_takes_quality_runs_identity_key
        UNIQUE (corpus_sha8, prompt_sha8, models_sha8, rubric_sha8, scope_sha8, judges, rerun, repeats),
    CONSTRAINT eval_takes_quality_runs_repeats_range CHECK (repeats BETWEEN 1 AND 10),
    CONSTRAINT eval_takes_quality_runs_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT eval_takes_quality_runs_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT eval_takes_quality_runs_source_known CHECK (corpus_source IN ('db', 'fs')),
    CONSTRAINT eval_takes_quality_runs_path_iff_fs CHECK ((corpus_path IS NOT NULL) = (corpus_source = 'fs')),
    CONSTRAINT eval_takes_quality_runs_sample_positive CHECK (sample_limit > 0 AND n_takes > 0 AND n_takes <= sample_limit),
    CONSTRAINT eval_takes_quality_runs_shas_are_hex CHECK (
        corpus_sha8 ~ '^[0-9a-f]{8}$' AND prompt_sha8 ~ '^[0-9a-f]{8}$'
        AND models_sha8 ~ '^[0-9a-f]{8}$' AND rubric_sha8 ~ '^[0-9a-f]{8}$'),
    CONSTRAINT eval_takes_quality_runs_verdict_known CHECK (verdict IN ('pass', 'fail', 'inconclusive')),
    CONSTRAINT eval_takes_quality_runs_completed_after_start CHECK (completed_at IS NULL OR completed_at >= started_at),
    -- What the database computes at completion is absent while the run is open, present after.
    CONSTRAINT eval_takes_quality_runs_computed_iff_complete CHECK (
        (completed_at IS NULL AND cycles_run IS NULL AND verdict IS NULL AND overall_score IS NULL
         AND cost_usd IS NULL AND receipt_json IS NULL)
        OR
        (completed_at IS NOT NULL AND cycles_run IS NOT NULL AND verdict IS NOT NULL
         AND cost_usd IS NOT NULL AND receipt_json IS NOT NULL)),
    CONSTRAINT eval_takes_quality_runs_judges_known CHECK (judges IN ('live', 'recorded')),
    CONSTRAINT eval_takes_quality_runs_scope_sha8_hex CHECK (scope_sha8 ~ '^[0-9a-f]{8}$'),
    CONSTRAINT eval_takes_quality_runs_rerun_not_negative CHECK (rerun >= 0),
    CONSTRAINT eval_takes_quality_runs_identity_whole
        CHECK (scope_sha8 IS NOT NULL AND judges IS NOT NULL AND rerun IS NOT NULL),
    CONSTRAINT eval_takes_quality_runs_overall_score_finite CHECK (finite_v1(overall_score)),
    CONSTRAINT eval_takes_quality_runs_cost_usd_finite CHECK (finite_v1(cost_usd))
);

-- trend reads completed runs newest first.
CREATE INDEX eval_takes_quality_runs_started_idx ON eval_takes_quality_runs (started_at DESC);

CREATE INDEX eval_takes_quality_runs_created_idx ON eval_takes_quality_runs (created_at);

-- One open run of a brain, judges' prompt, sample scope and judges at a time (issue 37, item 2):
-- eval_takes_quality_runs_17_one_open names the open run; this index holds the rule against racing
-- sessions (no target counts as one target).
CREATE UNIQUE INDEX eval_takes_quality_runs_one_open_idx
    ON eval_takes_quality_runs ((coalesce(target_id, '')), prompt_sha8, scope_sha8, judges) WHERE completed_at IS NULL;

CREATE POLICY eval_takes_quality_runs_runner ON eval_takes_quality_runs TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON eval_takes_quality_runs TO evalledger_runner;

-- No started_at (the database's); the runner says how a run is judged and which judging it is.
GRANT INSERT (rubric_id, target_id, corpus_source, corpus_path, slug_prefix, sample_limit, seed,
              n_takes, corpus_sha8, prompt_sha8, models, judges, rerun, repeats) ON eval_takes_quality_runs TO evalledger_runner;

CREATE POLICY eval_takes_quality_runs_revops ON eval_takes_quality_runs FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_takes_quality_runs_auditor ON eval_takes_quality_runs FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_takes_quality_runs TO evalledger_revops, evalledger_auditor;
