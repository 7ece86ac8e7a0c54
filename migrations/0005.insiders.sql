-- The ledger against a careful insider (issue 17): windows in UTC on the database's clock, isolation every deciding or deleting function checks, a reveal no rollback erases, policy by the prompt (brain_prompt), automatic scores the database computes, no non-finite number, locks only writers take, refusals that reveal nothing, and the rest.

-- Each class of issue 17 has one root fix here; docs/guards.md (sections 15-23) names each guard, its
-- tests (tests/db/test_insiders_*.py) and what a superuser can still do. Changed functions are new
-- _v2 (or _v3) files beside the old, installed here and repointed; the old stay installed until the
-- release folds the migrations.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- 1. Time: every window in UTC on the statement's clock; caller-supplied times stamped or bounded
-- =============================================================================================
\ir ../sql/core/utc_ago_v1.sql
\ir ../sql/core/hot_tier_start_v1.sql
\ir ../sql/core/purge_horizon_at_v1.sql
\ir ../sql/core/backdating_window_v1.sql

-- =============================================================================================
-- 2. Isolation: the one check every definer function that decides or deletes calls
-- =============================================================================================
\ir ../sql/core/require_read_committed_v2.sql

-- =============================================================================================
-- 6. Numbers: the finite check every numeric column's CHECK calls
-- =============================================================================================
\ir ../sql/core/finite_v1.sql
\ir ../sql/core/json_numbers_v1.sql

-- =============================================================================================
-- 8. What a definer helper may answer: only what its caller could read
-- =============================================================================================
\ir ../sql/core/caller_reads_v1.sql
-- 7. Sealing a new table gives the owner role SELECT only (later migrations call this version).
\ir ../sql/core/seal_tables_v2.sql
REVOKE EXECUTE ON PROCEDURE seal_tables_v2() FROM PUBLIC;

-- =============================================================================================
-- Tables
-- =============================================================================================
-- 4. The prompts each brain owns: registered by one of its versions, or carried by one of its
-- analyses (production or eval). Written only by brain_prompt_claim_v1; every rule that follows the
-- prompt rather than the label reads it by key (independence, levers, question needs, brain holds).
-- Reference data: never purged, readable by every reading role like brain_version.
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
INSERT INTO brain_prompt (system_prompt_hash, target_id, seen_as, created_at)
SELECT DISTINCT ON (x.system_prompt_hash, x.target_id) x.system_prompt_hash, x.target_id, x.seen_as, x.created_at
  FROM (SELECT v.system_prompt_hash, v.target_id, 'version' AS seen_as, v.created_at, 0 AS rank FROM brain_version v
        UNION ALL
        SELECT a.system_prompt_hash, a.brain, 'analysis', a.created_at, 1 FROM brain_analysis_log a) x
 ORDER BY x.system_prompt_hash, x.target_id, x.rank, x.created_at;
CREATE INDEX brain_prompt_target_idx ON brain_prompt (target_id);

-- 7. The capture window lock: writers take ROW EXCLUSIVE on this table, an export's bound SHARE for
-- an instant, a partition maker SHARE UPDATE EXCLUSIVE. It holds no rows. No application role holds
-- any privilege on it, so only the code role's functions lock it: no login can stall the writers
-- (as any login could hold a well-known advisory key).
CREATE TABLE capture_window (
    nothing boolean,
    CONSTRAINT capture_window_holds_no_rows CHECK (false)
);
REVOKE ALL ON capture_window FROM PUBLIC;
ALTER TABLE capture_window ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

-- Lookups by key for what the admission triggers ask of open runs, and for imports by transaction.
CREATE INDEX brain_eval_log_open_prompt_idx ON brain_eval_log (system_prompt_hash) WHERE completed_at IS NULL;
CREATE INDEX brain_eval_log_open_reviewer_idx ON brain_eval_log (reviewer_user_id) WHERE completed_at IS NULL;
CREATE INDEX brain_eval_import_txid_idx ON brain_eval_import (txid);

-- 3. A reveal is recorded with its transaction's id; the reviewer reads the suggestions only in a
-- later transaction (the policy below), so a rolled-back reveal showed nothing.
ALTER TABLE brain_eval_suggestion_shown ADD COLUMN shown_txid bigint NOT NULL DEFAULT txid_current();

