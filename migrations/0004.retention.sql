-- Seed 002's retention tiers: the database's own recording time as every aging row's tier clock, hot-only reads for every role but auditors, legal holds on a brain, a run or a date range, and the one purge path (evalledger_retention) with its append-only log.

-- =============================================================================================
-- The retention role
-- =============================================================================================
-- Only it (and a superuser) runs the purge. Cluster-wide, created where missing; NOLOGIN: the
-- installer acts as it (a superuser without membership; anyone else is made its member, as the
-- baseline makes the installer a member of the code and owner roles).
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'evalledger_retention') THEN
        CREATE ROLE evalledger_retention NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'evalledger_retention', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT evalledger_retention TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            -- A role created before by someone else, without the ADMIN option for the installer.
            RAISE NOTICE 'evalledger: % may not purge until it is granted evalledger_retention', current_user;
        END;
    END IF;
END
$roles$;

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

GRANT USAGE ON SCHEMA evalledger TO evalledger_retention;

-- =============================================================================================
-- Functions: the tier clock, holds, what is due, the guard, the plan and the purge
-- =============================================================================================
\ir ../triggers/core/retention_clock_v1.sql
\ir ../sql/core/retention_due_v1.sql
-- =============================================================================================
-- The purge's marker and log
-- =============================================================================================
-- retention_purge_marker: the transaction id of a running retention_purge_v1() (deleted before it
-- returns; xids are never reused); written by that function alone. Privileges keep everyone but
-- its owner out; the policy lets that owner through FORCE.
CREATE TABLE retention_purge_marker (
    txid bigint NOT NULL,
    CONSTRAINT retention_purge_marker_pkey PRIMARY KEY (txid)
);
REVOKE ALL ON retention_purge_marker FROM PUBLIC;
CREATE POLICY retention_purge_marker_table_owner ON retention_purge_marker USING (true) WITH CHECK (true);
ALTER TABLE retention_purge_marker ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
\ir ../sql/core/retention_purging_v1.sql
\ir ../triggers/core/refuse_change_v2.sql
-- What the purge deleted: one row per table and run (or capture partition) per purge, stamped by
-- the database with who and when. Append-only and never purged; auditors read it.
CREATE TABLE retention_purge_log (
    purge_log_id   bigint      GENERATED ALWAYS AS IDENTITY,
    purged_at      timestamptz NOT NULL DEFAULT now(),
    purged_by      name        NOT NULL DEFAULT session_user,
    txid           bigint      NOT NULL DEFAULT txid_current(),
    table_name     text        NOT NULL,
    row_count      bigint      NOT NULL,
    eval_run_id    uuid,
    partition_name text,
    CONSTRAINT retention_purge_log_pkey PRIMARY KEY (purge_log_id),
    CONSTRAINT retention_purge_log_row_count_positive CHECK (row_count >= 0)
);
CREATE INDEX retention_purge_log_txid_idx ON retention_purge_log (txid);
\ir ../triggers/core/retention_purge_log_admit_v1.sql
CREATE TRIGGER retention_purge_log_10_admit BEFORE INSERT ON retention_purge_log
    FOR EACH ROW EXECUTE FUNCTION retention_purge_log_admit_v1();
CALL guard_append_only_v1(ARRAY['retention_purge_log:UPDATE OR DELETE:refuse_change_v2']);

-- =============================================================================================
-- Tier clocks: every aging row carries the database's own recording time
-- =============================================================================================
-- Child rows carry their parent's (brain_eval_question_score, brain_eval_review_entry,
-- brain_eval_suggestion_shown and brain_eval_run_review already do, from the baseline): a tier
-- policy is then a comparison of the row's own column, never a lookup of its run.
ALTER TABLE brain_eval_harness_run ADD COLUMN run_created_at timestamptz;
ALTER TABLE brain_eval_harness_answer ADD COLUMN run_created_at timestamptz;
ALTER TABLE brain_eval_judge_suggestion ADD COLUMN run_created_at timestamptz;
ALTER TABLE eval_takes_quality_judge_verdicts ADD COLUMN run_created_at timestamptz;
ALTER TABLE eval_work_quality_judge_verdicts ADD COLUMN snapshot_created_at timestamptz;

-- A hold need not name a run any more. On PostgreSQL 18 a NOT NULL is a constraint of its own,
-- and the drop guard refuses dropping any ledger constraint by name: this one step, in this
-- migration's transaction, runs with the drop guard off (its owner, the superuser who installed
-- it, turns it off and back on; where no superuser installed there is no drop guard).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;
ALTER TABLE legal_hold ALTER COLUMN eval_run_id DROP NOT NULL;
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;

