-- Runs that CI can trust and retry: an eval's identity says how it was judged, a failure outside the judges' content is retried rather than read back, a call is paid once (claims, started calls), and money is stored exactly.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- An eval's identity
-- =============================================================================================
-- takes-quality: the seed's four fingerprints, then where the sample was drawn from (scope_sha8,
-- the database's), how the run is judged (judges: live or recorded) and which judging of the eval
-- it is (rerun: 0 the first, one more for each `--rerun`). Runs recorded before this migration have
-- none of the three (NULL): they never occupy an identity again, and every new run has all three
-- (a run inserted without saying how it is judged is judged live, and takes live verdicts only).
ALTER TABLE eval_takes_quality_runs
    ADD COLUMN scope_sha8 char(8),
    ADD COLUMN judges text,
    ADD COLUMN rerun integer,
    ADD CONSTRAINT eval_takes_quality_runs_judges_known CHECK (judges IN ('live', 'recorded')),
    ADD CONSTRAINT eval_takes_quality_runs_scope_sha8_hex CHECK (scope_sha8 ~ '^[0-9a-f]{8}$'),
    ADD CONSTRAINT eval_takes_quality_runs_rerun_not_negative CHECK (rerun >= 0),
    ADD CONSTRAINT eval_takes_quality_runs_identity_whole
        CHECK (scope_sha8 IS NOT NULL AND judges IS NOT NULL AND rerun IS NOT NULL) NOT VALID,
    ADD CONSTRAINT eval_takes_quality_runs_identity_key
        UNIQUE (corpus_sha8, prompt_sha8, models_sha8, rubric_sha8, scope_sha8, judges, rerun);
-- Set after ADD COLUMN, so that the rows already there keep NULL.
ALTER TABLE eval_takes_quality_runs ALTER COLUMN judges SET DEFAULT 'live', ALTER COLUMN rerun SET DEFAULT 0;

-- work-quality: a snapshot's target and run id, then how it was judged.
ALTER TABLE eval_work_quality_snapshots
    ADD COLUMN judges text,
    ADD CONSTRAINT eval_work_quality_snapshots_judges_known CHECK (judges IN ('live', 'recorded')),
    ADD CONSTRAINT eval_work_quality_snapshots_judges_whole CHECK (judges IS NOT NULL) NOT VALID,
    ADD CONSTRAINT eval_work_quality_snapshots_identity_key UNIQUE (name, run_id, judges);
ALTER TABLE eval_work_quality_snapshots ALTER COLUMN judges SET DEFAULT 'live';