-- 1. takes-quality's started_at (the receipt's ts, the trend's order) is the database's: no default
-- to tell apart from a supplied value, so the admission trigger refuses any and stamps now().
ALTER TABLE eval_takes_quality_runs ALTER COLUMN started_at DROP DEFAULT;

-- 9. A hold is placed unreleased; its release is a legal_hold_release row, with who and when.
ALTER TABLE legal_hold ADD CONSTRAINT legal_hold_released_by_a_release_row CHECK (released_at IS NULL);

-- 9. A work-quality snapshot keeps the previous run's id and the comparison it made, and no longer
-- references the previous row, which may age out before it: the chain of an active target must not
-- pin its whole history. The drop guard refuses dropping a ledger constraint by name, so this one
-- statement runs with it off (its superuser owner turns it off and back on; where no superuser
-- installed there is no drop guard).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;
ALTER TABLE eval_work_quality_snapshots DROP CONSTRAINT eval_work_quality_snapshots_prev_fkey;
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
-- Functions
-- =============================================================================================
-- 4. Policy by the prompt: who owns a prompt, its brains, its levers.
\ir ../sql/brain_eval/brain_prompt_claim_v1.sql
\ir ../sql/brain_eval/run_brains_v1.sql
\ir ../sql/brain_eval/brain_eval_levers_v1.sql
-- 5. Automatic scores: one computation for harness and recorded runs.
\ir ../sql/brain_eval/brain_eval_claims_problem_v1.sql
\ir ../sql/brain_eval/brain_eval_answer_scores_v1.sql
-- 6. Rubrics: checked again at admission, a judged suite's scale required, takes-quality's panel.
\ir ../sql/core/rubric_check_v2.sql
\ir ../triggers/core/rubric_admit_v2.sql
\ir ../sql/core/rubric_admitted_v2.sql
\ir ../sql/core/judge_scores_v2.sql
-- brain-eval: admission, the prompt registry, question rows, the decision, the harness.
\ir ../sql/brain_eval/question_needs_v2.sql
\ir ../sql/brain_eval/question_passes_v2.sql
\ir ../sql/brain_eval/brain_eval_question_policy_v2.sql
\ir ../triggers/brain_eval/brain_eval_log_admit_v2.sql
\ir ../triggers/brain_eval/prompt_tuner_admit_v2.sql
\ir ../triggers/brain_eval/brain_version_admit_v2.sql
\ir ../triggers/brain_eval/brain_analysis_log_admit_v1.sql
\ir ../triggers/brain_eval/brain_eval_question_score_write_v2.sql
\ir ../sql/brain_eval/brain_eval_decide_v2.sql
\ir ../triggers/brain_eval/brain_eval_log_decide_v2.sql
\ir ../sql/brain_eval/brain_eval_open_harness_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_run_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_harness_answer_admit_v2.sql
\ir ../triggers/brain_eval/brain_eval_judge_suggestion_admit_v2.sql
-- 3. The reveal.
\ir ../sql/brain_eval/brain_eval_show_suggestions_v2.sql
-- takes-quality and work-quality.
\ir ../triggers/takes_quality/takes_quality_run_admit_v2.sql
\ir ../triggers/takes_quality/takes_quality_verdict_admit_v2.sql
\ir ../sql/takes_quality/takes_quality_cycle_v2.sql
\ir ../sql/takes_quality/takes_quality_receipt_v2.sql
\ir ../triggers/work_quality/work_quality_snapshot_admit_v2.sql
\ir ../triggers/work_quality/work_quality_verdict_admit_v2.sql
\ir ../triggers/work_quality/work_quality_snapshot_decide_v2.sql
-- 7. Capture: the window lock on a table only writers lock.
\ir ../triggers/capture/capture_window_lock_v2.sql
\ir ../sql/capture/capture_export_bound_v2.sql
\ir ../sql/capture/capture_make_partition_v2.sql
\ir ../sql/capture/capture_ensure_partitions_v2.sql
\ir ../sql/capture/capture_partition_expired_v2.sql
-- 1, 2, 4, 9. Retention: UTC windows, READ COMMITTED, holds by the prompt, no snapshot chain pins.
\ir ../sql/core/retention_held_v2.sql
\ir ../sql/core/retention_due_v2.sql
\ir ../triggers/core/refuse_change_v3.sql
\ir ../sql/core/retention_purge_v2.sql
\ir ../sql/core/retention_rows_v2.sql
\ir ../sql/core/retention_plan_v2.sql