-- Holds: a run (as before), a brain, or a range of the tier clock; exactly one. Who placed it is
-- the database's to say.
ALTER TABLE legal_hold
    ADD COLUMN target_id varchar(16),
    ADD COLUMN held_from timestamptz,
    ADD COLUMN held_to timestamptz,
    ADD COLUMN placed_by name NOT NULL DEFAULT session_user,
    ADD CONSTRAINT legal_hold_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    ADD CONSTRAINT legal_hold_one_scope CHECK (
        num_nonnulls(eval_run_id, target_id, held_from) = 1 AND (held_from IS NULL) = (held_to IS NULL)),
    ADD CONSTRAINT legal_hold_range_ordered CHECK (held_from <= held_to),
    ADD CONSTRAINT legal_hold_reason_not_blank CHECK (btrim(reason) <> '');
\ir ../sql/core/retention_held_v1.sql
-- The backfill: the append-only guard of these tables refuses UPDATE, so for this transaction
-- (which holds their ACCESS EXCLUSIVE lock) it guards DELETE only, already as refuse_change_v2;
-- the ALTER TABLE that sets NOT NULL turns it back to UPDATE OR DELETE, ENABLE ALWAYS.
DO $backfill$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['brain_eval_harness_run', 'brain_eval_harness_answer', 'brain_eval_judge_suggestion',
                             'eval_takes_quality_judge_verdicts', 'eval_work_quality_judge_verdicts'] LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER %I BEFORE DELETE ON evalledger.%I '
                       'FOR EACH ROW EXECUTE FUNCTION evalledger.refuse_change_v2()', t || '_00_append_only', t);
    END LOOP;
END
$backfill$;
UPDATE brain_eval_harness_run t SET run_created_at = l.created_at FROM brain_eval_log l WHERE l.eval_run_id = t.eval_run_id;
UPDATE brain_eval_harness_answer t SET run_created_at = l.created_at FROM brain_eval_log l WHERE l.eval_run_id = t.eval_run_id;
UPDATE brain_eval_judge_suggestion t SET run_created_at = l.created_at FROM brain_eval_log l WHERE l.eval_run_id = t.eval_run_id;
UPDATE eval_takes_quality_judge_verdicts v SET run_created_at = r.created_at FROM eval_takes_quality_runs r WHERE r.id = v.run_id;
UPDATE eval_work_quality_judge_verdicts v SET snapshot_created_at = s.created_at
  FROM eval_work_quality_snapshots s WHERE s.snapshot_id = v.snapshot_id;
DO $guarded$
DECLARE
    spec text[];
BEGIN
    FOREACH spec SLICE 1 IN ARRAY ARRAY[['brain_eval_harness_run', 'run_created_at'],
                                        ['brain_eval_harness_answer', 'run_created_at'],
                                        ['brain_eval_judge_suggestion', 'run_created_at'],
                                        ['eval_takes_quality_judge_verdicts', 'run_created_at'],
                                        ['eval_work_quality_judge_verdicts', 'snapshot_created_at']] LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER %I BEFORE UPDATE OR DELETE ON evalledger.%I '
                       'FOR EACH ROW EXECUTE FUNCTION evalledger.refuse_change_v2()', spec[1] || '_00_append_only', spec[1]);
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON evalledger.%I FOR EACH ROW EXECUTE FUNCTION evalledger.retention_clock_v1()',
                       spec[1] || '_20_tier_clock', spec[1]);
        EXECUTE format('ALTER TABLE evalledger.%I ALTER COLUMN %I SET NOT NULL, ENABLE ALWAYS TRIGGER %I, ENABLE ALWAYS TRIGGER %I',
                       spec[1], spec[2], spec[1] || '_00_append_only', spec[1] || '_20_tier_clock');
    END LOOP;
END
$guarded$;

-- Tables whose own clock a caller could still supply: the database stamps it.
CREATE TRIGGER brain_analysis_log_20_tier_clock BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER eval_capture_failures_20_tier_clock BEFORE INSERT ON eval_capture_failures
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();
CREATE TRIGGER legal_hold_20_tier_clock BEFORE INSERT ON legal_hold
    FOR EACH ROW EXECUTE FUNCTION retention_clock_v1();

