-- Each takes-quality run's and each work-quality snapshot's uncertainty stored once, when it
-- completes (issue 36, item 3), as migration 0148 did for brain-eval's. takes_quality_intervals_v1,
-- `takes-quality show`, the receipt's optional stderr and ci95 and the trend's error bars ran
-- takes_quality_uncertainty_v1 for every run shown at every read; work_quality_intervals_v1,
-- `snapshot show RUN_ID` and the history's error bars ran work_quality_uncertainty_v1 for every
-- snapshot. Now the completion stores that object (eval_takes_quality_run_uncertainty,
-- eval_work_quality_snapshot_uncertainty: append-only, journalled, aged with its run, computed by the
-- database from the run's verdict rows or the snapshot's document and the rubric, never input), its
-- readers read it, the ledger's recompute re-derives it (ledger_recompute_v3), and the retention
-- functions age it with its run. Runs and snapshots completed before this migration get theirs here,
-- computed by the same functions. What each reader may read is unchanged: the same readers as the
-- run's own row. An open run's intervals (a receipt so far) are still computed when read: nothing is
-- stored before completion.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- Each completed takes-quality run's uncertainty beside its verdict (issue 36, item 3), stored once
-- when the run completes: takes_quality_uncertainty_v1's object (per rubric dimension and the overall
-- its estimate, standard error, 95% interval, n, clusters, method, and per dimension the variance of
-- a judge's score between calls), computed by the database from the run's stored verdict rows and
-- rubric, never taken from input. `takes-quality show`, the receipt's optional stderr and ci95, the
-- intervals view (takes_quality_intervals_v1) and the trend's error bars read it instead of running
-- the statistics functions for every run at every read. Only the completion trigger
-- (takes_quality_uncertainty_complete_v1) writes it (no role holds INSERT), and every column is its:
-- append-only, journalled, aged with its run (the run's tier clock), and re-derived by the ledger's
-- recompute (ledger_recompute_v3).
CREATE TABLE eval_takes_quality_run_uncertainty (
    run_id         bigint      NOT NULL,
    uncertainty    jsonb       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    run_created_at timestamptz NOT NULL,
    CONSTRAINT eval_takes_quality_run_uncertainty_pkey PRIMARY KEY (run_id),
    CONSTRAINT eval_takes_quality_run_uncertainty_run_fkey FOREIGN KEY (run_id) REFERENCES eval_takes_quality_runs (id),
    CONSTRAINT eval_takes_quality_run_uncertainty_object CHECK (jsonb_typeof(uncertainty) = 'object')
);

COMMENT ON TABLE eval_takes_quality_run_uncertainty IS
    'Each completed takes-quality run''s uncertainty (takes_quality_uncertainty_v1 of its verdict rows), computed by the database once at completion; read by takes_quality_intervals_v1, `takes-quality show` and the receipt''s stderr and ci95.';

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY eval_takes_quality_run_uncertainty_runner ON eval_takes_quality_run_uncertainty FOR SELECT
    TO evalledger_runner USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_takes_quality_run_uncertainty_revops ON eval_takes_quality_run_uncertainty FOR SELECT
    TO evalledger_revops USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_takes_quality_run_uncertainty_auditor ON eval_takes_quality_run_uncertainty FOR SELECT
    TO evalledger_auditor USING (true);
GRANT SELECT ON eval_takes_quality_run_uncertainty TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['eval_takes_quality_run_uncertainty:UPDATE OR DELETE:refuse_change_v3']);

-- takes_quality_uncertainty_complete_v1: after a takes-quality run's completion (completed_at set,
-- the verdict and receipt computed by takes_quality_run_decide_v2 before it), store its uncertainty
-- (eval_takes_quality_run_uncertainty): takes_quality_uncertainty_v1 of its verdict rows and rubric,
-- in the same transaction, so every completed run has its intervals and none is computed again at a
-- read. SECURITY DEFINER: the table takes rows from the code role alone, and every verdict row of the
-- run counts whoever completes it.
CREATE FUNCTION evalledger.takes_quality_uncertainty_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_takes_quality_run_uncertainty (run_id, uncertainty, run_created_at)
    VALUES (NEW.id, coalesce(evalledger.takes_quality_uncertainty_v1(NEW.id), '{}'::jsonb), NEW.created_at);
    RETURN NULL;
END;
$$;

-- After the decision (eval_takes_quality_runs_20_decide, BEFORE) and before the journal (_90_).
CREATE TRIGGER eval_takes_quality_runs_40_uncertainty AFTER UPDATE OF completed_at ON eval_takes_quality_runs
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION takes_quality_uncertainty_complete_v1();

-- takes_quality_intervals_v1: per completed takes-quality run, one row per rubric dimension and
-- the overall with its uncertainty over the deciding cycle's judges (docs/statistics.md,
-- "takes-quality"), beside the verdict, which uses the means only. Read from what the run's completion
-- stored (eval_takes_quality_run_uncertainty: takes_quality_uncertainty_v1 of its verdict rows, since
-- migration 0153), not computed at each read. Read by RevOps and auditors under their own row-level
-- security.
CREATE OR REPLACE VIEW evalledger.takes_quality_intervals_v1 AS
    SELECT r.id AS run_id, b.version AS rubric_version, r.started_at, r.completed_at, r.verdict, u.key AS dimension,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS judges, (u.value ->> 'between_call_variance')::float8 AS between_call_variance,
           (u.value ->> 'calls')::bigint AS calls
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
      JOIN evalledger.eval_takes_quality_run_uncertainty x ON x.run_id = r.id
     CROSS JOIN LATERAL jsonb_each(x.uncertainty) u
     WHERE r.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.takes_quality_intervals_v1 IS
    'Per completed takes-quality run, each rubric dimension and the overall with its standard error and 95% interval over the deciding cycle''s judges, and the variance of a judge''s score between calls; covers the judges'' disagreement on this sample, not the sampling of takes (docs/statistics.md); stored when the run completed (eval_takes_quality_run_uncertainty).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.run_id IS 'The run (eval_takes_quality_runs.id).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.rubric_version IS 'The rubric epoch the run was judged by, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.verdict IS 'The verdict the database computed: pass, fail or inconclusive (unchanged by the interval).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.dimension IS 'A rubric dimension (accuracy, attribution, ...) or overall (the mean of the dimension means).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.estimate IS 'The mean of the contributing judges'' scores, on the rubric''s scale (1-10), exact.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.stderr IS 'Its standard error over the judges, on the rubric''s scale (1-10); NULL with one judge.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.judges IS 'Count: the judges that contributed in the deciding cycle.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.between_call_variance IS 'The variance of one judge''s score between calls, over the cycles (the rubric''s scale squared); NULL for the overall and when no judge contributed twice.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.calls IS 'Count: the contributing calls across cycles that the between-call variance saw (NULL for the overall).';