-- =============================================================================================
-- Triggers: each repointed to its new version (trigger names keep their firing order)
-- =============================================================================================
CREATE OR REPLACE TRIGGER rubric_05_admit BEFORE INSERT ON rubric
    FOR EACH ROW EXECUTE FUNCTION rubric_admit_v2();
CREATE OR REPLACE TRIGGER prompt_tuner_10_admit BEFORE INSERT ON prompt_tuner
    FOR EACH ROW EXECUTE FUNCTION prompt_tuner_admit_v2();
CREATE OR REPLACE TRIGGER brain_version_10_admit BEFORE INSERT ON brain_version
    FOR EACH ROW EXECUTE FUNCTION brain_version_admit_v2();
CREATE TRIGGER brain_analysis_log_10_admit BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION brain_analysis_log_admit_v1();
CREATE OR REPLACE TRIGGER brain_eval_log_10_admit BEFORE INSERT ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_admit_v2();
CREATE OR REPLACE TRIGGER brain_eval_log_20_decide BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_decide_v2();
CREATE OR REPLACE TRIGGER brain_eval_question_score_10_write BEFORE INSERT OR UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v2();
CREATE OR REPLACE TRIGGER brain_eval_harness_run_10_admit BEFORE INSERT ON brain_eval_harness_run
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_run_admit_v2();
CREATE OR REPLACE TRIGGER brain_eval_harness_answer_10_admit BEFORE INSERT ON brain_eval_harness_answer
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_answer_admit_v2();
CREATE OR REPLACE TRIGGER brain_eval_judge_suggestion_10_admit BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION brain_eval_judge_suggestion_admit_v2();
CREATE OR REPLACE TRIGGER eval_takes_quality_runs_10_admit BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_admit_v2();
CREATE OR REPLACE TRIGGER eval_takes_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_admit_v2();
CREATE OR REPLACE TRIGGER eval_work_quality_snapshots_10_admit BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_admit_v2();
CREATE OR REPLACE TRIGGER eval_work_quality_snapshots_20_decide BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_decide_v2();
CREATE OR REPLACE TRIGGER eval_work_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_admit_v2();
CREATE OR REPLACE TRIGGER eval_candidates_05_window_lock BEFORE INSERT ON eval_candidates
    FOR EACH STATEMENT EXECUTE FUNCTION capture_window_lock_v2();
-- Each existing partition's own window-lock trigger (an INSERT naming the partition fires no
-- statement trigger of the parent) runs the new lock too.
DO $partitions$
DECLARE
    part text;
BEGIN
    FOR part IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                 WHERE i.inhparent = 'evalledger.eval_candidates'::regclass ORDER BY c.relname LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER %I BEFORE INSERT ON evalledger.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_window_lock_v2()',
                       part || '_05_window_lock', part);
    END LOOP;
END
$partitions$;

-- The append-only guard: every trigger of refuse_change_v2 runs refuse_change_v3 (UTC horizon,
-- holds by the prompt).
DO $repoint$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT tg.tgname, c.relname,
                    substring(pg_get_triggerdef(tg.oid) FROM ' (BEFORE .*) EXECUTE FUNCTION ') AS fires
               FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
              WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT c.relispartition AND NOT tg.tgisinternal
                AND tg.tgfoid = 'evalledger.refuse_change_v2()'::regprocedure
              ORDER BY c.relname, tg.tgname LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER %I %s EXECUTE FUNCTION evalledger.refuse_change_v3()', t.tgname, t.fires);
    END LOOP;
