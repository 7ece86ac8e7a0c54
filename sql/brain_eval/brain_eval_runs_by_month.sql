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
    CONSTRAINT brain_eval_runs_by_month_token_cost_usd_finite CHECK (finite_v1(token_cost_usd)),
    CONSTRAINT brain_eval_runs_by_month_reviewer_hours_spent_finite CHECK (finite_v1(reviewer_hours_spent))
);

-- A hot-tier reader's months, and the purge's recount, find rows by their recording month.
CREATE INDEX brain_eval_runs_by_month_recorded_idx ON brain_eval_runs_by_month (recorded_month);

-- The by-month panel tables: only the code role writes them (through its functions); the owner
-- role reads them (the seal's SELECT) and nothing more.
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
GRANT SELECT ON brain_eval_runs_by_month TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

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
