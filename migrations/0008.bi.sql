-- The readers' side (issue 22): by-month panel tables kept at completion, so a dashboard panel costs what its months cost however many runs the ledger holds; the BI views' _v2 (most-failing ranked per brain and catalog version, the stale-fixture pass rate as a column, brain_under_test everywhere, prompt drift as a history, calibration by quarter), judge-versus-reviewer agreement, cost and stale-fixture by month, the takes-quality trend, and a comment with its unit on every column of every view.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- The by-month panel tables (ledger tables: derived at completion, never written by a person)
-- =============================================================================================
-- One row per month key: a brain, a run trigger, the UTC month the runs started in (what the
-- dashboards' date range filters) and the UTC month they were recorded in (their tier clock's
-- month: a hot-tier reader reads the months wholly in the hot tier, whole_hot_months_from_v1),
-- and for runs the reviewer (a reviewer reads its own). Counters only, so months add up to any
-- span, and a span costs what its months cost: the number of rows is bounded by months x brains
-- x triggers (x reviewers for runs, x questions, x judges), not by the number of runs. The completion
-- trigger adds each run as it completes (brain_eval_by_month_complete_v1); the purge recounts the
-- months it took runs from (brain_eval_by_month_purge_v1); brain_eval_by_month_recount_v1 says
-- where a table differs from the rows (none, unless something went around the code role).
CREATE TABLE brain_eval_runs_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    reviewer_user_id         uuid             NOT NULL,
    runs                     bigint           NOT NULL,
    runs_pass                bigint           NOT NULL,
    runs_pass_with_notes     bigint           NOT NULL,
    runs_conditional         bigint           NOT NULL,
    runs_fail                bigint           NOT NULL,
    token_cost_usd           numeric          NOT NULL,
    reviewer_hours_spent     numeric          NOT NULL,
    runs_with_hours          bigint           NOT NULL,
    stale_questions          bigint           NOT NULL,
    stale_recognised         bigint           NOT NULL,
    runs_with_stale          bigint           NOT NULL,
    runs_all_recognised      bigint           NOT NULL,
    sev2_runs                bigint           NOT NULL,
    rating_1                 bigint           NOT NULL,
    rating_2                 bigint           NOT NULL,
    rating_3                 bigint           NOT NULL,
    rating_4                 bigint           NOT NULL,
    rating_5                 bigint           NOT NULL,
    CONSTRAINT brain_eval_runs_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, reviewer_user_id),
    -- No NaN or infinity (migration 0005's rule for every numeric column).
    CONSTRAINT brain_eval_runs_by_month_token_cost_usd_finite CHECK (finite_v1(token_cost_usd)),
    CONSTRAINT brain_eval_runs_by_month_reviewer_hours_spent_finite CHECK (finite_v1(reviewer_hours_spent))
);

CREATE TABLE brain_eval_questions_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    question_catalog_version varchar(32)      NOT NULL,
    question_id              varchar(16)      NOT NULL,
    runs_seen                bigint           NOT NULL,
    runs_failed              bigint           NOT NULL,
    CONSTRAINT brain_eval_questions_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, question_catalog_version, question_id)
);

CREATE TABLE brain_eval_agreement_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    judge_model              text             NOT NULL,
    unsupported_j0_r0        bigint           NOT NULL,
    unsupported_j0_r1        bigint           NOT NULL,
    unsupported_j0_r2        bigint           NOT NULL,
    unsupported_j1_r0        bigint           NOT NULL,
    unsupported_j1_r1        bigint           NOT NULL,
    unsupported_j1_r2        bigint           NOT NULL,
    unsupported_j2_r0        bigint           NOT NULL,
    unsupported_j2_r1        bigint           NOT NULL,
    unsupported_j2_r2        bigint           NOT NULL,
    diagnosis_j0_r0          bigint           NOT NULL,
    diagnosis_j0_r1          bigint           NOT NULL,
    diagnosis_j0_r2          bigint           NOT NULL,
    diagnosis_j1_r0          bigint           NOT NULL,
    diagnosis_j1_r1          bigint           NOT NULL,
    diagnosis_j1_r2          bigint           NOT NULL,
    diagnosis_j2_r0          bigint           NOT NULL,
    diagnosis_j2_r1          bigint           NOT NULL,
    diagnosis_j2_r2          bigint           NOT NULL,
    claims_pairs             bigint           NOT NULL,
    claims_abs_difference    bigint           NOT NULL,
    CONSTRAINT brain_eval_agreement_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, judge_model)
);