REVOKE ALL ON takes_quality_intervals_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_intervals_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- takes_quality_receipt_uncertainty_v1: a takes-quality receipt with each dimension's optional
-- "stderr" and "ci95" (additive at schema_version 1, seed 000): what `takes-quality show` prints, and
-- `run --json` and the receipt's disk copy carry. A completed run's are what its completion stored
-- (eval_takes_quality_run_uncertainty, since migration 0153), never computed again; an open run's
-- (a receipt so far) takes_quality_uncertainty_v1's of its verdict rows now. The stored receipt_json
-- (what the completion trigger wrote, and what the ledger re-derives) is left as it was.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_receipt_uncertainty_v1(p_run_id bigint, receipt jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN receipt IS NULL OR jsonb_typeof(receipt -> 'scores') IS DISTINCT FROM 'object' THEN receipt
                ELSE jsonb_set(receipt, '{scores}', coalesce((
                    SELECT jsonb_object_agg(s.key,
                               CASE WHEN jsonb_typeof(s.value) = 'object' AND u.u -> s.key IS NOT NULL
                                    THEN s.value || jsonb_build_object('stderr', u.u -> s.key -> 'stderr',
                                                                       'ci95', u.u -> s.key -> 'ci95')
                                    ELSE s.value END)
                      FROM jsonb_each(receipt -> 'scores') s,
                           (SELECT coalesce((SELECT x.uncertainty FROM evalledger.eval_takes_quality_run_uncertainty x
                                              WHERE x.run_id = p_run_id),
                                            evalledger.takes_quality_uncertainty_v1(p_run_id)) AS u) u), receipt -> 'scores')) END
$$;
GRANT EXECUTE ON FUNCTION takes_quality_receipt_uncertainty_v1(bigint, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- Each completed work-quality snapshot's uncertainty beside its comparison (issue 36, item 3), stored
-- once when the snapshot completes (a judged run's completion, or an imported history file's
-- admission, which completes it at once): work_quality_uncertainty_v1's object (per dimension the
-- judges' mean, its standard error, 95% interval, n, clusters and method), computed by the database
-- from the snapshot's stored document and the work-quality rubric's scale, never taken from input.
-- `snapshot show RUN_ID`, the Snapshot JSON's optional stderr and ci95 (`--uncertainty`), the
-- intervals view (work_quality_intervals_v1) and the history's error bars read it instead of running
-- the statistics function for every snapshot at every read. Only the completion triggers
-- (work_quality_uncertainty_complete_v1) write it (no role holds INSERT), and every column is theirs:
-- append-only, journalled, aged with its snapshot (the snapshot's tier clock, run_created_at as eval_run_closure's), and re-derived by the
-- ledger's recompute (ledger_recompute_v3).
CREATE TABLE eval_work_quality_snapshot_uncertainty (
    snapshot_id         bigint      NOT NULL,
    uncertainty         jsonb       NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    run_created_at      timestamptz NOT NULL,
    CONSTRAINT eval_work_quality_snapshot_uncertainty_pkey PRIMARY KEY (snapshot_id),
    CONSTRAINT eval_work_quality_snapshot_uncertainty_snapshot_fkey FOREIGN KEY (snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
    CONSTRAINT eval_work_quality_snapshot_uncertainty_object CHECK (jsonb_typeof(uncertainty) = 'object')
);

COMMENT ON TABLE eval_work_quality_snapshot_uncertainty IS
    'Each completed work-quality snapshot''s uncertainty (work_quality_uncertainty_v1 of its document), computed by the database once at completion; read by work_quality_intervals_v1 and `snapshot show`.';

-- The same readers as the snapshot's own row, by the same tier clock (the snapshot's).
CREATE POLICY eval_work_quality_snapshot_uncertainty_runner ON eval_work_quality_snapshot_uncertainty FOR SELECT
    TO evalledger_runner USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_work_quality_snapshot_uncertainty_revops ON eval_work_quality_snapshot_uncertainty FOR SELECT
    TO evalledger_revops USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_work_quality_snapshot_uncertainty_auditor ON eval_work_quality_snapshot_uncertainty FOR SELECT
    TO evalledger_auditor USING (true);
GRANT SELECT ON eval_work_quality_snapshot_uncertainty TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['eval_work_quality_snapshot_uncertainty:UPDATE OR DELETE:refuse_change_v3']);

-- work_quality_uncertainty_v2: work_quality_uncertainty_v1's object for a Snapshot document, its 95%
-- intervals cut to the scale of the rubric given (a stored snapshot's own rubric_id: the one its
-- verdicts were admitted under), not whichever rubric is active when it is asked. So what a
-- snapshot's completion stored and what the recompute derives again use the same scale, whatever was
-- activated since (eval_work_quality_snapshot_uncertainty, ledger_recompute_v3). Each dimension over
-- the judges whose verdicts the document holds: the judges' mean (their mean over repeats,
-- work_quality_judge_scores_v1) and mean_stderr_v1's standard error ('judges'; n and clusters the
-- judges). The judges' scores are summed in the order of their models, byte by byte (COLLATE "C"; a
-- judge naming none after them, by its score), never a plan's (docs/statistics.md, "Order of
-- summation"). SECURITY DEFINER: it reads the rubric's scale and nothing else.
CREATE FUNCTION evalledger.work_quality_uncertainty_v2(doc jsonb, p_rubric_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH scale AS (
        SELECT (r.definition -> 'scale' ->> 'min')::float8 AS lo, (r.definition -> 'scale' ->> 'max')::float8 AS hi
          FROM evalledger.rubric r WHERE r.rubric_id = p_rubric_id),
    scored AS (
        -- A judge's score: its mean over its repeats (work_quality_judge_scores_v1; its one when K is 1).
        SELECT j.dimension AS key, array_agg(j.score ORDER BY j.judge COLLATE "C", j.score) AS scores
          FROM evalledger.work_quality_judge_scores_v1(doc) j
         GROUP BY j.dimension)
    SELECT jsonb_object_agg(s.key, evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                                             coalesce(scale.lo, 0), coalesce(scale.hi, 1)))
      FROM scored s
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(s.scores) m
      LEFT JOIN scale ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v2(jsonb, bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_uncertainty_v1: beside a work-quality snapshot (never changing it or its
-- comparison), each dimension with its uncertainty (uncertainty_v1's object) over the judges whose
-- verdicts the Snapshot document holds (aggregate.verdicts[].scores): the judges' mean and
-- mean_stderr_v1's standard error ('judges'; n and clusters the judges, each its own), the 95%
-- interval cut to the active work-quality rubric's scale. One work product is judged, so the
-- interval covers the judges' disagreement on it, not other runs of the bot (docs/statistics.md,
-- "work-quality"). What `snapshot show PATH` prints for a history file the ledger holds no snapshot of
-- (a stored snapshot's is cut to its own rubric's scale: work_quality_uncertainty_v2). It reads
-- no run, only the document given and the rubric's scale, so it runs as its owner (the active
-- rubric is active_rubric_v1's, which only the writing roles' functions call). The judges' scores
-- are summed in the order of their models, byte by byte (COLLATE "C"; a judge naming none after
-- them, by its score), never a plan's (docs/statistics.md, "Order of summation").
-- The one home of the computation is work_quality_uncertainty_v2, given the active rubric.
CREATE OR REPLACE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_uncertainty_v2(doc, evalledger.active_rubric_v1('work-quality'))
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_uncertainty_complete_v1: when a work-quality snapshot completes (a judged run's
-- completion, its document computed by work_quality_snapshot_decide_v3 before it; or an imported
-- history file, complete at its admission), store its uncertainty
-- (eval_work_quality_snapshot_uncertainty): work_quality_uncertainty_v2 of its stored document cut to
-- its own rubric's scale, in
-- the same transaction, so every completed snapshot has its intervals and none is computed again at a
-- read. SECURITY DEFINER: the table takes rows from the code role alone.
CREATE FUNCTION evalledger.work_quality_uncertainty_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_work_quality_snapshot_uncertainty (snapshot_id, uncertainty, run_created_at)
    VALUES (NEW.snapshot_id, coalesce(evalledger.work_quality_uncertainty_v2(NEW.snapshot_json, NEW.rubric_id), '{}'::jsonb),
            NEW.created_at);
    RETURN NULL;
