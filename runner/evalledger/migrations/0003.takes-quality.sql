-- The takes-quality suite (seed 000): a corpus of takes, runs with their receipts, one row per judge verdict, the v1.0 rubric.

SET LOCAL ROLE evalledger_owner;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- Tables
-- =============================================================================================
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
    CONSTRAINT take_since_format CHECK (since ~ '^\d{4}(-\d{2}(-\d{2})?)?$'),
    CONSTRAINT take_source_not_blank CHECK (btrim(source) <> ''),
    CONSTRAINT take_claim_not_blank CHECK (btrim(claim) <> '')
);

-- One row per takes-quality run. The four fingerprints identify an eval: a second identical run
-- is INSERT ... ON CONFLICT DO NOTHING. A run without completed_at was stopped halfway; at
-- completion the database computes the verdict and writes the whole receipt (receipt_json).
CREATE TABLE eval_takes_quality_runs (
    id            bigint       GENERATED ALWAYS AS IDENTITY,
    started_at    timestamptz  NOT NULL DEFAULT now(),
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
    CONSTRAINT eval_takes_quality_runs_pkey PRIMARY KEY (id),
    CONSTRAINT eval_takes_quality_runs_shas_key UNIQUE (corpus_sha8, prompt_sha8, models_sha8, rubric_sha8),
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
         AND cost_usd IS NOT NULL AND receipt_json IS NOT NULL))
);

-- One row per judge verdict: a model's reply (or failure) for one cycle of a run. The runner
-- inserts it as it arrives; the database decides whether it contributes and why not.
CREATE TABLE eval_takes_quality_judge_verdicts (
    verdict_id    bigint       GENERATED ALWAYS AS IDENTITY,
    run_id        bigint       NOT NULL,
    cycle         integer      NOT NULL,
    model         text         NOT NULL,
    family        text         NOT NULL,
    same_family   boolean      NOT NULL,
    recorded      boolean      NOT NULL,
    structured    boolean      NOT NULL DEFAULT false,
    response_json jsonb,
    raw_excerpt   text,
    scores        jsonb,
    feedback      text,
    improvements  jsonb,
    contributes   boolean      NOT NULL,
    error_kind    text,
    error_message text,
    input_tokens  integer      NOT NULL DEFAULT 0,
    output_tokens integer      NOT NULL DEFAULT 0,
    cost_usd      numeric(14,8) NOT NULL DEFAULT 0,
    latency_ms    integer      NOT NULL DEFAULT 0,
    attempts      integer      NOT NULL DEFAULT 0,
    created_at    timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT eval_takes_quality_judge_verdicts_pkey PRIMARY KEY (verdict_id),
    CONSTRAINT eval_takes_quality_judge_verdicts_once UNIQUE (run_id, cycle, model),
    CONSTRAINT eval_takes_quality_judge_verdicts_run_fkey FOREIGN KEY (run_id) REFERENCES eval_takes_quality_runs (id),
    CONSTRAINT eval_takes_quality_judge_verdicts_cycle_positive CHECK (cycle >= 1),
    CONSTRAINT eval_takes_quality_judge_verdicts_error_kind_known CHECK (error_kind IN (
        'provider_error', 'budget_exhausted', 'parse_failed', 'incomplete_scores', 'out_of_scale')),
    CONSTRAINT eval_takes_quality_judge_verdicts_contributes_iff_no_error CHECK (
        contributes = (error_kind IS NULL) AND contributes = (scores IS NOT NULL)),
    CONSTRAINT eval_takes_quality_judge_verdicts_counts_not_negative CHECK (
        input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0 AND attempts >= 0)
);