-- =============================================================================================
-- Indexes
-- =============================================================================================
-- A hot-tier reader's months, and the purge's recount, find rows by their recording month.
CREATE INDEX brain_eval_runs_by_month_recorded_idx ON brain_eval_runs_by_month (recorded_month);
-- Prompt drift as a history looks up each brain's latest production analysis before each month's
-- end: production traffic alone, newest first (the eval analyses, 30 per run, are not in it).
CREATE INDEX brain_analysis_log_production_idx ON brain_analysis_log (brain, produced_at DESC)
    WHERE origin = 'production';
-- The work-quality panel reads the latest snapshots of every target newest first.
CREATE INDEX eval_work_quality_snapshots_at_idx ON eval_work_quality_snapshots (at DESC);

-- =============================================================================================
-- Functions and triggers
-- =============================================================================================
\ir ../sql/core/utc_month_v1.sql
\ir ../sql/core/whole_hot_months_from_v1.sql
\ir ../sql/core/cohen_kappa_v1.sql
\ir ../sql/core/weighted_kappa_v1.sql
\ir ../sql/core/agreement_measures_v1.sql
\ir ../sql/brain_eval/brain_eval_run_facts_v1.sql
\ir ../sql/brain_eval/brain_eval_question_facts_v1.sql
\ir ../sql/brain_eval/brain_eval_agreement_pairs_v1.sql
\ir ../sql/brain_eval/brain_eval_agreement_facts_v1.sql
\ir ../sql/brain_eval/brain_eval_by_month_add_v1.sql
\ir ../sql/brain_eval/brain_eval_by_month_recount_v1.sql
\ir ../triggers/brain_eval/brain_eval_by_month_complete_v1.sql
\ir ../triggers/brain_eval/brain_eval_by_month_purge_v1.sql
-- After the decision (brain_eval_log_20_decide, BEFORE) and before the journal (_90_).
CREATE TRIGGER brain_eval_log_30_by_month AFTER UPDATE OF completed_at ON brain_eval_log
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION brain_eval_by_month_complete_v1();
CREATE TRIGGER brain_eval_log_30_by_month_purge AFTER DELETE ON brain_eval_log
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION brain_eval_by_month_purge_v1();

-- The runs completed before this migration.
SELECT brain_eval_by_month_add_v1(ARRAY(SELECT l.eval_run_id FROM brain_eval_log l WHERE l.completed_at IS NOT NULL));

-- =============================================================================================
-- The panels: views (the BI contract) over functions with the dashboards' filters
-- =============================================================================================
-- As in the _v1 panels, each view reads a SECURITY INVOKER function, so every reader reads
-- through its own row-level security on PostgreSQL 14 too. The functions over the by-month tables
-- set their search_path (they are aggregates of bounded size: nothing to push down); the per-run
-- ones are plain SQL with every operator schema-qualified, so a BI tool's filters push down.
-- Every _v1 view stays as it is: BI tools read them.
\ir ../sql/brain_eval/brain_trend_rows_v1.sql
\ir ../sql/brain_eval/most_failing_questions_rows_v2.sql
\ir ../sql/brain_eval/most_failing_questions_v2.sql
\ir ../sql/brain_eval/stale_fixture_pass_rate_rows_v2.sql
\ir ../sql/brain_eval/stale_fixture_pass_rate_v2.sql
\ir ../sql/brain_eval/stale_fixture_by_month_rows_v1.sql
\ir ../sql/brain_eval/stale_fixture_by_month_v1.sql
\ir ../sql/brain_eval/reviewer_calibration_rows_v2.sql
\ir ../sql/brain_eval/reviewer_calibration_v2.sql
\ir ../sql/brain_eval/cost_by_month_rows_v1.sql
\ir ../sql/brain_eval/cost_by_month_v1.sql
\ir ../sql/brain_eval/prompt_drift_rows_v2.sql
\ir ../sql/brain_eval/prompt_drift_v2.sql
\ir ../sql/brain_eval/judge_agreement_rows_v1.sql
\ir ../sql/brain_eval/judge_agreement_v1.sql
\ir ../sql/takes_quality/takes_quality_trend_rows_v1.sql
\ir ../sql/takes_quality/takes_quality_trend_v1.sql
DO $invoker$
DECLARE
    v text;
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        FOREACH v IN ARRAY ARRAY['most_failing_questions_v2', 'stale_fixture_pass_rate_v2', 'stale_fixture_by_month_v1',
                                 'reviewer_calibration_v2', 'cost_by_month_v1', 'prompt_drift_v2',
                                 'judge_agreement_v1', 'takes_quality_trend_v1'] LOOP
            EXECUTE format('ALTER VIEW evalledger.%I SET (security_invoker = true)', v);
        END LOOP;
    END IF;