END;
$$;

-- After the decision (eval_work_quality_snapshots_20_decide, BEFORE) and before the journal (_90_);
-- an import after its verdicts (_20_import_verdicts).
CREATE TRIGGER eval_work_quality_snapshots_40_uncertainty AFTER UPDATE OF completed_at ON eval_work_quality_snapshots
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION work_quality_uncertainty_complete_v1();

CREATE TRIGGER eval_work_quality_snapshots_40_uncertainty_import AFTER INSERT ON eval_work_quality_snapshots
    FOR EACH ROW WHEN (NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION work_quality_uncertainty_complete_v1();

-- work_quality_intervals_v1: per completed work-quality snapshot, one row per dimension with its
-- uncertainty over the judges (docs/statistics.md, "work-quality"), beside the comparison, which uses
-- the means only. Read from what the snapshot's completion stored (eval_work_quality_snapshot_uncertainty:
-- work_quality_uncertainty_v1 of the stored Snapshot document, since migration 0153), not computed at
-- each read. Read by RevOps and auditors under their own row-level security.
CREATE OR REPLACE VIEW evalledger.work_quality_intervals_v1 AS
    SELECT s.snapshot_id, s.name, s.run_id, s.at, s.completed_at, u.key AS dimension,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS judges
      FROM evalledger.eval_work_quality_snapshots s
      JOIN evalledger.eval_work_quality_snapshot_uncertainty x ON x.snapshot_id = s.snapshot_id
     CROSS JOIN LATERAL jsonb_each(x.uncertainty) u
     WHERE s.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.work_quality_intervals_v1 IS
    'Per completed work-quality snapshot and dimension, the judges'' mean with its standard error and 95% interval; covers the judges'' disagreement on this work product, not other runs of the bot (docs/statistics.md); stored when the snapshot completed (eval_work_quality_snapshot_uncertainty).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.name IS 'The target (a bot or feature) the snapshot is of.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.completed_at IS 'When the snapshot was completed (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.dimension IS 'A dimension of the rubric: efficacy, completeness, output_quality, restraint, reliability, value_for_money or overall.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.estimate IS 'The judges'' mean score, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.stderr IS 'Its standard error over the judges, on the rubric''s scale (0-1); NULL with one judge.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.judges IS 'Count: the judges whose scores the snapshot holds for the dimension.';

REVOKE ALL ON work_quality_intervals_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_intervals_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- retention_rows_v2: every row of every aging table but the captured queries (which leave by
-- whole monthly partitions) with its tier clock, the brains and run a hold may name (a brain-eval
-- row's label and every brain of its prompt), and whether a row that stays still references it (an
-- analysis of a kept run, an import of a kept run; a work-quality snapshot is never pinned by the one
-- after it): what retention_plan_v2 classifies, by the same rules as retention_due_v2 and the purge.
CREATE OR REPLACE FUNCTION evalledger.retention_rows_v2()
RETURNS TABLE (table_name text, tier_clock timestamptz, brains text[], run uuid, pinned boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.brain_under_test, l.created_at, l.import_id,
               evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash) AS brains,
               l.created_at < evalledger.purge_horizon_at_v1()
               AND NOT evalledger.retention_held_v2(l.created_at,
                                                    evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                                    l.eval_run_id) AS goes
          FROM evalledger.brain_eval_log l
    )
    SELECT 'brain_eval_log', r.created_at, r.brains, r.eval_run_id, false FROM runs r
    UNION ALL
    SELECT 'brain_eval_question_score', q.run_created_at, r.brains, q.eval_run_id, false
      FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_run', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_run t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_answer', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_answer t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_judge_suggestion', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_judge_suggestion t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_review_entry', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_review_entry t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_review', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_review t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_suggestion_shown', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_suggestion_shown t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_closure', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_closure t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_uncertainty', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_uncertainty t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_analysis_log', a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL::uuid,
           EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
                    WHERE q.brain_analysis_id = a.analysis_id AND NOT r.goes)
           OR EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h JOIN runs r USING (eval_run_id)
                       WHERE h.analysis_id = a.analysis_id AND NOT r.goes)
      FROM evalledger.brain_analysis_log a
    UNION ALL
    SELECT 'brain_eval_import', i.created_at, NULL::text[], NULL,
           EXISTS (SELECT 1 FROM runs r WHERE r.import_id = i.import_id AND NOT r.goes)
      FROM evalledger.brain_eval_import i
    UNION ALL
    SELECT 'eval_takes_quality_runs', t.created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_runs t
    UNION ALL
    SELECT 'eval_takes_quality_judge_verdicts', v.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_judge_verdicts v JOIN evalledger.eval_takes_quality_runs t ON t.id = v.run_id
    UNION ALL
    SELECT 'eval_takes_quality_run_uncertainty', u.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_run_uncertainty u JOIN evalledger.eval_takes_quality_runs t ON t.id = u.run_id
    UNION ALL
    SELECT 'eval_work_quality_snapshots', s.created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshots s
    UNION ALL
    SELECT 'eval_work_quality_judge_verdicts', v.snapshot_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_judge_verdicts v
    UNION ALL
    SELECT 'eval_work_quality_snapshot_uncertainty', u.run_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshot_uncertainty u
    UNION ALL
    SELECT 'eval_run_closure', c.run_created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL, false
      FROM evalledger.eval_run_closure c LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = c.takes_quality_run_id
    UNION ALL
    SELECT 'eval_candidate_keys', k.created_at, NULL, NULL, false FROM evalledger.eval_candidate_keys k
    UNION ALL
    SELECT 'eval_capture_failures', f.recorded_at, NULL, NULL, false FROM evalledger.eval_capture_failures f
    UNION ALL
    -- A gate decision by its own clock, the brain of its takes-quality run, kept while that run stays.
    SELECT 'eval_gate_decision', g.created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL,
           evalledger.retention_gate_pinned_v1(g.run_id)
      FROM evalledger.eval_gate_decision g LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = g.run_id
    UNION ALL
    SELECT 'replay_run', r.created_at, ARRAY[r.brain_version], NULL, false FROM evalledger.replay_run r
    UNION ALL
    SELECT 'replay_query', q.run_created_at, ARRAY[r.brain_version], NULL, false
      FROM evalledger.replay_query q JOIN evalledger.replay_run r USING (replay_run_id)
