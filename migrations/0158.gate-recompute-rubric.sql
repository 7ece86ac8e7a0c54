-- A work-quality gate decision is re-decided under the rubric it was decided under, and a takes-quality
-- one when its run had completed as it was decided (issue 35's recompute). ledger_recompute_v3 re-decided a work-quality gate (eval_gate_decision) only while
-- the work-quality rubric it guessed by the clock (the latest activation no later than the gate's
-- created_at) was still the active one: after any later activation every work-quality gate stored
-- before it was skipped, so a decision, reasons or comparison rewritten on it went unnamed (and in a
-- race between an activation and a gate the guess could name an honest row). The gate row now
-- stores the work-quality rubric active when it was decided (work_quality_rubric_id, filled by the
-- admission trigger from the database's own activation, never from the caller: supplied, it is
-- refused), and gate_decide_v2 decides under the rubric given (its dimensions, same band and
-- default tolerance, by work_quality_policy_v2): the trigger gives the one it stored, the recompute
-- the stored one, whatever was activated since. Compare, IsRegression and the paired comparison take
-- the policy given (work_quality_compare_v2, work_quality_is_regression_v2, work_quality_paired_v2);
-- their v1s are those under the active rubric's policy (work_quality_policy_v1, now
-- work_quality_policy_v2 of the active rubric). gate_decide_v1 and work_quality_paired_v1, which
-- nothing calls now, are dropped.
-- The gates stored before: where every work-quality activation the ledger holds names the same
-- rubric (the first was made by 0001, before the gate table existed, and activations are only
-- added), every gate was decided under that one, and each row takes it (as the new column's value
-- when it is added: the rows are never updated); otherwise which was active when a gate was
-- decided is not known exactly, the column stays NULL, and the recompute leaves such a work-quality
-- gate out rather than guess.
-- A takes-quality gate the same way: the recompute re-derived one when its run's completed_at was no
-- later than the gate's created_at (each its own transaction's clock), so a gate decided on the
-- receipt so far while the run's completion was not yet committed was re-derived on the final receipt
-- and named though honest, and one whose transaction began before the run completed but read it
-- completed was skipped. The row now stores whether its run had completed as the decision read it
-- (run_completed, read in the statement that decides, so in its snapshot; refused when supplied),
-- and the recompute re-derives on that; the gates stored before keep the clock's guess.
-- A work-quality snapshot's comparison with the previous one the same way: work_quality_decide_v1
-- compared under the policy of whichever rubric was active when it ran, so once a rubric of another
-- same band was activated the recompute named an honest snapshot's comparison and document. It now
-- compares under the snapshot's own rubric (its rubric_id, the one its verdicts were admitted under),
-- at completion and at the recompute alike.
-- The journal takes a BASELINE entry of each row with the new columns (journal_attach_v2).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- work_quality_policy_v2: the comparison policy as data, from the work-quality rubric given:
-- {"same_band": 0.05, "regress_tolerance": 0.08, "dimensions": [...]}; NULL for no such rubric. A
-- gate decision's own rubric (eval_gate_decision.work_quality_rubric_id: the one active when it was
-- decided) gives the policy it is decided and re-decided under, whatever was activated since
-- (gate_decide_v2, ledger_recompute_v3); work_quality_policy_v1 is this of the active rubric.
-- SECURITY DEFINER so every reader gets the same policy whatever it may read.
CREATE FUNCTION evalledger.work_quality_policy_v2(p_rubric_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT (r.definition -> 'compare')
           || jsonb_build_object('dimensions',
                  (SELECT jsonb_agg(d -> 'key' ORDER BY n)
                     FROM jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)))
      FROM evalledger.rubric r
     WHERE r.rubric_id = p_rubric_id AND r.suite = 'work-quality'
$$;