-- Indexes the tier policies, the plan and the purge read.
CREATE INDEX brain_eval_log_created_idx ON brain_eval_log (created_at);
CREATE INDEX brain_eval_question_score_run_created_idx ON brain_eval_question_score (run_created_at);
CREATE INDEX brain_analysis_log_created_idx ON brain_analysis_log (created_at);
CREATE INDEX eval_takes_quality_runs_created_idx ON eval_takes_quality_runs (created_at);
CREATE INDEX eval_work_quality_snapshots_created_idx ON eval_work_quality_snapshots (created_at);
CREATE INDEX eval_work_quality_snapshots_prev_idx ON eval_work_quality_snapshots (prev_snapshot_id);
CREATE INDEX legal_hold_run_idx ON legal_hold (eval_run_id);

-- =============================================================================================
-- The guard: every append-only trigger of refuse_change_v1 runs refuse_change_v2 (a DELETE only
-- inside the purge, past the horizon, under no hold); the capture keys and failures too.
-- =============================================================================================
DO $repoint$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT tg.tgname, substring(pg_get_triggerdef(tg.oid) FROM ' (BEFORE .*) EXECUTE FUNCTION ') AS fires
               FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
              WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT c.relispartition AND NOT tg.tgisinternal
                AND (tg.tgfoid = 'evalledger.refuse_change_v1()'::regprocedure
                     OR (tg.tgfoid = 'evalledger.capture_refuse_change_v1()'::regprocedure
                         AND c.relname IN ('eval_candidate_keys', 'eval_capture_failures')))
              ORDER BY c.relname, tg.tgname LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER %I %s EXECUTE FUNCTION evalledger.refuse_change_v2()', t.tgname, t.fires);
    END LOOP;
END
$repoint$;

\ir ../sql/core/retention_rows_v1.sql
\ir ../sql/core/retention_plan_v1.sql
\ir ../sql/core/retention_purge_v1.sql
-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
-- The purge log gets RLS, the owner and code roles' policies and the owner role's (guarded) DML;
-- every trigger replaced above turns ENABLE ALWAYS again.
CALL seal_tables_v1();
CREATE POLICY retention_purge_log_auditor ON retention_purge_log FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON retention_purge_log TO evalledger_auditor;

-- Hot-only reads: every role but the auditor reads an aging row only while its tier clock is in
-- the hot tier (hot_tier_v1), a plain comparison of the row's own column. The runner writes what
-- it wrote before (WITH CHECK unchanged); a reviewer's own-run test reads its runs once per
-- statement (an InitPlan over brain_eval_log, never a lookup per row).
ALTER POLICY brain_eval_log_runner ON brain_eval_log
    USING (created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY brain_eval_log_reviewer ON brain_eval_log
    USING (created_at >= now() - evalledger.hot_tier_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
ALTER POLICY brain_eval_log_revops ON brain_eval_log USING (created_at >= now() - evalledger.hot_tier_v1());

ALTER POLICY brain_eval_question_score_runner ON brain_eval_question_score
    USING (run_created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY brain_eval_question_score_reviewer ON brain_eval_question_score
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)))
    WITH CHECK (run_created_at >= now() - evalledger.hot_tier_v1()
                AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));
ALTER POLICY brain_eval_question_score_revops ON brain_eval_question_score
    USING (run_created_at >= now() - evalledger.hot_tier_v1());

ALTER POLICY brain_analysis_log_runner ON brain_analysis_log
    USING (created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY brain_analysis_log_reviewer ON brain_analysis_log
    USING (created_at >= now() - evalledger.hot_tier_v1()
           AND analysis_id = ANY (ARRAY(SELECT q.brain_analysis_id FROM evalledger.brain_eval_question_score q)));
ALTER POLICY brain_analysis_log_reviewer_harness ON brain_analysis_log
    USING (created_at >= now() - evalledger.hot_tier_v1()
           AND analysis_id = ANY (ARRAY(SELECT a.analysis_id FROM evalledger.brain_eval_harness_answer a)));
ALTER POLICY brain_analysis_log_revops ON brain_analysis_log USING (created_at >= now() - evalledger.hot_tier_v1());

ALTER POLICY brain_eval_review_entry_reviewer ON brain_eval_review_entry
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
ALTER POLICY brain_eval_suggestion_shown_reviewer ON brain_eval_suggestion_shown
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
ALTER POLICY brain_eval_run_review_reviewer ON brain_eval_run_review
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

-- The harness records: the readers' one policy becomes the reviewer's, and RevOps and auditors
-- get their own.
ALTER POLICY brain_eval_harness_run_runner ON brain_eval_harness_run
    USING (run_created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY brain_eval_harness_run_readers ON brain_eval_harness_run TO evalledger_reviewer
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));
CREATE POLICY brain_eval_harness_run_revops ON brain_eval_harness_run FOR SELECT TO evalledger_revops
    USING (run_created_at >= now() - evalledger.hot_tier_v1());