$$;

-- retention_due_v2: true when a row of an aging table is due for purge: its tier clock (the
-- database's own recording time, carried onto child rows from their parent) is past the purge
-- horizon and no legal hold covers it. Reference data and every other table: never. A released
-- hold goes with its run (run holds) or once its release is past the horizon (brain and range
-- holds); a release goes only with its hold (ON DELETE CASCADE). The horizon is purge_horizon_at_v1
-- (UTC, the statement's clock), and a brain hold covers a row of the brain's prompt whatever its
-- label (retention_held_v2 with run_brains_v1).
CREATE OR REPLACE FUNCTION evalledger.retention_due_v2(table_name text, r jsonb) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    clock timestamptz;
    brain text;
    prompt text;
    run uuid;
BEGIN
    CASE table_name
    WHEN 'brain_eval_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_under_test';
        prompt := r ->> 'system_prompt_hash';
        run := r ->> 'eval_run_id';
    WHEN 'brain_eval_question_score', 'brain_eval_harness_run', 'brain_eval_harness_answer',
         'brain_eval_judge_suggestion', 'brain_eval_review_entry', 'brain_eval_run_review',
         'brain_eval_suggestion_shown', 'brain_eval_run_closure', 'brain_eval_run_uncertainty' THEN
        clock := r ->> 'run_created_at';
        run := r ->> 'eval_run_id';
        SELECT l.brain_under_test, l.system_prompt_hash INTO brain, prompt
          FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run;
    WHEN 'brain_analysis_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain';
        prompt := r ->> 'system_prompt_hash';
    WHEN 'brain_eval_import', 'eval_work_quality_snapshots', 'eval_candidate_keys' THEN
        clock := r ->> 'created_at';
    WHEN 'eval_takes_quality_runs' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'target_id';
    WHEN 'eval_takes_quality_judge_verdicts', 'eval_takes_quality_run_uncertainty' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'eval_run_closure' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t
         WHERE t.id = (r ->> 'takes_quality_run_id')::bigint;
    WHEN 'eval_work_quality_judge_verdicts' THEN
        clock := r ->> 'snapshot_created_at';
    WHEN 'eval_work_quality_snapshot_uncertainty' THEN
        clock := r ->> 'run_created_at';
    WHEN 'eval_capture_failures' THEN
        clock := r ->> 'recorded_at';
    WHEN 'eval_gate_decision' THEN
        -- Its own clock, its takes-quality run's brain; never while that run stays.
        IF evalledger.retention_gate_pinned_v1((r ->> 'run_id')::bigint) THEN
            RETURN false;
        END IF;
        clock := r ->> 'created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'replay_run' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_version';
    WHEN 'replay_query' THEN
        clock := r ->> 'run_created_at';
        SELECT x.brain_version INTO brain FROM evalledger.replay_run x
         WHERE x.replay_run_id = (r ->> 'replay_run_id')::bigint;
    WHEN 'legal_hold' THEN
        IF r ->> 'released_at' IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint) THEN
            RETURN false;
        END IF;
        IF r ->> 'eval_run_id' IS NOT NULL THEN
            SELECT l.created_at, l.brain_under_test, l.system_prompt_hash, l.eval_run_id INTO clock, brain, prompt, run
              FROM evalledger.brain_eval_log l WHERE l.eval_run_id = (r ->> 'eval_run_id')::uuid;
        ELSE
            SELECT coalesce((r ->> 'released_at')::timestamptz, max(x.released_at)) INTO clock
              FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint;
            RETURN clock < evalledger.purge_horizon_at_v1();
        END IF;
    WHEN 'legal_hold_release' THEN
        RETURN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h WHERE h.hold_id = (r ->> 'hold_id')::bigint);
    ELSE
        RETURN false;
    END CASE;
    RETURN coalesce(clock < evalledger.purge_horizon_at_v1()
                    AND NOT evalledger.retention_held_v2(clock, evalledger.run_brains_v1(brain, prompt), run), false);
END;
$$;