-- =============================================================================================
-- Indexes
-- =============================================================================================
-- --slug-prefix filters the corpus by LIKE 'prefix%'.
CREATE INDEX take_slug_prefix_idx ON take (slug text_pattern_ops);
-- trend reads completed runs newest first.
CREATE INDEX eval_takes_quality_runs_started_idx ON eval_takes_quality_runs (started_at DESC);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
\ir ../suites/takes_quality/sql/takes_quality_run_admit_v1.sql
\ir ../suites/takes_quality/sql/takes_quality_verdict_admit_v1.sql
\ir ../suites/takes_quality/sql/takes_quality_decide_v1.sql
CREATE TRIGGER eval_takes_quality_runs_10_admit BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_admit_v1();
CREATE TRIGGER eval_takes_quality_runs_10_complete BEFORE UPDATE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_complete_v1();
CREATE TRIGGER eval_takes_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_admit_v1();

-- Append-only guards. These tables are not in purgeable_v1's retention rule, so their rows are
-- never deleted; TRUNCATE is refused for every role.
CREATE TRIGGER take_00_append_only BEFORE UPDATE OR DELETE ON take
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER take_00_no_truncate BEFORE TRUNCATE ON take
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER eval_takes_quality_runs_00_append_only BEFORE DELETE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER eval_takes_quality_runs_00_no_truncate BEFORE TRUNCATE ON eval_takes_quality_runs
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER eval_takes_quality_judge_verdicts_00_append_only BEFORE UPDATE OR DELETE ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION refuse_change_v1();
CREATE TRIGGER eval_takes_quality_judge_verdicts_00_no_truncate BEFORE TRUNCATE ON eval_takes_quality_judge_verdicts
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_v1();

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- One ALTER TABLE per table enables and forces RLS and sets every trigger ENABLE ALWAYS, so the
-- DDL guard only ever sees the table in its final state.
ALTER TABLE take ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER take_00_append_only, ENABLE ALWAYS TRIGGER take_00_no_truncate;
ALTER TABLE eval_takes_quality_runs ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER eval_takes_quality_runs_00_append_only,
    ENABLE ALWAYS TRIGGER eval_takes_quality_runs_00_no_truncate,
    ENABLE ALWAYS TRIGGER eval_takes_quality_runs_10_admit,
    ENABLE ALWAYS TRIGGER eval_takes_quality_runs_10_complete;
ALTER TABLE eval_takes_quality_judge_verdicts ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER eval_takes_quality_judge_verdicts_00_append_only,
    ENABLE ALWAYS TRIGGER eval_takes_quality_judge_verdicts_00_no_truncate,
    ENABLE ALWAYS TRIGGER eval_takes_quality_judge_verdicts_10_admit;

-- The owner sees everything through its own policy.
CREATE POLICY take_owner_all ON take TO evalledger_owner USING (true) WITH CHECK (true);
CREATE POLICY eval_takes_quality_runs_owner_all ON eval_takes_quality_runs TO evalledger_owner USING (true) WITH CHECK (true);
CREATE POLICY eval_takes_quality_judge_verdicts_owner_all ON eval_takes_quality_judge_verdicts TO evalledger_owner
    USING (true) WITH CHECK (true);

-- The runner loads the corpus, starts runs, records verdicts, completes runs, and reads them
-- back; it writes only the columns it observes (the rest are the database's).
CREATE POLICY take_runner ON take TO evalledger_runner USING (true) WITH CHECK (true);
CREATE POLICY eval_takes_quality_runs_runner ON eval_takes_quality_runs TO evalledger_runner USING (true) WITH CHECK (true);
CREATE POLICY eval_takes_quality_judge_verdicts_runner ON eval_takes_quality_judge_verdicts TO evalledger_runner
    USING (true) WITH CHECK (true);
GRANT SELECT ON take, eval_takes_quality_runs, eval_takes_quality_judge_verdicts TO evalledger_runner;
GRANT INSERT (take_sha, slug, kind, holder, weight, since, source, claim) ON take TO evalledger_runner;
GRANT INSERT (started_at, rubric_id, target_id, corpus_source, corpus_path, slug_prefix, sample_limit, seed,
              n_takes, corpus_sha8, prompt_sha8, models) ON eval_takes_quality_runs TO evalledger_runner;
GRANT UPDATE (completed_at) ON eval_takes_quality_runs TO evalledger_runner;
GRANT INSERT (run_id, cycle, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
              input_tokens, output_tokens, cost_usd, latency_ms, attempts)
    ON eval_takes_quality_judge_verdicts TO evalledger_runner;

-- RevOps reads the hot tier (24 months); auditors read everything. Agents: nothing.
CREATE POLICY take_revops ON take FOR SELECT TO evalledger_revops USING (loaded_at >= now() - interval '24 months');
CREATE POLICY eval_takes_quality_runs_revops ON eval_takes_quality_runs FOR SELECT TO evalledger_revops
    USING (started_at >= now() - interval '24 months');
CREATE POLICY eval_takes_quality_judge_verdicts_revops ON eval_takes_quality_judge_verdicts FOR SELECT TO evalledger_revops
    USING (EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r WHERE r.id = eval_takes_quality_judge_verdicts.run_id));