GRANT EXECUTE ON FUNCTION work_quality_policy_v2(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- work_quality_policy_v1: the comparison policy as data, from the active work-quality rubric (the one
-- its latest activation names): work_quality_policy_v2 of active_rubric_v1('work-quality'),
-- {"same_band": 0.05, "regress_tolerance": 0.08, "dimensions": [...]}. Compare and IsRegression
-- read their thresholds here, so a new policy is a new rubric row, never an edited function.
-- SECURITY DEFINER so every reader of the history view gets the same policy whatever it may read.
CREATE OR REPLACE FUNCTION evalledger.work_quality_policy_v1() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_policy_v2(evalledger.active_rubric_v1('work-quality'))
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_policy_v1() TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- work_quality_compare_v2: the seed's Compare(prev, cur) over two mean_scores objects under the
-- policy given (work_quality_policy_v2 of a rubric: its dimensions and same band). NULL when there is
-- no previous snapshot; otherwise the seed's Delta: per-dimension cur - prev (a missing score counts
-- as 0, as in a Go map), overall_delta, value_delta, and the headline verdict on overall: better
-- above +same_band, worse below -same_band, same within it (inclusive). Arithmetic is numeric, not
-- float64: a change of exactly 0.05 is exactly 0.05 and so "same" (float64 would make
-- 0.75 - 0.70 = 0.050000000000000044 and call it "better"). work_quality_compare_v1 is this under the
-- active rubric's policy; a gate decision compares under its own (gate_decide_v2).
CREATE FUNCTION evalledger.work_quality_compare_v2(prev_mean jsonb, cur_mean jsonb, prev_run_id text, policy jsonb)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH deltas AS (
        SELECT d.dim,
               trim_scale(coalesce((cur_mean ->> d.dim)::numeric, 0) - coalesce((prev_mean ->> d.dim)::numeric, 0)) AS delta
          FROM jsonb_array_elements_text(policy -> 'dimensions') d(dim))
    SELECT CASE WHEN prev_mean IS NULL OR cur_mean IS NULL THEN NULL ELSE jsonb_build_object(
               'prev_run_id', coalesce(prev_run_id, ''),
               'overall_delta', (SELECT delta FROM deltas WHERE dim = 'overall'),
               'value_delta', (SELECT delta FROM deltas WHERE dim = 'value_for_money'),
               'per_dimension', (SELECT jsonb_object_agg(dim, delta) FROM deltas),
               'verdict', CASE WHEN (SELECT delta FROM deltas WHERE dim = 'overall') > (policy ->> 'same_band')::numeric
                               THEN 'better'
                               WHEN (SELECT delta FROM deltas WHERE dim = 'overall') < -(policy ->> 'same_band')::numeric
                               THEN 'worse'
                               ELSE 'same' END) END
$$;