-- retention_plan_v2: per aging table, how many rows are hot (recorded in the last 24 months),
-- cold (24 months to 7 years: auditors only), due for purge (past 7 years, no hold) and held past
-- the horizon, and which holds keep which rows. Captured queries count by whole monthly partition,
-- as they are purged. Counts only, so auditors may ask it of tables they cannot read. The windows
-- are hot_tier_start_v1 and purge_horizon_at_v1 (UTC, the statement's clock), the holds those of
-- retention_held_v2 (a brain hold keeps its prompt's rows).
CREATE OR REPLACE FUNCTION evalledger.retention_plan_v2()
RETURNS TABLE (table_name text, hot bigint, cold bigint, due bigint, held bigint, held_by text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH holds AS (
        SELECT h.hold_id, h.eval_run_id, h.target_id, h.held_from, h.held_to,
               CASE WHEN h.eval_run_id IS NOT NULL THEN 'run ' || h.eval_run_id
                    WHEN h.target_id IS NOT NULL THEN 'brain ' || h.target_id
                    ELSE 'range ' || to_char(h.held_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                         || '..' || to_char(h.held_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') END AS scope
          FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
    ),
    parts AS (
        SELECT c.relname::text AS part,
               (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC' AS month_start,
               (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' AS month_end,
               evalledger.capture_partition_expired_v2(c.relname) AS expired
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
    ),
    rows AS (
        SELECT r.table_name, r.tier_clock, r.brains, r.run, r.pinned,
               r.tier_clock >= evalledger.hot_tier_start_v1() AS hot,
               r.tier_clock < evalledger.purge_horizon_at_v1() AS past
          FROM evalledger.retention_rows_v2() r
        UNION ALL
        SELECT 'eval_candidates', c.created_at, NULL::text[], NULL, false,
               c.created_at >= evalledger.hot_tier_start_v1(), p.expired
          FROM evalledger.eval_candidates c
          JOIN parts p ON c.created_at >= p.month_start AND c.created_at < p.month_end
    ),
    covered AS (
        SELECT r.table_name, h.hold_id, h.scope, count(*) AS n
          FROM rows r
          JOIN holds h ON h.eval_run_id = r.run OR h.target_id = ANY (r.brains)
                       OR (r.table_name <> 'eval_candidates' AND r.tier_clock BETWEEN h.held_from AND h.held_to)
                       OR (r.table_name = 'eval_candidates' AND EXISTS (
                               SELECT 1 FROM parts p
                                WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end
                                  AND h.held_from < p.month_end AND h.held_to >= p.month_start))
         WHERE r.past
         GROUP BY r.table_name, h.hold_id, h.scope
    ),
    classified AS (
        SELECT r.table_name, r.hot, r.past, r.pinned,
               r.past AND (r.pinned OR
                   CASE WHEN r.table_name = 'eval_candidates' THEN EXISTS (
                            SELECT 1 FROM parts p JOIN holds h ON h.held_from < p.month_end AND h.held_to >= p.month_start
                             WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end)
                        ELSE evalledger.retention_held_v2(r.tier_clock, r.brains, r.run) END) AS held
          FROM rows r
    ),
    tables AS (
        SELECT t.table_name, t.n
          FROM unnest(ARRAY['brain_eval_log', 'brain_eval_question_score', 'brain_eval_harness_run',
                            'brain_eval_harness_answer', 'brain_eval_judge_suggestion', 'brain_eval_review_entry',
                            'brain_eval_run_review', 'brain_eval_suggestion_shown', 'brain_eval_run_closure',
                            'brain_eval_run_uncertainty',
                            'brain_analysis_log', 'brain_eval_import',
                            'eval_takes_quality_runs', 'eval_takes_quality_judge_verdicts',
                            'eval_takes_quality_run_uncertainty',
                            'eval_work_quality_snapshots', 'eval_work_quality_judge_verdicts',
                            'eval_work_quality_snapshot_uncertainty', 'eval_run_closure',
                            'replay_run', 'replay_query',
                            'eval_candidates', 'eval_candidate_keys', 'eval_capture_failures',
                            'eval_gate_decision'])
               WITH ORDINALITY AS t (table_name, n)
    )
    SELECT t.table_name,
           count(c.table_name) FILTER (WHERE c.hot),
           count(c.table_name) FILTER (WHERE NOT c.hot AND NOT c.past),
           count(c.table_name) FILTER (WHERE c.past AND NOT c.held),
           count(c.table_name) FILTER (WHERE c.held),
           nullif(concat_ws('; ',
               (SELECT string_agg(format('hold %s (%s): %s', v.hold_id, v.scope, v.n), '; ' ORDER BY v.hold_id)
                  FROM covered v WHERE v.table_name = t.table_name),
               CASE WHEN count(*) FILTER (WHERE c.pinned AND c.past) > 0
                    THEN format(CASE WHEN t.table_name = 'eval_gate_decision' THEN '%s decided about kept runs'
                                     ELSE '%s referenced by kept rows' END,
                                count(*) FILTER (WHERE c.pinned AND c.past)) END), '')
      FROM tables t LEFT JOIN classified c USING (table_name)
     GROUP BY t.table_name, t.n
     ORDER BY t.n
$$;
GRANT EXECUTE ON FUNCTION retention_plan_v2() TO evalledger_retention, evalledger_auditor, evalledger_owner;

-- retention_purge_v2: the one way rows leave the ledger (seed 002: hard delete past 7 years,
-- subject to legal hold). Deletes, in foreign-key order, every row whose tier clock is past the
-- purge horizon and that no unreleased hold covers: brain-eval runs with their judge suggestions,
-- harness answers, review entries, suggestions shown, run reviews, question rows, harness runs and
-- released holds;
-- analyses and imports no row references any more; takes-quality verdicts, stored uncertainty then runs; work-quality
-- verdicts, stored uncertainty then snapshots (a snapshot a kept one builds on stays); replay queries then runs;
-- captured-query partitions whose
-- whole month is past the horizon and that no range hold overlaps, and capture keys and failures;
-- released brain and range holds whose release is past the horizon. Each step is a row of
-- retention_purge_log (who, when, which table, how many rows, which run or partition), and the
-- function returns this transaction's rows of it. The code role's, executable only by
-- evalledger_retention: the guards (refuse_change_v3) let a DELETE through only inside it. The
-- horizon is purge_horizon_at_v1 (UTC, the statement's clock: no session TimeZone moves it); a brain
-- hold keeps what runs the brain's prompt, whatever the label (retention_held_v2, run_brains_v1); a
-- work-quality snapshot goes when it is due even if a kept one compared with it (the kept one keeps
-- its comparison and the previous run's id), so an active target's history still ages out. It runs
-- under READ COMMITTED only: it waits for the hold tables' writers, and only a fresh snapshot then
-- sees the hold that one of them committed. It waits for those writers at most 5 seconds: the owner
-- role's INSERT on the hold tables lets it LOCK them ROW EXCLUSIVE and keep its transaction open, so
-- the purge stops then, naming who holds them, instead of queueing for ever. A captured-query
-- partition whose DROP (ACCESS EXCLUSIVE on eval_candidates) would wait behind a reader's open
-- transaction, and so queue every capture and read behind it, is left to the next purge. Before a
-- partition goes, every replay run still open over it gets a capture_purged row for each captured
-- row of the month it planned and has not replayed (never a pass: replay_decision_v1).
CREATE OR REPLACE FUNCTION evalledger.retention_purge_v2()
RETURNS TABLE (purged_table text, purged_rows bigint, purged_run uuid, purged_partition text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET lock_timeout = '5s' AS $$
DECLARE
    horizon timestamptz := evalledger.purge_horizon_at_v1();
    runs uuid[];
    tq_runs bigint[];
    snapshots bigint[];
    replays bigint[];
    part record;
    n bigint;
    purged text;
BEGIN
    PERFORM evalledger.require_read_committed_v2('the retention purge');
    -- No hold is placed or released while the purge decides and deletes.
    BEGIN
        LOCK TABLE evalledger.legal_hold, evalledger.legal_hold_release IN SHARE MODE;
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(DISTINCT a.usename::text, ', ') INTO purged
          FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
           AND l.relation IN ('evalledger.legal_hold'::regclass, 'evalledger.legal_hold_release'::regclass);
        RAISE EXCEPTION 'evalledger: the purge waited 5 s for the legal holds, which % holds in an open transaction: nothing purged',
                coalesce(purged, 'another session')
            USING ERRCODE = 'lock_not_available', HINT = 'run the purge again once that transaction ends';
    END;
    INSERT INTO evalledger.retention_purge_marker (txid) VALUES (txid_current());

    -- brain-eval runs, children first
    SELECT coalesce(array_agg(l.eval_run_id), '{}') INTO runs
      FROM evalledger.brain_eval_log l
     WHERE l.created_at < horizon
       AND NOT evalledger.retention_held_v2(l.created_at, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                            l.eval_run_id);
    -- In foreign-key order; released holds of those runs go with them (their releases by ON DELETE
    -- CASCADE). Each table's rows, counted per run, into the log.
    FOREACH purged IN ARRAY ARRAY['brain_eval_judge_suggestion', 'brain_eval_harness_answer', 'brain_eval_review_entry',
                                  'brain_eval_suggestion_shown', 'brain_eval_run_review', 'brain_eval_run_closure',
                                  'brain_eval_run_uncertainty', 'brain_eval_question_score',
                                  'brain_eval_harness_run', 'legal_hold', 'brain_eval_log'] LOOP
        EXECUTE format('WITH gone AS (DELETE FROM evalledger.%I t WHERE t.eval_run_id = ANY ($1) RETURNING t.eval_run_id) '
                       'INSERT INTO evalledger.retention_purge_log (table_name, row_count, eval_run_id) '
                       'SELECT %L, count(*), g.eval_run_id FROM gone g GROUP BY g.eval_run_id', purged, purged)
            USING runs;
    END LOOP;

    -- Analyses (production and eval) and imports that nothing references any more.
    WITH gone AS (
        DELETE FROM evalledger.brain_analysis_log a
         WHERE a.created_at < horizon
           AND NOT evalledger.retention_held_v2(a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q WHERE q.brain_analysis_id = a.analysis_id)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h WHERE h.analysis_id = a.analysis_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_analysis_log', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.brain_eval_import i
         WHERE i.created_at < horizon
           AND NOT evalledger.retention_held_v2(i.created_at, NULL, NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.import_id = i.import_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_eval_import', count(*) FROM gone HAVING count(*) > 0;

    -- Gate decisions, each by its own clock as it falls due, never while the takes-quality run it decided
    -- about stays (retention_gate_pinned_v1); before the runs, so a hold of the run's brain still reaches it.
    WITH gone AS (
        DELETE FROM evalledger.eval_gate_decision g
         WHERE g.created_at < horizon
           AND NOT evalledger.retention_held_v2(
                   g.created_at,
                   ARRAY(SELECT t.target_id::text FROM evalledger.eval_takes_quality_runs t WHERE t.id = g.run_id), NULL)
           AND NOT evalledger.retention_gate_pinned_v1(g.run_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_gate_decision', count(*) FROM gone HAVING count(*) > 0;

    -- takes-quality: verdicts, the stored uncertainty, then runs
    SELECT coalesce(array_agg(t.id), '{}') INTO tq_runs
      FROM evalledger.eval_takes_quality_runs t
     WHERE t.created_at < horizon AND NOT evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL);
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_run_uncertainty u WHERE u.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_run_uncertainty', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_runs t WHERE t.id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_runs', count(*) FROM gone HAVING count(*) > 0;

    -- work-quality: verdicts, the stored uncertainty, then snapshots, each as it falls due: a snapshot that a kept one
    -- compared with does not pin it (the kept one names its run and keeps the comparison).
    SELECT coalesce(array_agg(s.snapshot_id), '{}') INTO snapshots
      FROM evalledger.eval_work_quality_snapshots s
     WHERE s.created_at < horizon AND NOT evalledger.retention_held_v2(s.created_at, NULL, NULL);
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshot_uncertainty u
                   WHERE u.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshot_uncertainty', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshots', count(*) FROM gone HAVING count(*) > 0;

    -- replay: each run with its queries as the run falls due (their tier clock is the run's
    -- recording time; a hold on the brain version's label, or a range holding that time, keeps both).
    SELECT coalesce(array_agg(r.replay_run_id), '{}') INTO replays
      FROM evalledger.replay_run r
     WHERE r.created_at < horizon AND NOT evalledger.retention_held_v2(r.created_at, ARRAY[r.brain_version], NULL);
    WITH gone AS (DELETE FROM evalledger.replay_query q WHERE q.replay_run_id = ANY (replays) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'replay_query', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.replay_run r WHERE r.replay_run_id = ANY (replays) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'replay_run', count(*) FROM gone HAVING count(*) > 0;

    -- Captured queries: whole monthly partitions past the horizon that no range hold overlaps
    -- (the drop guard admits them inside the capture purge's marker), then keys and failures.
    INSERT INTO evalledger.capture_purge_marker (txid) VALUES (txid_current());
    FOR part IN
        SELECT c.relname::text AS name
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
           AND evalledger.capture_partition_expired_v2(c.relname)
           AND NOT EXISTS (
               SELECT 1 FROM evalledger.legal_hold h
                WHERE h.held_from IS NOT NULL AND h.released_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
                  AND h.held_from < (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                  AND h.held_to >= (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC')
         ORDER BY c.relname
    LOOP
        -- Counted through the parent: a partition has no policy of its own, so FORCE hides its rows.
        SELECT count(*) INTO n FROM evalledger.eval_candidates c
         WHERE c.tableoid = ('evalledger.' || quote_ident(part.name))::regclass;
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
            -- Open replay runs first: with no reader of the captured rows left (the DROP's lock, taken
            -- now), each captured row of this month a run planned and has not replayed is recorded
            -- for it as purged (replay_query_admit_v1 copies its captured fields), so the run is
            -- still completed whole, and decided without passing on it (replay_decision_v1). What a
            -- run planned is the newest `planned` rows of its window (the rows its role could read,
            -- at most max_rows: newest first, as the runner asks them), less those purged before.
            LOCK TABLE evalledger.eval_candidates IN ACCESS EXCLUSIVE MODE;
            INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, outcome, error)
            SELECT r.replay_run_id, w.id, w.created_at, 'capture_purged',
                   format('captured row purged by retention (%s) before the run replayed it', part.name)
              FROM evalledger.replay_run r
             CROSS JOIN LATERAL (
                    SELECT c.id, c.created_at, c.tableoid FROM evalledger.eval_candidates c
                     WHERE (r.since_at IS NULL OR c.created_at >= r.since_at) AND c.created_at < r.until_at
                       AND (r.tool IS NULL OR c.tool_name = r.tool) AND (r.remote IS NULL OR c.remote = r.remote)
                     ORDER BY c.created_at DESC, c.id DESC
                     LIMIT greatest(r.planned - (SELECT count(*) FROM evalledger.replay_query p
                                                  WHERE p.replay_run_id = r.replay_run_id
                                                    AND p.status = 'capture_purged'), 0)) w
             WHERE r.source = 'ledger' AND r.completed_at IS NULL
               AND w.tableoid = ('evalledger.' || quote_ident(part.name))::regclass
               AND NOT EXISTS (SELECT 1 FROM evalledger.replay_query q
                                WHERE q.replay_run_id = r.replay_run_id AND q.capture_id = w.id)
             ORDER BY r.replay_run_id, w.created_at, w.id;
            EXECUTE format('DROP TABLE evalledger.%I', part.name);
            INSERT INTO evalledger.retention_purge_log (table_name, row_count, partition_name)
            VALUES ('eval_candidates', n, part.name);
        EXCEPTION WHEN lock_not_available THEN
            NULL;  -- a reader holds eval_candidates: the next purge drops it
        END;
        PERFORM pg_catalog.set_config('lock_timeout', '5s', true);
    END LOOP;
    DELETE FROM evalledger.capture_purge_marker m WHERE m.txid = txid_current();
    WITH gone AS (
        DELETE FROM evalledger.eval_candidate_keys k
         WHERE k.created_at < horizon AND NOT evalledger.retention_held_v2(k.created_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_candidate_keys', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.eval_capture_failures f
         WHERE f.recorded_at < horizon AND NOT evalledger.retention_held_v2(f.recorded_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_capture_failures', count(*) FROM gone HAVING count(*) > 0;

    -- Brain and range holds released more than the horizon ago.
    WITH gone AS (
        DELETE FROM evalledger.legal_hold h
         WHERE h.eval_run_id IS NULL
           AND coalesce(h.released_at, (SELECT max(x.released_at) FROM evalledger.legal_hold_release x
                                          WHERE x.hold_id = h.hold_id)) < horizon
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'legal_hold', count(*) FROM gone HAVING count(*) > 0;

    DELETE FROM evalledger.retention_purge_marker m WHERE m.txid = txid_current();
    RETURN QUERY
        SELECT p.table_name, p.row_count, p.eval_run_id, p.partition_name
          FROM evalledger.retention_purge_log p
         WHERE p.txid = txid_current()
         ORDER BY p.purge_log_id;
END;
$$;

-- The purge is the retention role's alone; the plan (counts only) also the auditor's and the owner's.
GRANT EXECUTE ON FUNCTION retention_purge_v2() TO evalledger_retention;


CALL seal_tables_v2();
CALL journal_attach_v2();

-- After the journal's attach, which makes the new tables' key functions the recompute calls.
-- Compares the suites' runs by the keys the journal gives them (journal_key_v1, made per table by
-- journal_attach_v2).
-- ledger_recompute_v3 (issue 18: brain-eval runs by brain_eval_decide_v2 and question rows by
-- brain_eval_question_verdict_v1, the versions their triggers decide by; v2 re-derived both by the
-- versions issue 17 replaced): every computed column of every completed run whose value now differs from
-- what its suite's decision computes from the run's inputs (one row per column): brain-eval runs
-- (aggregates, criteria, decision, rationale, cost, hours and notes) and their question rows
-- (question_passed) and the uncertainty their completion stored (brain_eval_run_uncertainty, by
-- brain_eval_uncertainty_v1), takes-quality runs (cycles, verdict, overall score, cost, receipt) and
-- the uncertainty their completion stored (eval_takes_quality_run_uncertainty, by
-- takes_quality_uncertainty_v1), and work-quality runs (means, spreads, note, comparison, judges' cost, document) and
-- the uncertainty their completion stored (eval_work_quality_snapshot_uncertainty, by
-- work_quality_uncertainty_v2 cut to its snapshot's own rubric's scale, whatever was activated
-- since), and replay runs
-- (decision, rationale, summary) and their replayed queries (recall, jaccard, rbo), and regression
-- gate decisions (decision, reasons, comparison: gate_decide_v1, as eval_gate_decision_admit_v1
-- decides them). Values compare
-- as JSON values, so 0.50 and 0.5 are equal and nothing is rounded. It reads through each suite's
-- one entry point (ledger_recompute_<suite>_v1), which calls the functions the suite's trigger
-- calls: a rewritten decision shows here even where the journal was rewritten to match it. Runs
-- imported from history files are the files' own and are not re-derived (the intervals the database
-- stored for them are).
CREATE OR REPLACE FUNCTION evalledger.ledger_recompute_v3()
RETURNS TABLE (table_name text, row_key text, column_name text, stored text, recomputed text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH decided (table_name, row_key, was, now_is, columns) AS (
        SELECT 'brain_eval_log', evalledger.journal_key_v1(l), to_jsonb(l), evalledger.ledger_recompute_brain_eval_v2(l),
               ARRAY['aggregated_scores', 'hard_criteria_passed', 'soft_criteria_passed_count', 'decision',
                     'decision_rationale', 'token_cost_usd', 'reviewer_hours_spent', 'calibration_notes']
          FROM evalledger.brain_eval_log l WHERE l.completed_at IS NOT NULL
        UNION ALL
        SELECT 'brain_eval_question_score', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object('question_passed', evalledger.brain_eval_question_verdict_v1(
                   q, evalledger.brain_eval_question_policy_v2(q.eval_run_id, q.question_id))),
               ARRAY['question_passed']
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.completed_at IS NOT NULL
        UNION ALL
        SELECT 'brain_eval_run_uncertainty', evalledger.journal_key_v1(u), to_jsonb(u),
               jsonb_build_object('uncertainty', coalesce(evalledger.brain_eval_uncertainty_v1(u.eval_run_id), '{}'::jsonb)),
               ARRAY['uncertainty']
          FROM evalledger.brain_eval_run_uncertainty u
        UNION ALL
        SELECT 'eval_takes_quality_runs', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('cycles_run', x -> 'cycles_run', 'verdict', x -> 'verdict',
                                          'overall_score', x -> 'overall_score', 'cost_usd', x -> 'cost_usd',
                                          'receipt_json', x)
                  FROM (SELECT evalledger.ledger_recompute_takes_quality_v2(r.id) AS x) receipt),
               ARRAY['cycles_run', 'verdict', 'overall_score', 'cost_usd', 'receipt_json']
          FROM evalledger.eval_takes_quality_runs r WHERE r.completed_at IS NOT NULL
        UNION ALL
        SELECT 'eval_takes_quality_run_uncertainty', evalledger.journal_key_v1(u), to_jsonb(u),
               jsonb_build_object('uncertainty', coalesce(evalledger.takes_quality_uncertainty_v1(u.run_id), '{}'::jsonb)),
               ARRAY['uncertainty']
          FROM evalledger.eval_takes_quality_run_uncertainty u
        UNION ALL
        SELECT 'eval_work_quality_snapshots', evalledger.journal_key_v1(s), to_jsonb(s),
               evalledger.ledger_recompute_work_quality_v2(s),
               ARRAY['mean_scores', 'disagreement', 'note', 'comparison', 'judges_cost_usd', 'snapshot_json']
          FROM evalledger.eval_work_quality_snapshots s WHERE s.completed_at IS NOT NULL AND s.origin = 'run'
        UNION ALL
        -- An imported snapshot's too: the file's document is its own, its intervals the database's.
        SELECT 'eval_work_quality_snapshot_uncertainty', evalledger.journal_key_v1(u), to_jsonb(u),
               jsonb_build_object('uncertainty', coalesce(evalledger.work_quality_uncertainty_v2(s.snapshot_json, s.rubric_id),
                                                          '{}'::jsonb)),
               ARRAY['uncertainty']
          FROM evalledger.eval_work_quality_snapshot_uncertainty u
          JOIN evalledger.eval_work_quality_snapshots s USING (snapshot_id)
        UNION ALL
        SELECT 'replay_run', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('decision', x -> 'decision', 'rationale', x -> 'rationale', 'summary', x)
                  FROM (SELECT evalledger.replay_decision_v1(r) AS x) decided),
               ARRAY['decision', 'rationale', 'summary']
          FROM evalledger.replay_run r WHERE r.completed_at IS NOT NULL
        UNION ALL
        SELECT 'replay_query', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object(
                   'recall', evalledger.replay_recall_v1(q.captured_slugs, q.retrieved_slugs),
                   'jaccard', evalledger.replay_jaccard_v1(q.captured_slugs, q.retrieved_slugs),
                   'rbo', evalledger.replay_rbo_v1(q.captured_chunk_ids, q.retrieved_chunk_ids,
                                                   (b.definition ->> 'rbo_p')::numeric)),
               ARRAY['recall', 'jaccard', 'rbo']
          FROM evalledger.replay_run r JOIN evalledger.replay_query q USING (replay_run_id)
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         WHERE r.completed_at IS NOT NULL AND q.status = 'replayed'
        UNION ALL
        -- A gate decision, re-decided from what it was decided on by the function its admission trigger
        -- calls: a takes-quality gate whose run had completed when it was decided (an open run's receipt
        -- was provisional; a run the purge took is gone), a work-quality gate (its two documents are its
        -- own) while the work-quality rubric it was decided under is still the active one.
        SELECT 'eval_gate_decision', evalledger.journal_key_v1(g), to_jsonb(g),
               (SELECT jsonb_build_object('decision', x -> 'decision', 'reasons', x -> 'reasons', 'comparison', x)
                  FROM (SELECT evalledger.gate_decide_v1(g.suite, g.mode, g.threshold, g.baseline, g.current_doc,
                                                         g.run_id) AS x) decided),
               ARRAY['decision', 'reasons', 'comparison']
          FROM evalledger.eval_gate_decision g
         WHERE CASE g.suite
                   WHEN 'takes-quality' THEN EXISTS (
                       SELECT 1 FROM evalledger.eval_takes_quality_runs t
                        WHERE t.id = g.run_id AND t.completed_at <= g.created_at)
                   ELSE (SELECT a.rubric_id FROM evalledger.rubric_activation a
                          WHERE a.suite = 'work-quality' AND a.activated_at <= g.created_at
                          ORDER BY a.activation_id DESC LIMIT 1)
                        IS NOT DISTINCT FROM evalledger.active_rubric_v1('work-quality') END)
    SELECT d.table_name, d.row_key, c, (d.was -> c)::text, (d.now_is -> c)::text
      FROM decided d CROSS JOIN LATERAL unnest(d.columns) c
     WHERE (d.was -> c) IS DISTINCT FROM (d.now_is -> c)
     ORDER BY 1, 2, 3
$$;
GRANT EXECUTE ON FUNCTION ledger_recompute_v3() TO evalledger_owner, evalledger_auditor;


-- Every run and snapshot completed before this migration: its uncertainty, computed now by the
-- function its completion would have called, from its verdict rows and rubric or its document as
-- stored (journalled as INSERTs).
INSERT INTO eval_takes_quality_run_uncertainty (run_id, uncertainty, run_created_at)
SELECT t.id, coalesce(takes_quality_uncertainty_v1(t.id), '{}'::jsonb), t.created_at
  FROM eval_takes_quality_runs t
 WHERE t.completed_at IS NOT NULL
 ORDER BY t.created_at, t.id;

INSERT INTO eval_work_quality_snapshot_uncertainty (snapshot_id, uncertainty, run_created_at)
SELECT s.snapshot_id, coalesce(work_quality_uncertainty_v2(s.snapshot_json, s.rubric_id), '{}'::jsonb), s.created_at
  FROM eval_work_quality_snapshots s
 WHERE s.completed_at IS NOT NULL
 ORDER BY s.created_at, s.snapshot_id;

RESET ROLE;