END
$repoint$;
CALL guard_append_only_v1(ARRAY['brain_prompt:UPDATE OR DELETE:refuse_change_v3']);
-- RLS enabled and forced on the new tables, and every trigger replaced above ENABLE ALWAYS again
-- before any ALTER TABLE below (the DDL guard checks both on each table an ALTER TABLE leaves).
CALL seal_tables_v2();
-- Every partition's triggers (the replaced window lock among them) ALWAYS.
DO $partitions_always$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.relname, string_agg(format('ENABLE ALWAYS TRIGGER %I', tg.tgname), ', ' ORDER BY tg.tgname) AS always
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_trigger tg ON tg.tgrelid = c.oid
              WHERE i.inhparent = 'evalledger.eval_candidates'::regclass AND NOT tg.tgisinternal AND tg.tgenabled <> 'A'
              GROUP BY c.relname ORDER BY c.relname LOOP
        EXECUTE format('ALTER TABLE evalledger.%I %s', t.relname, t.always);
    END LOOP;
END
$partitions_always$;


-- =============================================================================================
-- 1. Every read policy's window: hot_tier_start_v1() (UTC, the statement's clock), never
-- now() - hot_tier_v1() in the session's TimeZone
-- =============================================================================================
-- The policies are read back with a search_path that names no ledger schema, so every ledger
-- function prints schema-qualified and the rewrite matches a known spelling: the session's window,
-- and the UTC window on the transaction's clock that migration 0009 first wrote (a database that
-- applied 0009 before this migration converges on the same policies as a fresh one).
SET LOCAL search_path = pg_catalog, pg_temp;
DO $windows$
DECLARE
    p record;
    old_window text;
    old_windows constant text[] := ARRAY[
        '(now() - evalledger.hot_tier_v1())',
        '(((now() AT TIME ZONE ''UTC''::text) - evalledger.hot_tier_v1()) AT TIME ZONE ''UTC''::text)',
        'timezone(''UTC''::text, (timezone(''UTC''::text, now()) - evalledger.hot_tier_v1()))'];
    new_window constant text := 'evalledger.hot_tier_start_v1()';
BEGIN
    FOREACH old_window IN ARRAY old_windows LOOP
        FOR p IN SELECT c.relname, pol.polname,
                        pg_get_expr(pol.polqual, pol.polrelid) AS qual,
                        pg_get_expr(pol.polwithcheck, pol.polrelid) AS checks
                   FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid
                  WHERE c.relnamespace = 'evalledger'::regnamespace
                    AND (strpos(coalesce(pg_get_expr(pol.polqual, pol.polrelid), ''), old_window) > 0
                         OR strpos(coalesce(pg_get_expr(pol.polwithcheck, pol.polrelid), ''), old_window) > 0)
                  ORDER BY 1, 2 LOOP
            EXECUTE format('ALTER POLICY %I ON evalledger.%I%s%s', p.polname, p.relname,
                           CASE WHEN p.qual IS NOT NULL THEN format(' USING (%s)', replace(p.qual, old_window, new_window)) END,
                           CASE WHEN p.checks IS NOT NULL
                                THEN format(' WITH CHECK (%s)', replace(p.checks, old_window, new_window)) END);
        END LOOP;
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid
                WHERE c.relnamespace = 'evalledger'::regnamespace
                  AND (pg_get_expr(pol.polqual, pol.polrelid) ~ 'now\(\)'
                       OR pg_get_expr(pol.polwithcheck, pol.polrelid) ~ 'now\(\)')) THEN
        RAISE EXCEPTION 'evalledger: a ledger policy still reads now(): % ', (
            SELECT string_agg(pol.polname, ', ') FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid
             WHERE c.relnamespace = 'evalledger'::regnamespace
               AND (pg_get_expr(pol.polqual, pol.polrelid) ~ 'now\(\)'
                    OR pg_get_expr(pol.polwithcheck, pol.polrelid) ~ 'now\(\)'));
    END IF;
END
$windows$;
SET LOCAL search_path = evalledger, pg_temp;

-- 3. Blind review that no rollback undoes: a reviewer reads a question's suggestions only once a
-- reveal of it was committed by an earlier transaction than the reading one.
ALTER POLICY brain_eval_judge_suggestion_readers ON brain_eval_judge_suggestion
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l))
           AND eval_run_id::text || ' ' || question_id = ANY (ARRAY(
                   SELECT s.eval_run_id::text || ' ' || s.question_id FROM evalledger.brain_eval_suggestion_shown s
                    WHERE s.shown_txid IS DISTINCT FROM txid_current_if_assigned())));