GRANT EXECUTE ON FUNCTION work_quality_compare_v2(jsonb, jsonb, text, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- work_quality_compare_v1: the seed's Compare(prev, cur) over two mean_scores objects under the
-- active rubric's policy (work_quality_policy_v1): work_quality_compare_v2, which says what it
-- computes. A snapshot's comparison with the previous one is this.
CREATE OR REPLACE FUNCTION evalledger.work_quality_compare_v1(prev_mean jsonb, cur_mean jsonb, prev_run_id text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_compare_v2(prev_mean, cur_mean, prev_run_id, evalledger.work_quality_policy_v1())
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_compare_v1(jsonb, jsonb, text) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- work_quality_is_regression_v2: the seed's Delta.IsRegression(tol) under the policy given
-- (work_quality_policy_v2 of a rubric). The reasons, in the seed's words, why overall or
-- value_for_money dropped by more than the tolerance; an empty array is no regression, and a NULL
-- delta (no baseline) is never one. A tolerance that is NULL, zero or negative means the policy's
-- default (its regress_tolerance), as tol <= 0 does in the seed. A drop of exactly the tolerance is
-- not a regression (the seed's test is delta < -tol). work_quality_is_regression_v1 is this under
-- the active rubric's policy; a gate decision decides under its own (gate_decide_v2).
CREATE FUNCTION evalledger.work_quality_is_regression_v2(delta jsonb, tolerance numeric, policy jsonb)
RETURNS text[] LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH tol AS (
        SELECT CASE WHEN tolerance IS NULL OR tolerance <= 0
                    THEN (policy ->> 'regress_tolerance')::numeric
                    ELSE tolerance END AS t)
    SELECT CASE WHEN delta IS NULL THEN ARRAY[]::text[] ELSE ARRAY(
        SELECT format('%s dropped %s (vs %s)', x.label, round(x.d, 3), delta ->> 'prev_run_id')
          FROM tol, (VALUES (1, 'overall', (delta ->> 'overall_delta')::numeric),
                            (2, 'value_for_money', (delta ->> 'value_delta')::numeric)) x(n, label, d)
         WHERE x.d < -tol.t
         ORDER BY x.n) END
      FROM tol
$$;

GRANT EXECUTE ON FUNCTION work_quality_is_regression_v2(jsonb, numeric, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- work_quality_is_regression_v1: the seed's Delta.IsRegression(tol) under the active rubric's policy
-- (work_quality_policy_v1, read only when the tolerance is NULL, zero or negative, which means its
-- regress_tolerance): work_quality_is_regression_v2, which says what it decides.
CREATE OR REPLACE FUNCTION evalledger.work_quality_is_regression_v1(delta jsonb, tolerance numeric DEFAULT NULL)
RETURNS text[] LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_is_regression_v2(
               delta, tolerance,
               CASE WHEN tolerance IS NULL OR tolerance <= 0 THEN evalledger.work_quality_policy_v1() END)
$$;

-- Compare, IsRegression and the policy are for every reader of snapshots (the owner role's
-- writes pass the same triggers); the history view's function for its readers.
GRANT EXECUTE ON FUNCTION work_quality_is_regression_v1(jsonb, numeric) TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- work_quality_paired_v2: snapshot B against snapshot A (two Snapshot documents), paired by judge,
-- over the dimensions of the policy given (work_quality_policy_v2 of a rubric). One work product is
-- scored by 2 or 3 judges, so the items are the judges: aggregate.verdicts[] by model, each judge
-- once with its mean over its repeats (work_quality_judge_scores_v1: with --repeats K a model's K
-- verdicts are one judge, as the snapshot's own mean_scores count it; a verdict naming no model is
-- left out). One paired_object_v1 per dimension of the policy, in its order; a judge is shared in a
-- dimension when both snapshots hold its finite score there. Differences are B - A. A gate decision
-- pairs under the rubric it is decided under (gate_decide_v2; work_quality_paired_v1, which read the
-- active rubric's, is dropped). docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.work_quality_paired_v2(a_doc jsonb, b_doc jsonb, policy jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH dims AS (
        SELECT d.dim, d.n FROM jsonb_array_elements_text(policy -> 'dimensions') WITH ORDINALITY d(dim, n)),
    scored AS (
        SELECT s.side, j.dimension AS dim, j.judge, j.score AS x
          FROM (VALUES ('a', a_doc), ('b', b_doc)) s(side, doc)
         CROSS JOIN LATERAL evalledger.work_quality_judge_scores_v1(s.doc) j
         WHERE j.judge IS NOT NULL)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(d.dim, a.items, a.vals, b.items, b.vals) ORDER BY d.n), '[]')
      FROM dims d
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_paired_v2(jsonb, jsonb, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- gate_decide_v2: a regression gate's decision, by one of three modes, with what it rests on
-- (docs/statistics.md, "Paired comparisons and gates"). The two sides: for takes-quality a baseline
-- receipt and run p_run_id as the ledger holds it; for work-quality two Snapshot documents.
--   default: the seed's own gate, unchanged: takes_quality_regression_v1 (a dimension mean, or the
--     overall, dropped by more than the threshold: fail; a side with no mean: inconclusive; a run
--     cancelled or abandoned: fail) and work_quality_compare_v2 with work_quality_is_regression_v2
--     (overall or value_for_money dropped by more than the tolerance: fail);
--   significant: fail only when a gated row's paired interval lies wholly beyond the threshold
--     (its upper end below -threshold);
--   possible: fail when any part of it does (its lower end below -threshold).
-- The gated rows: every dimension and the overall for takes-quality, overall and value_for_money for
-- work-quality (the rows the seeds' gates read); the paired rows are takes_quality_paired_v1's and
-- work_quality_paired_v2's. In significant and possible a gated row without an interval (fewer than
-- two shared judges) is unmeasurable: no row regressed and one unmeasurable is inconclusive, never a
-- pass, and the reasons name each and why. A takes-quality run cancelled or abandoned fails in every
-- mode. The threshold is the seed's default when NULL (takes_quality_threshold_v1; the work-quality
-- rubric's regress_tolerance, as the seed's tol <= 0). A work-quality gate is decided under the
-- work-quality rubric given (p_rubric_id: its dimensions, same band and tolerance, by
-- work_quality_policy_v2), never whichever is active when it is asked: the admission trigger gives
-- the one active then and stores it (eval_gate_decision.work_quality_rubric_id), and the ledger's
-- recompute re-decides under that stored one, whatever was activated since. A takes-quality gate
-- reads its run's own rubric and ignores p_rubric_id. Returns {"mode", "threshold", "decision",
-- "reasons", "seed", "paired"}, each paired row with "gated" and "regressed".
CREATE FUNCTION evalledger.gate_decide_v2(
    p_suite text, p_mode text, p_threshold numeric, baseline jsonb, current_doc jsonb, p_run_id bigint,
    p_rubric_id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    seed jsonb;
    policy jsonb;
    paired jsonb;
    gated text[];
    t numeric;
    seed_fails boolean;
    seed_inconclusive boolean := false;
    closed text;
    now_receipt jsonb;
    dims text[];
    delta jsonb;
    seed_reasons text[];
    reasons text[] := '{}';
    unmeasured text[] := '{}';
    decision text;
    row_ jsonb;
    marked jsonb := '[]';
    hit boolean;
BEGIN
    IF p_mode IS NULL OR p_mode NOT IN ('default', 'significant', 'possible') THEN
        RAISE EXCEPTION 'evalledger: a gate is default, significant or possible, not %', p_mode
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_suite = 'takes-quality' THEN
        seed := evalledger.takes_quality_regression_v1(baseline, p_run_id, p_threshold);
        t := (seed ->> 'threshold')::numeric;
        SELECT coalesce(r.receipt_json, evalledger.takes_quality_receipt_v4(r.id)),
               ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(b.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                      ORDER BY n)
          INTO now_receipt, dims
          FROM evalledger.eval_takes_quality_runs r JOIN evalledger.rubric b USING (rubric_id)
         WHERE r.id = p_run_id;
        paired := evalledger.takes_quality_paired_v1(baseline, now_receipt, dims);
        gated := ARRAY(SELECT p ->> 'dimension' FROM jsonb_array_elements(paired) p);
        seed_fails := seed ->> 'outcome' = 'regression';
        seed_inconclusive := seed ->> 'outcome' = 'inconclusive';
        -- A regression with no dimension dropped is a run cancelled or abandoned: its warning says so.
        IF seed_fails AND jsonb_array_length(seed -> 'regressed') = 0 THEN
            closed := seed -> 'warnings' ->> 0;
        END IF;
        seed_reasons := CASE WHEN closed IS NOT NULL THEN ARRAY[closed]
                             ELSE ARRAY(SELECT format('%s dropped by more than %s', x, t)
                                          FROM jsonb_array_elements_text(seed -> 'regressed') x) END;
        IF seed_inconclusive AND NOT seed_fails THEN
            seed_reasons := ARRAY['a side has no mean to compare (an inconclusive run)'];
        END IF;
    ELSIF p_suite = 'work-quality' THEN
        IF jsonb_typeof(baseline) IS DISTINCT FROM 'object' OR jsonb_typeof(current_doc) IS DISTINCT FROM 'object' THEN
            RAISE EXCEPTION 'evalledger: a work-quality gate compares two Snapshot documents'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        policy := evalledger.work_quality_policy_v2(p_rubric_id);
        t := CASE WHEN p_threshold IS NULL OR p_threshold <= 0
                  THEN (policy ->> 'regress_tolerance')::numeric ELSE p_threshold END;
        delta := evalledger.work_quality_compare_v2(coalesce(baseline -> 'aggregate' -> 'mean_scores', '{}'),
                                                    coalesce(current_doc -> 'aggregate' -> 'mean_scores', '{}'),
                                                    baseline ->> 'run_id', policy);
        seed_reasons := evalledger.work_quality_is_regression_v2(delta, t, policy);
        seed := jsonb_build_object('comparison', delta, 'reasons', to_jsonb(seed_reasons), 'tolerance', t);
        paired := evalledger.work_quality_paired_v2(baseline, current_doc, policy);
        gated := ARRAY['overall', 'value_for_money'];
        seed_fails := cardinality(seed_reasons) > 0;
    ELSE
        RAISE EXCEPTION 'evalledger: no gate for suite %', p_suite USING ERRCODE = 'invalid_parameter_value';
    END IF;

    FOR row_ IN SELECT p FROM jsonb_array_elements(paired) p LOOP
        hit := NULL;
        IF row_ ->> 'dimension' = ANY (gated) AND p_mode <> 'default' THEN
            IF jsonb_typeof(row_ -> 'ci95') IS DISTINCT FROM 'array' THEN
                unmeasured := unmeasured || format('%s: no interval (%s shared judge%s; an interval needs 2)',
                                                   row_ ->> 'dimension', row_ ->> 'shared',
                                                   CASE WHEN row_ ->> 'shared' = '1' THEN '' ELSE 's' END);
            ELSE
                hit := CASE p_mode WHEN 'significant' THEN (row_ -> 'ci95' ->> 1)::numeric < -t
                                   ELSE (row_ -> 'ci95' ->> 0)::numeric < -t END;
                IF hit THEN
                    reasons := reasons || format('%s: 95%% CI %s to %s %s beyond -%s', row_ ->> 'dimension',
                                                 round((row_ -> 'ci95' ->> 0)::numeric, 3),
                                                 round((row_ -> 'ci95' ->> 1)::numeric, 3),
                                                 CASE p_mode WHEN 'significant' THEN 'lies wholly' ELSE 'reaches' END, t);
                END IF;
            END IF;
        END IF;
        marked := marked || jsonb_build_array(row_ || jsonb_build_object(
                      'gated', row_ ->> 'dimension' = ANY (gated), 'regressed', hit));
    END LOOP;

    IF p_mode = 'default' THEN
        decision := CASE WHEN seed_fails THEN 'fail' WHEN seed_inconclusive THEN 'inconclusive' ELSE 'pass' END;
        reasons := seed_reasons;
    ELSIF closed IS NOT NULL THEN
        decision := 'fail';
        reasons := ARRAY[closed] || reasons;
    ELSIF cardinality(reasons) > 0 THEN
        decision := 'fail';
    ELSIF cardinality(unmeasured) > 0 THEN
        decision := 'inconclusive';
        reasons := unmeasured;
    ELSE
        decision := 'pass';
    END IF;
    RETURN jsonb_build_object('mode', p_mode, 'threshold', t, 'decision', decision, 'reasons', to_jsonb(reasons),
                              'seed', seed, 'paired', marked);
END;
$$;
GRANT EXECUTE ON FUNCTION gate_decide_v2(text, text, numeric, jsonb, jsonb, bigint, bigint)
    TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The work-quality rubric active when each gate was decided, beside it (see the header for the
-- rows stored before): the value the column is added with, never an UPDATE (the table is
-- append-only), then no default (the admission trigger fills it).
DO $column$
DECLARE
    only_rubric bigint;
BEGIN
    SELECT min(a.rubric_id) INTO only_rubric
      FROM evalledger.rubric_activation a
     WHERE a.suite = 'work-quality'
    HAVING count(DISTINCT a.rubric_id) = 1;
    EXECUTE format('ALTER TABLE evalledger.eval_gate_decision ADD COLUMN work_quality_rubric_id bigint%s',
                   CASE WHEN only_rubric IS NOT NULL THEN format(' DEFAULT %s', only_rubric) ELSE '' END);
    ALTER TABLE evalledger.eval_gate_decision ALTER COLUMN work_quality_rubric_id DROP DEFAULT;
END
$column$;

ALTER TABLE eval_gate_decision
    ADD CONSTRAINT eval_gate_decision_work_quality_rubric_fkey FOREIGN KEY (work_quality_rubric_id) REFERENCES rubric (rubric_id);

-- Whether a takes-quality gate's run had completed as its decision read it: NULL for the gates stored
-- before (the clock cannot say it exactly; the recompute keeps its guess for them), and for
-- work-quality gates.
ALTER TABLE eval_gate_decision
    ADD COLUMN run_completed boolean,
    ADD CONSTRAINT eval_gate_decision_run_completed_takes_quality CHECK (suite = 'takes-quality' OR run_completed IS NULL);

-- eval_gate_decision_admit_v1: a gate decision is the database's. A decision, reasons, comparison or
-- decider supplied is refused (refuse_supplied_v1); a takes-quality run the caller may not read is
-- none to compare; the work-quality rubric active now is stored with the row
-- (work_quality_rubric_id) and gate_decide_v2 decides under that one, from the two sides, the mode and
-- the threshold given (one read of the activation, so the rubric stored is the rubric decided under);
-- for a takes-quality gate, whether its run had completed is read in the same statement, so in the one
-- snapshot the decision reads the run in, and stored (run_completed: the receipt it compared was
-- final); the row is stamped with the caller and the database's clock.
CREATE OR REPLACE FUNCTION evalledger.eval_gate_decision_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    decided jsonb;
BEGIN
    PERFORM evalledger.refuse_supplied_v1(
        'eval_gate_decision',
        jsonb_build_object('decision', NEW.decision, 'reasons', NEW.reasons, 'comparison', NEW.comparison,
                           'decided_by', NEW.decided_by, 'work_quality_rubric_id', NEW.work_quality_rubric_id,
                           'run_completed', NEW.run_completed));
    IF NEW.suite = 'takes-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE r.id = NEW.run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run % to compare with the baseline', NEW.run_id
            USING ERRCODE = 'no_data_found', COLUMN = 'run_id';
    END IF;
    NEW.work_quality_rubric_id := evalledger.active_rubric_v1('work-quality');
    SELECT evalledger.gate_decide_v2(NEW.suite, NEW.mode, NEW.threshold, NEW.baseline, NEW.current_doc, NEW.run_id,
                                     NEW.work_quality_rubric_id),
           CASE WHEN NEW.suite = 'takes-quality'
                THEN (SELECT r.completed_at IS NOT NULL FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id) END
      INTO decided, NEW.run_completed;
    NEW.decision := decided ->> 'decision';
    NEW.reasons := ARRAY(SELECT jsonb_array_elements_text(decided -> 'reasons'));
    NEW.comparison := decided;
    NEW.decided_by := evalledger.caller_v1();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

-- work_quality_decide_v1: a work-quality run's computed columns at completion, from its verdict rows: the
-- means (mean_scores) per dimension over the contributing judges; the spreads (disagreement, max - min)
-- when at least two contributed; the note naming each judge skipped in its current row
-- (work_quality_current_v1: a call retried is not skipped) and each contributing judge of the assessed
-- run's family, after a label naming the judges whose replies were recorded rather than live; the
-- comparison with the previous snapshot (work_quality_compare_v2 under the policy of the snapshot's own
-- rubric, its rubric_id, whatever was activated since: migration 0158); what the judges cost, exactly, a
-- call that started and was never answered counting the runner's estimate of it; and the whole document
-- (work_quality_document_v1). A closed snapshot's note is its closure's rationale (eval_run_closure:
-- abandoned or cancelled; issue 37, item 2). The one home of work-quality's decision: its completion trigger
-- (work_quality_snapshot_decide_v3) and the ledger's recompute (ledger_recompute_work_quality_v2) both
-- call it. With repeats (--repeats K) a judge's score of a dimension is its mean over its contributing
-- repeats, and the means and spreads are over the judges' means: a snapshot of one repeat is decided
-- exactly as before.
CREATE OR REPLACE FUNCTION evalledger.work_quality_decide_v1(snap evalledger.eval_work_quality_snapshots)
RETURNS evalledger.eval_work_quality_snapshots
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s evalledger.eval_work_quality_snapshots := snap;
    dims text[];
    contributing integer;
    prev_mean jsonb;
BEGIN
    SELECT count(DISTINCT v.model) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = s.snapshot_id AND v.contributes;
    dims := ARRAY(SELECT d ->> 'key' FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                   WHERE r.rubric_id = s.rubric_id ORDER BY n);
    SELECT jsonb_object_agg(d, a.mean), CASE WHEN contributing >= 2 THEN jsonb_object_agg(d, a.spread) END
      INTO s.mean_scores, s.disagreement
      FROM unnest(dims) d
     CROSS JOIN LATERAL (
            SELECT trim_scale(avg(j.score)) AS mean, trim_scale(max(j.score) - min(j.score)) AS spread
              FROM (SELECT CASE WHEN count(*) = 1 THEN min((v.scores ->> d)::numeric)
                                ELSE avg((v.scores ->> d)::numeric) END AS score
                      FROM evalledger.eval_work_quality_judge_verdicts v
                     WHERE v.snapshot_id = s.snapshot_id AND v.contributes
                     GROUP BY v.model) j) a;
    SELECT coalesce(string_agg(line, '; ' ORDER BY p, k), '') INTO s.note
      FROM (SELECT array_position(s.models, v.model) AS p, 1 AS k,
                   format('judge %s skipped: %s%s',
                          v.model || CASE WHEN v.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', v.repeat_no) END,
                          v.error_kind, coalesce(': ' || v.error_message, '')) AS line
              FROM evalledger.work_quality_current_v1(s.snapshot_id) v
             WHERE NOT v.contributes
            UNION ALL
            SELECT DISTINCT array_position(s.models, v.model), 2,
                   format('judge %s shares the assessed run''s family (%s)', v.model, v.family)
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.same_family
            UNION ALL
            SELECT 0, 0, 'recorded replies shipped with evalledger, not live calls: '
                         || string_agg(r.model, ', ' ORDER BY r.p)
              FROM (SELECT DISTINCT v.model, array_position(s.models, v.model) AS p
                      FROM evalledger.eval_work_quality_judge_verdicts v
                     WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.recorded) r
            HAVING count(*) > 0) notes;
    s.comparison := NULL;
    IF s.prev_snapshot_id IS NOT NULL THEN
        SELECT p.mean_scores INTO prev_mean FROM evalledger.eval_work_quality_snapshots p WHERE p.snapshot_id = s.prev_snapshot_id;
        s.comparison := evalledger.work_quality_compare_v2(prev_mean, s.mean_scores, s.prev_run_id,
                                                           evalledger.work_quality_policy_v2(s.rubric_id));
    END IF;
    SELECT trim_scale(coalesce(sum(c.cost_usd + CASE WHEN c.call_started AND c.restarted THEN c.estimated_cost_usd
                                                      ELSE 0 END), 0))
      INTO s.judges_cost_usd
      FROM (SELECT v.cost_usd, v.call_started, v.estimated_cost_usd,
                   coalesce(lead(v.call_started) OVER (PARTITION BY v.model, v.repeat_no ORDER BY v.retry_no), false) AS restarted
              FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = s.snapshot_id) c;
    IF EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id) THEN
        -- No judge answered a dimension: no mean (closed before any answer, an empty object).
        s.mean_scores := jsonb_strip_nulls(s.mean_scores);
        SELECT evalledger.brain_eval_abandoned_v1(c.closure, c.reason, c.closed_by) INTO s.note
          FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id;
    END IF;
    s.snapshot_json := evalledger.work_quality_document_v1(s);
    RETURN s;
