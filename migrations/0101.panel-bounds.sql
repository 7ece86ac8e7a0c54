-- Bounded panels (issue 22, item 6): the failed runs, the stale-fixture incidents and prompt drift's first month each read through an index that stops them where their rows stop, not at the end of the history. Indexes, and prompt_drift_rows_v3 (v2's rows, its first month found in them) for the dashboards' drift panel, granted as v2 is: no role may do or read anything it could not before.

SET LOCAL ROLE evalledger_code;
-- The failed-runs panel reads the latest 20 runs decided fail. Seed 002's (decision, started_at
-- DESC) cannot serve RevOps or a reviewer: enum_eq is not leakproof, so under their policies
-- decision = 'fail' is not an index condition, and they scanned every run. A partial index needs
-- no condition: every entry is a failed run, newest first, and the scan stops at the 20th the
-- reader may read.
CREATE INDEX brain_eval_log_failed_started_idx ON evalledger.brain_eval_log (started_at DESC, eval_run_id DESC)
    WHERE decision = 'fail';
-- The sev-2 incidents walk each brain's runs newest first and look up each run's missed
-- stale-fixture questions here: one probe of a small index per run, until the 20th incident,
-- where seed 002's index 6 (no run in its key) collected every miss of the history to sort them.
-- A miss is spelled NOT coalesce(..., true), as panel_stale_misses spells it, and not = false:
-- that form index 6 could serve too, and the planner, counting a sixth of the misses there (it
-- takes the two columns for independent, though only a stale question has the flag), ANDed
-- every miss of the history into each run's probe instead of using this index.
CREATE INDEX brain_eval_question_score_stale_missed_idx ON evalledger.brain_eval_question_score (eval_run_id)
    WHERE uses_stale_fixture AND NOT coalesce(staleness_correctly_recognized, true);
-- Prompt drift starts each brain's months at the first production analysis and the first run its
-- reader sees. For RevOps that is the first hot row, past every cold one: with the tier clock in
-- the index, those are skipped in the index alone (an index-only scan), not one heap visit each.
CREATE INDEX brain_analysis_log_production_first_idx ON evalledger.brain_analysis_log (brain, produced_at)
    INCLUDE (created_at) WHERE origin = 'production';
CREATE INDEX brain_eval_log_brain_first_idx ON evalledger.brain_eval_log (brain_under_test, started_at)
    INCLUDE (created_at);
-- prompt_drift_rows_v3 bounds where those scans start (see it): each brain's earliest row the
-- reader sees by the tier clock, and the rows recorded more than 24 hours after they were
-- produced or started (audited imports), few whatever the history, in the order the earliest is
-- taken in (so the planner reads it, not a longer index in that order filtered).
CREATE INDEX brain_analysis_log_production_recorded_idx ON evalledger.brain_analysis_log (brain, created_at)
    WHERE origin = 'production';
CREATE INDEX brain_analysis_log_production_late_idx ON evalledger.brain_analysis_log (brain, produced_at)
    INCLUDE (created_at) WHERE origin = 'production' AND created_at - produced_at > interval '24 hours';
CREATE INDEX brain_eval_log_brain_recorded_idx ON evalledger.brain_eval_log (brain_under_test, created_at);
CREATE INDEX brain_eval_log_brain_late_idx ON evalledger.brain_eval_log (brain_under_test, started_at)
    INCLUDE (created_at) WHERE created_at - started_at > interval '24 hours';
SET LOCAL search_path = evalledger, pg_temp;
\ir ../sql/brain_eval/prompt_drift_rows_v3.sql
GRANT EXECUTE ON FUNCTION prompt_drift_rows_v3(text, date, date, text) TO evalledger_revops, evalledger_auditor;
-- The view BI tools read on SQL reads v3 too: the same columns and rows, bounded as the panel is.
-- Its name and shape are the contract, so it is repointed, not versioned; its grants and comments
-- stay, and security_invoker, which CREATE OR REPLACE VIEW resets, is set again as the baseline
-- sets it (15+). prompt_drift_rows_v2 stays: docs/bi.md gives each view's _rows function to SQL
-- clients, and a client of 0.1.0 may call it by name.
CREATE OR REPLACE VIEW prompt_drift_v2 AS
    SELECT * FROM evalledger.prompt_drift_rows_v3(NULL, NULL, NULL, NULL);
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.prompt_drift_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;