CREATE POLICY take_auditor ON take FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY eval_takes_quality_runs_auditor ON eval_takes_quality_runs FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY eval_takes_quality_judge_verdicts_auditor ON eval_takes_quality_judge_verdicts FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON take, eval_takes_quality_runs, eval_takes_quality_judge_verdicts TO evalledger_revops, evalledger_auditor;

-- Functions: nothing is PUBLIC; the runner reads a cycle's verdict (the early stop) and a receipt.
REVOKE EXECUTE ON FUNCTION takes_quality_run_admit_v1(), takes_quality_verdict_admit_v1(),
    takes_quality_run_complete_v1(), takes_quality_cycle_v1(bigint, integer),
    takes_quality_receipt_v1(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION takes_quality_cycle_v1(bigint, integer), takes_quality_receipt_v1(bigint)
    TO evalledger_runner;

-- =============================================================================================
-- Seed data: the takes-quality v1.0 rubric
-- =============================================================================================

-- Seed 000's rule as data: 5 dimensions scored 1-10 by each judge; pass when every dimension's
-- mean is >= 7 and its minimum across contributing models >= 5; inconclusive when fewer than
-- 2/3 of the panel contributed complete scores. The judge instructions are rendered into the
-- prompt templates (runner/evalledger/templates/takes_quality_*.j2).
INSERT INTO rubric (suite, version, definition) VALUES ('takes-quality', 'v1.0', $rubric$
{
  "suite": "takes-quality",
  "version": "v1.0",
  "scale": {"min": 1, "max": 10},
  "dimensions": [
    {"key": "accuracy", "label": "accuracy", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each claim stated correctly and faithfully to what its source supports?"},
    {"key": "attribution", "label": "attribution", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each take attributed to the right holder, and is its source named and plausible?"},
    {"key": "weight_calibration", "label": "weight calibration", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Does each weight (0 to 1) match how firmly the holder holds the claim and how well it is supported?"},
    {"key": "kind_classification", "label": "kind classification", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each take's kind right (a fact is verifiable, a take is an opinion, a bet is a prediction, a hunch is a weak belief)?"},
    {"key": "signal_density", "label": "signal density", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Does each take carry a specific, non-trivial claim worth keeping, rather than filler or a duplicate?"}
  ],
  "pass_rule": {"every_dim_mean_at_least": 7, "every_dim_min_at_least": 5},
  "quorum": {"min_contributing_fraction": [2, 3]},
  "judge_instructions": "You are a strict, independent reviewer of a knowledge base's takes layer. A take is one claim someone holds, recorded with its kind, holder, weight (0 to 1), the date since when it is held, and its source. Judge the sample as a whole: score every dimension from the scale's minimum (very poor) to its maximum (excellent), using whole numbers. Be critical: reserve 9 and 10 for samples with no visible problems. Name concrete improvements to the extraction that produced these takes.",
  "max_improvements": 5
}
$rubric$);

RESET ROLE;