END;
$$;

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
-- gate decisions (decision, reasons, comparison: gate_decide_v2, as eval_gate_decision_admit_v1
-- decides them, a work-quality gate under the rubric it was decided under, whatever was activated
-- since, a takes-quality gate when its run had completed as it was decided). Values compare
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
        -- calls: a takes-quality gate whose run had completed as its decision read it (run_completed; an
        -- open run's receipt was provisional; a run the purge took is gone), or, one stored before
        -- migration 0158 without that, whose run's completed_at is no later than its created_at (the
        -- clock's guess, which can be wrong where the two transactions overlapped); a
        -- work-quality gate (its two documents are its own) under the work-quality rubric stored with it
        -- (the one active when it was decided, whatever was activated since); one stored without (decided
        -- before migration 0158 in a ledger that had activated more than one) is left out, its rubric not
        -- known exactly.
        SELECT 'eval_gate_decision', evalledger.journal_key_v1(g), to_jsonb(g),
               (SELECT jsonb_build_object('decision', x -> 'decision', 'reasons', x -> 'reasons', 'comparison', x)
                  FROM (SELECT evalledger.gate_decide_v2(g.suite, g.mode, g.threshold, g.baseline, g.current_doc,
                                                         g.run_id, g.work_quality_rubric_id) AS x) decided),
               ARRAY['decision', 'reasons', 'comparison']
          FROM evalledger.eval_gate_decision g
         WHERE CASE g.suite
                   WHEN 'takes-quality' THEN EXISTS (
                       SELECT 1 FROM evalledger.eval_takes_quality_runs t
                        WHERE t.id = g.run_id AND t.completed_at IS NOT NULL
                          AND coalesce(g.run_completed, t.completed_at <= g.created_at))
                   ELSE g.work_quality_rubric_id IS NOT NULL END)
    SELECT d.table_name, d.row_key, c, (d.was -> c)::text, (d.now_is -> c)::text
      FROM decided d CROSS JOIN LATERAL unnest(d.columns) c
     WHERE (d.was -> c) IS DISTINCT FROM (d.now_is -> c)
     ORDER BY 1, 2, 3
$$;
GRANT EXECUTE ON FUNCTION ledger_recompute_v3() TO evalledger_owner, evalledger_auditor;

-- The versions replaced, dropped past the drop guard (see 0102.journal-cost.sql): its owner, the
-- superuser who installed it, turns it off inside this transaction and on again after the drops.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

DROP FUNCTION gate_decide_v1(text, text, numeric, jsonb, jsonb, bigint);
DROP FUNCTION work_quality_paired_v1(jsonb, jsonb);

-- The drop guard back on.
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;

-- The gate table's canonical form takes its new column: a BASELINE entry of each row it holds.
CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