-- =============================================================================================
-- 6. No NaN or infinity anywhere: every numeric and floating-point column CHECKs finite_v1, and the
-- JSON objects the database reads as numbers hold JSON numbers only
-- =============================================================================================
DO $finite$
DECLARE
    col record;
BEGIN
    FOR col IN SELECT c.relname, a.attname, a.atttypid <> 'numeric'::regtype AS floating
                 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                  AND a.attnum > 0 AND NOT a.attisdropped
                  AND a.atttypid IN ('numeric'::regtype, 'double precision'::regtype, 'real'::regtype)
                ORDER BY c.relname, a.attnum LOOP
        EXECUTE format('ALTER TABLE evalledger.%I ADD CONSTRAINT %I CHECK (evalledger.finite_v1(%I%s))',
                       col.relname, col.relname || '_' || col.attname || '_finite', col.attname,
                       CASE WHEN col.floating THEN '::numeric' ELSE '' END);
    END LOOP;
END
$finite$;
ALTER TABLE eval_work_quality_snapshots
    ADD CONSTRAINT eval_work_quality_snapshots_mean_scores_numbers CHECK (evalledger.json_numbers_v1(mean_scores)),
    ADD CONSTRAINT eval_work_quality_snapshots_disagreement_numbers CHECK (evalledger.json_numbers_v1(disagreement)),
    -- An imported file's comparison: the history view and IsRegression read its deltas as numbers.
    ADD CONSTRAINT eval_work_quality_snapshots_comparison_numbers CHECK (
        jsonb_typeof(comparison -> 'overall_delta') IS DISTINCT FROM 'string'
        AND jsonb_typeof(comparison -> 'value_delta') IS DISTINCT FROM 'string'
        AND coalesce(evalledger.json_numbers_v1(comparison -> 'per_dimension'), true));

-- =============================================================================================
-- 6. takes-quality v1.1: v1.0 with seed 000's panel as policy (three models, two or more families)
-- =============================================================================================
INSERT INTO rubric (suite, version, definition)
SELECT 'takes-quality', 'v1.1',
       r.definition || jsonb_build_object('version', 'v1.1', 'panel', jsonb_build_object('min_models', 3, 'min_families', 2))
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.0');
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'issue 17: a panel of at least three models from at least two families (seed 000, cross-family)'
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.1');
-- Every activated rubric a new run may be judged by passes today's check.
DO $rubrics$
DECLARE
    bad text;
BEGIN
    SELECT string_agg(format('%s %s: %s', r.suite, r.version, evalledger.rubric_check_v2(r.suite, r.definition)), '; ')
      INTO bad
      FROM evalledger.rubric r
     WHERE r.rubric_id IN (SELECT evalledger.active_rubric_v1(s) FROM unnest(ARRAY['brain-eval', 'takes-quality', 'work-quality']) s)
       AND evalledger.rubric_check_v2(r.suite, r.definition) IS NOT NULL;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: an active rubric fails the rubric check: %', bad;
    END IF;
END
$rubrics$;

