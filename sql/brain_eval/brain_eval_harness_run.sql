-- One row per harness run (`evalledger run brain-eval`): the registered brain version it called,
-- the catalog and questions it asked, which views it hashed, from where, and whether its answers
-- are live or recorded.
CREATE TABLE brain_eval_harness_run (
    eval_run_id      uuid        NOT NULL,
    brain_version_id bigint      NOT NULL,
    catalog_version  varchar(32) NOT NULL,
    question_ids     text[]      NOT NULL,
    contracts        jsonb       NOT NULL,
    answers          text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- The tier clock: the run's own recording time (retention_clock_v1 stamps it).
    run_created_at   timestamptz NOT NULL,
    -- How many times each judge drafts on each answer (--repeats K, 1 to 10; every run before
    -- repeats asked each once).
    repeats          integer     NOT NULL DEFAULT 1,
    CONSTRAINT brain_eval_harness_run_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_harness_run_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_harness_run_brain_version_fkey FOREIGN KEY (brain_version_id)
        REFERENCES brain_version (brain_version_id),
    CONSTRAINT brain_eval_harness_run_catalog_fkey FOREIGN KEY (catalog_version)
        REFERENCES brain_eval_catalog (catalog_version),
    -- Live calls, or the recordings shipped with the demo: a run is one or the other.
    CONSTRAINT brain_eval_harness_run_answers_known CHECK (answers IN ('live', 'recorded')),
    CONSTRAINT brain_eval_harness_run_questions_distinct CHECK (
        array_position(question_ids, NULL) IS NULL AND cardinality(question_ids) > 0
        AND evalledger.capture_all_distinct_v1(question_ids)),
    -- What `contracts hash --json` prints: the hash, its canonical form, the source, every view.
    CONSTRAINT brain_eval_harness_run_contracts_shape CHECK (
        jsonb_typeof(contracts) = 'object' AND contracts ?& ARRAY['brain_view_contracts_hash', 'source', 'views']
        AND jsonb_typeof(contracts -> 'views') = 'array' AND jsonb_array_length(contracts -> 'views') > 0),
    CONSTRAINT brain_eval_harness_run_repeats_range CHECK (repeats BETWEEN 1 AND 10)
);

-- Harness runs as seed 002's role table has runs: the runner inserts (the columns it observes)
-- and reads; a reviewer reads its own runs' records; RevOps the hot tier; auditors everything.
CREATE POLICY brain_eval_harness_run_runner ON brain_eval_harness_run TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON brain_eval_harness_run TO evalledger_runner;
GRANT INSERT (eval_run_id, brain_version_id, catalog_version, question_ids, contracts, answers)
    ON brain_eval_harness_run TO evalledger_runner;
GRANT INSERT (repeats) ON brain_eval_harness_run TO evalledger_runner;

-- A reviewer's: its own runs' (brain_eval_log's own policies decide), in the hot tier.
CREATE POLICY brain_eval_harness_run_readers ON brain_eval_harness_run FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));

CREATE POLICY brain_eval_harness_run_revops ON brain_eval_harness_run FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_harness_run_auditor ON brain_eval_harness_run FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_harness_run TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