-- Each judge's calls in order: retry_no (the database's) numbers a judge's rows in a cycle; a row
-- with call_started is a call about to be sent, carrying the runner's estimate of its cost, which
-- counts when no answer follows. Costs are exact: no column rounds a part of a sum.
ALTER TABLE eval_takes_quality_judge_verdicts
    ADD COLUMN retry_no integer NOT NULL DEFAULT 0,
    ADD COLUMN call_started boolean NOT NULL DEFAULT false,
    ADD COLUMN estimated_cost_usd numeric,
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_estimate_iff_started
        CHECK ((estimated_cost_usd IS NOT NULL) = call_started AND estimated_cost_usd >= 0),
    -- No NaN or infinity (migration 0005's rule for every numeric column).
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_estimated_cost_usd_finite CHECK (finite_v1(estimated_cost_usd));
ALTER TABLE eval_work_quality_judge_verdicts
    ADD COLUMN retry_no integer NOT NULL DEFAULT 0,
    ADD COLUMN call_started boolean NOT NULL DEFAULT false,
    ADD COLUMN estimated_cost_usd numeric,
    ADD CONSTRAINT eval_work_quality_judge_verdicts_estimate_iff_started
        CHECK ((estimated_cost_usd IS NOT NULL) = call_started AND estimated_cost_usd >= 0),
    -- No NaN or infinity (migration 0005's rule for every numeric column).
    ADD CONSTRAINT eval_work_quality_judge_verdicts_estimated_cost_usd_finite CHECK (finite_v1(estimated_cost_usd));

-- The keys these replace, and the column types that rounded each part of a sum. On PostgreSQL 18
-- the drop guard refuses dropping any ledger constraint by name, and a type change drops and
-- rebuilds the constraints on its column: these steps, in this migration's transaction, run with
-- the drop guard off (its owner, the superuser who installed it, turns it off and back on; where
-- no superuser installed there is no drop guard). The "_once" keys keep their names: each
-- judge's row once per retry.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;
ALTER TABLE eval_takes_quality_runs DROP CONSTRAINT eval_takes_quality_runs_shas_key;
ALTER TABLE eval_work_quality_snapshots DROP CONSTRAINT eval_work_quality_snapshots_run_key;
ALTER TABLE eval_takes_quality_judge_verdicts
    DROP CONSTRAINT eval_takes_quality_judge_verdicts_once,
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_once UNIQUE (run_id, cycle, model, retry_no),
    ALTER COLUMN cost_usd TYPE numeric;
ALTER TABLE eval_work_quality_judge_verdicts
    DROP CONSTRAINT eval_work_quality_judge_verdicts_once,
    ADD CONSTRAINT eval_work_quality_judge_verdicts_once UNIQUE (snapshot_id, model, retry_no),
    ALTER COLUMN cost_usd TYPE numeric;
-- An analysis's cost was rounded to 4 decimals before its run summed them (3 x $0.00027 stored as
-- $0.0009): each part is exact now, and only the run's total is the seed's NUMERIC(10,4).
ALTER TABLE brain_analysis_log ALTER COLUMN token_cost_usd TYPE numeric;
ALTER TABLE brain_eval_judge_suggestion ALTER COLUMN cost_usd TYPE numeric;
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;

-- =============================================================================================
-- Functions (after the columns they read)
-- =============================================================================================
\ir ../sql/takes_quality/takes_quality_current_v1.sql
\ir ../sql/work_quality/work_quality_current_v1.sql
\ir ../triggers/takes_quality/takes_quality_run_identity_v1.sql
\ir ../triggers/takes_quality/takes_quality_verdict_sequence_v1.sql
\ir ../sql/takes_quality/takes_quality_receipt_v3.sql
\ir ../triggers/takes_quality/takes_quality_run_decide_v2.sql
\ir ../triggers/work_quality/work_quality_snapshot_identity_v1.sql
\ir ../triggers/work_quality/work_quality_verdict_sequence_v1.sql
\ir ../triggers/work_quality/work_quality_snapshot_decide_v3.sql
\ir ../triggers/core/run_claim_commit_refused_v1.sql
-- The ledger's recompute (migration 0006) re-derives runs by the decisions above.
\ir ../sql/core/ledger_recompute_takes_quality_v2.sql
\ir ../sql/core/ledger_recompute_work_quality_v2.sql
\ir ../sql/core/ledger_recompute_v2.sql

-- =============================================================================================
-- Run claims: one runner judges a run at a time
-- =============================================================================================
-- A claim is an uncommitted row (run_claim_commit_refused_v1): a second runner of the same run
-- waits on the first's transaction and then finds what it recorded, so no call is made twice.
CREATE TABLE run_claim (
    suite       text    NOT NULL,
    run_id      bigint  NOT NULL,
    claimed_by  name    NOT NULL DEFAULT session_user,
    backend_pid integer NOT NULL DEFAULT pg_backend_pid(),
    CONSTRAINT run_claim_pkey PRIMARY KEY (suite, run_id),
    CONSTRAINT run_claim_suite_known CHECK (suite IN ('takes-quality', 'work-quality'))
);

-- =============================================================================================
-- Triggers
-- =============================================================================================
CREATE TRIGGER eval_takes_quality_runs_15_identity BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_identity_v1();
CREATE OR REPLACE TRIGGER eval_takes_quality_runs_20_decide BEFORE UPDATE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_decide_v2();
CREATE TRIGGER eval_takes_quality_judge_verdicts_05_sequence BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_sequence_v1();
CREATE TRIGGER eval_work_quality_snapshots_15_identity BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_identity_v1();
CREATE OR REPLACE TRIGGER eval_work_quality_snapshots_20_decide BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_decide_v3();
CREATE TRIGGER eval_work_quality_judge_verdicts_05_sequence BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_sequence_v1();
CREATE CONSTRAINT TRIGGER run_claim_90_commit_refused AFTER INSERT ON run_claim
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION run_claim_commit_refused_v1();
CALL guard_append_only_v1(ARRAY['run_claim:UPDATE OR DELETE:refuse_change_v2']);

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
CALL seal_tables_v2();
-- Its journal triggers (migration 0006; docs/ledger.md): run_claim is new and four tables gained
-- columns, so their canon-v1 functions are generated again (a claim's row is rolled back, its entry too).
CALL journal_attach_v1();
CREATE POLICY run_claim_runner ON run_claim TO evalledger_runner USING (true) WITH CHECK (true);
GRANT INSERT (suite, run_id) ON run_claim TO evalledger_runner;

-- The runner says how a run is judged and which judging it is, and records a call as it starts.
GRANT INSERT (judges, rerun) ON eval_takes_quality_runs TO evalledger_runner;
GRANT INSERT (call_started, estimated_cost_usd) ON eval_takes_quality_judge_verdicts TO evalledger_runner;
GRANT INSERT (judges) ON eval_work_quality_snapshots TO evalledger_runner;
GRANT INSERT (call_started, estimated_cost_usd) ON eval_work_quality_judge_verdicts TO evalledger_runner;

REVOKE EXECUTE ON FUNCTION takes_quality_current_v1(bigint), work_quality_current_v1(bigint),
    takes_quality_run_identity_v1(), takes_quality_verdict_sequence_v1(), takes_quality_receipt_v3(bigint),
    takes_quality_run_decide_v2(), work_quality_snapshot_identity_v1(), work_quality_verdict_sequence_v1(),
    work_quality_snapshot_decide_v3(), run_claim_commit_refused_v1(), ledger_recompute_takes_quality_v2(bigint),
    ledger_recompute_work_quality_v2(eval_work_quality_snapshots), ledger_recompute_v2() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger_recompute_v2() TO evalledger_owner, evalledger_auditor;
-- The runner reads a run's current verdicts and the receipt of a run still open (not final);
-- readers read them too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_current_v1(bigint), work_quality_current_v1(bigint),
    takes_quality_receipt_v3(bigint)
    TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

RESET ROLE;