-- =============================================================================================
-- Row-level security, ENABLE ALWAYS, policies and privileges
-- =============================================================================================
CREATE POLICY brain_prompt_read ON brain_prompt FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_prompt TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- 7. The owner role keeps only the privileges it uses: SELECT everywhere, INSERT on the registries
-- it maintains and the holds it places and releases. No UPDATE, DELETE or TRUNCATE (which the
-- triggers refused anyway, but which let it LOCK any table ACCESS EXCLUSIVE and stall every
-- reader), and no INSERT where only the code role or the runner writes (so it supplies no tier
-- clock, no captured row's created_at or id: no application role holds INSERT on those columns).
REVOKE UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA evalledger FROM evalledger_owner;
REVOKE INSERT ON ALL TABLES IN SCHEMA evalledger FROM evalledger_owner;
GRANT INSERT ON target, rubric, reviewer, prompt_tuner, brain_version, brain_eval_catalog, brain_eval_import,
    legal_hold, legal_hold_release TO evalledger_owner;
-- The runner supplies no started_at of a takes-quality run any more.
REVOKE INSERT (started_at) ON eval_takes_quality_runs FROM evalledger_runner;

-- Functions: nothing is PUBLIC (the code role's default privileges). Roles get what their policies
-- evaluate and what they call; the versions these replace are revoked from them.
GRANT EXECUTE ON FUNCTION utc_ago_v1(interval), hot_tier_v1(), hot_tier_start_v1(), purge_horizon_v1(),
    purge_horizon_at_v1(), backdating_window_v1()
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor, evalledger_owner, evalledger_retention;
GRANT EXECUTE ON FUNCTION brain_eval_question_policy_v2(uuid, text), question_passes_v2(brain_eval_question_score, jsonb, text[], jsonb),
    question_needs_v2(brain_eval_question_score, jsonb, text[]), run_brains_v1(varchar, varchar),
    brain_eval_levers_v1(varchar, varchar, jsonb), brain_eval_claims_problem_v1(jsonb),
    brain_eval_answer_scores_v1(jsonb, jsonb, jsonb, text[], boolean)
    TO evalledger_runner, evalledger_reviewer, evalledger_owner;
-- A CHECK's function runs with the writer's rights: every role that writes a ledger row needs these.
GRANT EXECUTE ON FUNCTION finite_v1(numeric), json_numbers_v1(jsonb)
    TO evalledger_runner, evalledger_reviewer, evalledger_owner, evalledger_retention;
-- The owner role registers rubrics, and the rubric trigger (its own rights) validates them.
GRANT EXECUTE ON FUNCTION rubric_check_v2(text, jsonb) TO evalledger_owner;
REVOKE EXECUTE ON FUNCTION brain_eval_question_policy_v1(uuid, text) FROM evalledger_runner, evalledger_reviewer, evalledger_owner;
GRANT EXECUTE ON FUNCTION brain_eval_show_suggestions_v2(uuid, text) TO evalledger_reviewer;
REVOKE EXECUTE ON FUNCTION brain_eval_show_suggestions_v1(uuid, text) FROM evalledger_reviewer;
GRANT EXECUTE ON FUNCTION takes_quality_cycle_v2(bigint, integer), takes_quality_receipt_v2(bigint)
    TO evalledger_runner, evalledger_owner;
REVOKE EXECUTE ON FUNCTION takes_quality_cycle_v1(bigint, integer), takes_quality_receipt_v1(bigint)
    FROM evalledger_runner, evalledger_owner;
GRANT EXECUTE ON FUNCTION capture_ensure_partitions_v2(integer) TO evalledger_runner, evalledger_owner;
REVOKE EXECUTE ON FUNCTION capture_ensure_partitions_v1(integer) FROM evalledger_runner, evalledger_owner;
GRANT EXECUTE ON FUNCTION capture_export_bound_v2() TO evalledger_runner, evalledger_revops, evalledger_auditor;
REVOKE EXECUTE ON FUNCTION capture_export_bound_v1() FROM evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
GRANT EXECUTE ON FUNCTION retention_purge_v2() TO evalledger_retention;
REVOKE EXECUTE ON FUNCTION retention_purge_v1() FROM evalledger_retention;
GRANT EXECUTE ON FUNCTION retention_plan_v2() TO evalledger_retention, evalledger_auditor, evalledger_owner;
REVOKE EXECUTE ON FUNCTION retention_plan_v1() FROM evalledger_retention, evalledger_auditor, evalledger_owner;

RESET ROLE;

-- =============================================================================================
-- 7. Large objects: no role of the ledger needs to create one, and any login could (stored outside
-- every table, unguarded and unpurged). Revoked from PUBLIC where a superuser installs (the
-- functions are pg_catalog's); elsewhere `evalledger doctor` warns.
-- =============================================================================================
DO $large_objects$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'evalledger: not a superuser: any login may still create large objects (lo_create)';
        RETURN;
    END IF;
    REVOKE EXECUTE ON FUNCTION pg_catalog.lo_create(oid), pg_catalog.lo_creat(integer),
        pg_catalog.lo_from_bytea(oid, bytea), pg_catalog.lo_import(text), pg_catalog.lo_import(text, oid) FROM PUBLIC;
END
$large_objects$;