CREATE POLICY brain_eval_harness_run_auditor ON brain_eval_harness_run FOR SELECT TO evalledger_auditor USING (true);
ALTER POLICY brain_eval_harness_answer_runner ON brain_eval_harness_answer
    USING (run_created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY brain_eval_harness_answer_readers ON brain_eval_harness_answer TO evalledger_reviewer
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));
CREATE POLICY brain_eval_harness_answer_revops ON brain_eval_harness_answer FOR SELECT TO evalledger_revops
    USING (run_created_at >= now() - evalledger.hot_tier_v1());
CREATE POLICY brain_eval_harness_answer_auditor ON brain_eval_harness_answer FOR SELECT TO evalledger_auditor USING (true);
ALTER POLICY brain_eval_judge_suggestion_runner ON brain_eval_judge_suggestion
    USING (run_created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
-- Blind review: a reviewer reads a question's suggestions only once it asked to see them
-- (brain_eval_show_suggestions_v1 records that), so no value it enters can have seen them unrecorded.
ALTER POLICY brain_eval_judge_suggestion_readers ON brain_eval_judge_suggestion TO evalledger_reviewer
    USING (run_created_at >= now() - evalledger.hot_tier_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l))
           AND eval_run_id::text || ' ' || question_id = ANY (ARRAY(
                   SELECT s.eval_run_id::text || ' ' || s.question_id FROM evalledger.brain_eval_suggestion_shown s)));
CREATE POLICY brain_eval_judge_suggestion_revops ON brain_eval_judge_suggestion FOR SELECT TO evalledger_revops
    USING (run_created_at >= now() - evalledger.hot_tier_v1());
CREATE POLICY brain_eval_judge_suggestion_auditor ON brain_eval_judge_suggestion FOR SELECT TO evalledger_auditor
    USING (true);

ALTER POLICY eval_takes_quality_runs_runner ON eval_takes_quality_runs
    USING (created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY eval_takes_quality_runs_revops ON eval_takes_quality_runs USING (created_at >= now() - evalledger.hot_tier_v1());
ALTER POLICY eval_takes_quality_judge_verdicts_runner ON eval_takes_quality_judge_verdicts
    USING (run_created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY eval_takes_quality_judge_verdicts_revops ON eval_takes_quality_judge_verdicts
    USING (run_created_at >= now() - evalledger.hot_tier_v1());

ALTER POLICY eval_work_quality_snapshots_runner ON eval_work_quality_snapshots
    USING (created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY eval_work_quality_snapshots_revops ON eval_work_quality_snapshots
    USING (created_at >= now() - evalledger.hot_tier_v1());
ALTER POLICY eval_work_quality_judge_verdicts_runner ON eval_work_quality_judge_verdicts
    USING (snapshot_created_at >= now() - evalledger.hot_tier_v1()) WITH CHECK (true);
ALTER POLICY eval_work_quality_judge_verdicts_revops ON eval_work_quality_judge_verdicts
    USING (snapshot_created_at >= now() - evalledger.hot_tier_v1());

ALTER POLICY eval_candidates_runner_read ON eval_candidates USING (created_at >= now() - evalledger.hot_tier_v1());
ALTER POLICY eval_capture_failures_runner_read ON eval_capture_failures
    USING (recorded_at >= now() - evalledger.hot_tier_v1());

-- Every role a tier policy binds evaluates hot_tier_v1() itself.
GRANT EXECUTE ON FUNCTION hot_tier_v1() TO evalledger_runner, evalledger_reviewer, evalledger_owner;
-- The purge is the retention role's alone; the plan (counts only) also the auditor's and the owner's.
GRANT EXECUTE ON FUNCTION retention_purge_v1() TO evalledger_retention;
GRANT EXECUTE ON FUNCTION retention_plan_v1() TO evalledger_retention, evalledger_auditor, evalledger_owner;

RESET ROLE;