END
$invoker$;

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
CALL seal_tables_v2();
-- Their journal triggers (migration 0006; docs/ledger.md): the panel tables are ledger tables.
CALL journal_attach_v1();
-- Only the code role writes the panel tables (through the functions above): the owner role reads
-- them and nothing more (seal_tables_v2 gives it SELECT alone; said again here, where it matters).
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON brain_eval_runs_by_month, brain_eval_questions_by_month,
    brain_eval_agreement_by_month FROM evalledger_owner;
-- The auditor reads every month; RevOps the months wholly in the hot tier; a reviewer its own
-- runs' months wholly in the hot tier, in the runs table (the one keyed by reviewer). The
-- questions and agreement tables are not a reviewer's: they count other reviewers' runs, and the
-- agreement counts drafts a reviewer's policy on brain_eval_judge_suggestion would not show it.
CREATE POLICY brain_eval_runs_by_month_auditor ON brain_eval_runs_by_month FOR SELECT TO evalledger_auditor USING (true);
CREATE POLICY brain_eval_runs_by_month_revops ON brain_eval_runs_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
CREATE POLICY brain_eval_runs_by_month_reviewer ON brain_eval_runs_by_month FOR SELECT TO evalledger_reviewer
    USING (recorded_month >= evalledger.whole_hot_months_from_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
CREATE POLICY brain_eval_questions_by_month_auditor ON brain_eval_questions_by_month FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY brain_eval_questions_by_month_revops ON brain_eval_questions_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
CREATE POLICY brain_eval_agreement_by_month_auditor ON brain_eval_agreement_by_month FOR SELECT TO evalledger_auditor
    USING (true);
CREATE POLICY brain_eval_agreement_by_month_revops ON brain_eval_agreement_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
GRANT SELECT ON brain_eval_runs_by_month TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT SELECT ON brain_eval_questions_by_month, brain_eval_agreement_by_month TO evalledger_revops, evalledger_auditor;
-- The auditor reads the reviewer registry: who reviewed (display names) is part of the audit.
-- RevOps reads reviewer ids, as before; a reviewer reads itself (reviewer_self).
CREATE POLICY reviewer_auditor ON reviewer FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON reviewer TO evalledger_auditor;

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON most_failing_questions_v2, stale_fixture_pass_rate_v2, stale_fixture_by_month_v1, reviewer_calibration_v2,
    cost_by_month_v1, prompt_drift_v2, judge_agreement_v1, takes_quality_trend_v1 FROM PUBLIC;
GRANT SELECT ON stale_fixture_pass_rate_v2, stale_fixture_by_month_v1, reviewer_calibration_v2, cost_by_month_v1
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT SELECT ON most_failing_questions_v2, prompt_drift_v2, judge_agreement_v1, takes_quality_trend_v1
    TO evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION whole_hot_months_from_v1(), utc_month_v1(timestamptz), criterion_met_v1(jsonb, numeric),
    brain_trend_rows_v1(text, date, date, text, integer),
    stale_fixture_pass_rate_rows_v2(text, date, date, text, integer),
    stale_fixture_by_month_rows_v1(text, date, date, text),
    reviewer_calibration_rows_v2(text, date, date, text, boolean),
    cost_by_month_rows_v1(text, date, date, text)
    TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION most_failing_questions_rows_v2(text, date, date, text), prompt_drift_rows_v2(text, date, date, text),
    cohen_kappa_v1(bigint[]), weighted_kappa_v1(bigint[]),
    agreement_measures_v1(bigint[], bigint[], bigint, bigint),
    brain_eval_agreement_pairs_v1(uuid[]), brain_eval_agreement_facts_v1(uuid[]),
    judge_agreement_rows_v1(text, date, date, text, boolean),
    takes_quality_trend_rows_v1(text, date, date, integer)
    TO evalledger_revops, evalledger_auditor;
-- Every reader may ask where the hot tier's whole months begin (the dashboards say so).
GRANT EXECUTE ON FUNCTION hot_tier_v1() TO evalledger_auditor;
-- The recount reads the whole ledger: an audit check, the auditor's and the owner role's.
GRANT EXECUTE ON FUNCTION brain_eval_by_month_recount_v1() TO evalledger_auditor, evalledger_owner;

-- =============================================================================================
-- The BI contract explains itself: a comment with its unit on every column of every view
-- =============================================================================================
-- The _v1 views keep their definitions; their columns get comments here (the new views' come
-- with their files). Names carry units: *_rate 0-1, *_pct 0-100, *_usd US dollars, *_hours hours.
COMMENT ON COLUMN brain_quarterly_trend_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_quarterly_trend_v1.recency_rank IS 'Rank, 1 = the brain''s latest completed quarterly run, up to 8.';
COMMENT ON COLUMN brain_quarterly_trend_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN brain_quarterly_trend_v1.quarter IS 'Text YYYY-QN: the UTC quarter the run started in.';
COMMENT ON COLUMN brain_quarterly_trend_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN brain_quarterly_trend_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN brain_quarterly_trend_v1.model_id IS 'The model the brain ran on, e.g. claude-sonnet-4-6.';
COMMENT ON COLUMN brain_quarterly_trend_v1.system_prompt_hash IS 'SHA-256 hex of the brain''s system prompt.';
COMMENT ON COLUMN brain_quarterly_trend_v1.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN brain_quarterly_trend_v1.decision IS 'pass, pass_with_notes, conditional or fail, as the database decided.';
COMMENT ON COLUMN brain_quarterly_trend_v1.citation_rate IS 'Rate, 0-1: the mean of the questions'' citation_rate (share of numerical claims citing a source given). Exact; round for display.';
COMMENT ON COLUMN brain_quarterly_trend_v1.hallucination_rate IS 'Rate, 0-1: hallucinations_detected / total_claims over the run (NULL with no claims).';
COMMENT ON COLUMN brain_quarterly_trend_v1.staleness_recognition_rate IS 'Rate, 0-1: stale-fixture questions recognised / stale-fixture questions (NULL with none).';
COMMENT ON COLUMN brain_quarterly_trend_v1.diagnosis_accuracy_mean IS 'Score, 0-1 (each question 0, 0.5 or 1): the mean over questions of a diagnosis type (NULL with none).';
COMMENT ON COLUMN brain_quarterly_trend_v1.lever_mapping_correctness IS 'Rate, 0-1: questions with 0 lever violations / questions scored for it (AGT-902 only; NULL elsewhere).';
COMMENT ON COLUMN brain_quarterly_trend_v1.confidence_calibration_in_band IS 'Rate, 0-1: share of questions whose confidence distribution is in the rubric''s band.';
COMMENT ON COLUMN brain_quarterly_trend_v1.narrative_coherence_mean IS 'Score, 1-5: the mean reviewer narrative-coherence rating.';
COMMENT ON COLUMN most_failing_questions_v1.question_id IS 'The catalog question id, e.g. EVAL-Q01, over every brain and catalog version (most_failing_questions_v2 keeps them apart).';
COMMENT ON COLUMN most_failing_questions_v1.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN most_failing_questions_v1.runs_failed IS 'Count of those runs in which the question did not pass.';
COMMENT ON COLUMN most_failing_questions_v1.fail_pct IS 'Percent, 0-100, two decimals: 100 * runs_failed / runs_seen.';
COMMENT ON COLUMN most_failing_questions_v1.fail_rank IS 'Rank, 1 = most failing (SQL rank(): ties share a rank).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_questions IS 'Count of the run''s stale-fixture questions.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_recognised IS 'Count of stale-fixture questions recognised.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.stale_missed IS 'Count of stale-fixture questions missed.';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.all_recognised IS 'Boolean: every stale-fixture question recognised (NULL when the run had none).';
COMMENT ON COLUMN stale_fixture_pass_rate_v1.sev2_incident IS 'Boolean: at least one stale-fixture question missed (a sev-2 incident by seed 002).';
COMMENT ON COLUMN reviewer_calibration_v1.reviewer_user_id IS 'The reviewer (reviewer.reviewer_user_id).';
COMMENT ON COLUMN reviewer_calibration_v1.runs_reviewed IS 'Count of completed runs the reviewer reviewed.';
COMMENT ON COLUMN reviewer_calibration_v1.ratings IS 'Count of narrative-coherence ratings given.';
COMMENT ON COLUMN reviewer_calibration_v1.rating_1 IS 'Count of ratings of 1 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_2 IS 'Count of ratings of 2 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_3 IS 'Count of ratings of 3 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_4 IS 'Count of ratings of 4 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_5 IS 'Count of ratings of 5 (scale 1-5).';
COMMENT ON COLUMN reviewer_calibration_v1.rating_mean IS 'Mean rating, 1-5 scale, four decimals.';
COMMENT ON COLUMN reviewer_calibration_v1.rating_stddev IS 'Sample standard deviation, in rating points (1-5 scale), four decimals; NULL with fewer than 2 ratings.';
COMMENT ON COLUMN cost_per_run_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN cost_per_run_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN cost_per_run_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN cost_per_run_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN cost_per_run_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN cost_per_run_v1.question_count IS 'Count of questions in the run.';
COMMENT ON COLUMN cost_per_run_v1.token_cost_usd IS 'USD: the token cost of the run''s brain calls, summed from its analyses.';
COMMENT ON COLUMN cost_per_run_v1.reviewer_hours_spent IS 'Hours: reported by the reviewer at sign-off (NULL if not reported).';
COMMENT ON COLUMN cost_per_run_v1.token_cost_per_question_usd IS 'USD per question, four decimals: token_cost_usd / question_count.';
COMMENT ON COLUMN prompt_drift_v1.brain IS 'The brain (target_id); brain_under_test in every other view and in prompt_drift_v2.';
COMMENT ON COLUMN prompt_drift_v1.production_prompt_hash IS 'SHA-256 hex of the prompt of the brain''s latest production analysis (NULL: none).';
COMMENT ON COLUMN prompt_drift_v1.production_last_seen_at IS 'When that production analysis was produced (timestamptz).';
COMMENT ON COLUMN prompt_drift_v1.eval_prompt_hash IS 'SHA-256 hex of the prompt of the brain''s last passing eval (pass or pass_with_notes).';
COMMENT ON COLUMN prompt_drift_v1.eval_prompt_version_label IS 'That run''s system_prompt_version_label, if any.';
COMMENT ON COLUMN prompt_drift_v1.eval_run_id IS 'That passing run.';
COMMENT ON COLUMN prompt_drift_v1.eval_decision IS 'Its decision: pass or pass_with_notes.';
COMMENT ON COLUMN prompt_drift_v1.eval_started_at IS 'When that run started (timestamptz).';
COMMENT ON COLUMN prompt_drift_v1.prompt_drift IS 'Boolean: production runs a prompt that is not the last one that passed (NULL without production traffic).';
COMMENT ON COLUMN work_quality_history_v1.name IS 'The target (a bot or feature) the snapshots are of.';
COMMENT ON COLUMN work_quality_history_v1.kind IS 'bot or feature.';
COMMENT ON COLUMN work_quality_history_v1.persona IS 'The persona the work was done for (empty when none).';
COMMENT ON COLUMN work_quality_history_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN work_quality_history_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN work_quality_history_v1.origin IS 'run (judged here) or import (a history file brought in).';
COMMENT ON COLUMN work_quality_history_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN work_quality_history_v1.models IS 'The judge panel, provider/model each.';
COMMENT ON COLUMN work_quality_history_v1.efficacy IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the efficacy dimension.';
COMMENT ON COLUMN work_quality_history_v1.completeness IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the completeness dimension.';
COMMENT ON COLUMN work_quality_history_v1.output_quality IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the output_quality dimension.';
COMMENT ON COLUMN work_quality_history_v1.restraint IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the restraint dimension.';
COMMENT ON COLUMN work_quality_history_v1.reliability IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the reliability dimension.';
COMMENT ON COLUMN work_quality_history_v1.value_for_money IS 'Score, 0-1 (the v1.0 rubric''s scale): the mean over contributing judges of the value_for_money dimension.';
COMMENT ON COLUMN work_quality_history_v1.overall IS 'Score, 0-1: the overall mean over the dimensions.';
COMMENT ON COLUMN work_quality_history_v1.prev_run_id IS 'The run id of the previous snapshot it is compared with (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.overall_delta IS 'Score points (0-1 scale): overall minus the previous snapshot''s overall.';
COMMENT ON COLUMN work_quality_history_v1.value_delta IS 'Score points (0-1 scale): value_for_money minus the previous snapshot''s.';
COMMENT ON COLUMN work_quality_history_v1.verdict IS 'better, same or worse against the previous snapshot (NULL for the first).';
COMMENT ON COLUMN work_quality_history_v1.regression IS 'Boolean: a regression at the policy''s default tolerance (work_quality_is_regression_v1).';
COMMENT ON COLUMN work_quality_history_v1.regression_reasons IS 'Why it is a regression, one phrase each (empty when it is not).';
COMMENT ON COLUMN work_quality_history_v1.cost_usd IS 'USD: what the assessed run cost (its own price metric).';
COMMENT ON COLUMN work_quality_history_v1.tokens IS 'Count of tokens the assessed run used.';
COMMENT ON COLUMN work_quality_history_v1.duration_ms IS 'Milliseconds the assessed run took.';
COMMENT ON COLUMN work_quality_history_v1.iterations IS 'Count of the assessed run''s iterations.';
COMMENT ON COLUMN work_quality_history_v1.model_calls IS 'Count of the assessed run''s model calls.';
COMMENT ON COLUMN work_quality_history_v1.retries IS 'Count of the assessed run''s retries.';
COMMENT ON COLUMN work_quality_history_v1.judges_cost_usd IS 'USD: what the judges'' calls cost.';
COMMENT ON COLUMN work_quality_history_v1.note IS 'The database''s one-line note on the snapshot.';
-- The panel tables' columns.
COMMENT ON COLUMN brain_eval_runs_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_runs_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_runs_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_runs_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_runs_by_month.reviewer_user_id IS 'The runs'' reviewer.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs IS 'Count of completed runs.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_pass IS 'Count decided pass.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_pass_with_notes IS 'Count decided pass_with_notes.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_conditional IS 'Count decided conditional.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_fail IS 'Count decided fail.';
COMMENT ON COLUMN brain_eval_runs_by_month.token_cost_usd IS 'USD: the runs'' token_cost_usd, summed.';
COMMENT ON COLUMN brain_eval_runs_by_month.reviewer_hours_spent IS 'Hours: the reviewer hours reported, summed (0 when none reported).';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_with_hours IS 'Count of runs whose reviewer reported hours.';
COMMENT ON COLUMN brain_eval_runs_by_month.stale_questions IS 'Count of stale-fixture questions.';
COMMENT ON COLUMN brain_eval_runs_by_month.stale_recognised IS 'Count of them recognised.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_with_stale IS 'Count of runs with a stale-fixture question.';
COMMENT ON COLUMN brain_eval_runs_by_month.runs_all_recognised IS 'Count of runs that recognised all their stale-fixture questions.';
COMMENT ON COLUMN brain_eval_runs_by_month.sev2_runs IS 'Count of runs with a stale-fixture miss (sev-2).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_1 IS 'Count of narrative-coherence ratings of 1 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_2 IS 'Count of narrative-coherence ratings of 2 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_3 IS 'Count of narrative-coherence ratings of 3 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_4 IS 'Count of narrative-coherence ratings of 4 (scale 1-5).';
COMMENT ON COLUMN brain_eval_runs_by_month.rating_5 IS 'Count of narrative-coherence ratings of 5 (scale 1-5).';
COMMENT ON COLUMN brain_eval_questions_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_questions_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_questions_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_questions_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_questions_by_month.question_catalog_version IS 'The catalog version the runs used.';
COMMENT ON COLUMN brain_eval_questions_by_month.question_id IS 'The catalog question.';
COMMENT ON COLUMN brain_eval_questions_by_month.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN brain_eval_questions_by_month.runs_failed IS 'Count of those in which it did not pass.';
COMMENT ON COLUMN brain_eval_agreement_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_agreement_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_agreement_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_agreement_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_agreement_by_month.judge_model IS 'The judge model, provider:model.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r0 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r1 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r2 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r0 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r1 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r2 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r0 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r1 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r2 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.claims_pairs IS 'Count of blind pairs of total claims (judge''s against reviewer''s).';
COMMENT ON COLUMN brain_eval_agreement_by_month.claims_abs_difference IS 'Claims (a count): the sum of |judge total_claims - reviewer total_claims| over those pairs.';

-- =============================================================================================
-- The journal (issue 18) covers every ledger table: the panel tables too, once it is installed
-- =============================================================================================
DO $journal$
BEGIN
    IF to_regprocedure('evalledger.journal_attach_v1()') IS NOT NULL THEN
        CALL evalledger.journal_attach_v1();
    END IF;
END
$journal$;

RESET ROLE;
