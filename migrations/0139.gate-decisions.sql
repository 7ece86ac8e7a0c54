-- Paired comparisons and gates that know noise (issue 36, item 5). `brain-eval compare`, `takes-quality
-- regress` and `snapshot compare` report the paired difference on the items two runs share (the
-- questions of brain-eval; the judges of takes-quality and work-quality): the mean difference, its
-- standard error, 95% interval and, for pass/fail items, McNemar's exact p (paired_difference_v1,
-- 0116), the items not shared listed. A regression gate is decided by the database in one of three
-- modes (default: the seed's; significant: the drop's interval wholly beyond the threshold; possible:
-- any part of it) and stored in a new append-only, journalled table, eval_gate_decision, whose
-- decision the runner cannot supply. Nothing any role could do or read before changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- paired_object_v1: one row of a paired comparison as the CLIs show it and a gate reads it:
-- paired_difference_v1 of two runs' values over the items they share, as
--   {"dimension", "shared", "only_a", "only_b", "mean_difference", "stderr", "ci95": [lo, hi], "mcnemar_p"}
-- ci95 null when there is no standard error (fewer than 2 shared items): no interval, which a gate
-- reads as unmeasurable, never as a pass. docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.paired_object_v1(
    dimension text, a_items text[], a_values double precision[], b_items text[], b_values double precision[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
               'dimension', dimension, 'shared', p.shared,
               'only_a', to_jsonb(coalesce(p.only_a, '{}')), 'only_b', to_jsonb(coalesce(p.only_b, '{}')),
               'mean_difference', p.mean_difference, 'stderr', p.stderr,
               'ci95', CASE WHEN p.ci_lo IS NOT NULL AND p.ci_hi IS NOT NULL THEN jsonb_build_array(p.ci_lo, p.ci_hi) END,
               'mcnemar_p', p.mcnemar_p)
      FROM evalledger.paired_difference_v1(coalesce(a_items, '{}'), coalesce(a_values, '{}'),
                                           coalesce(b_items, '{}'), coalesce(b_values, '{}')) p
$$;
GRANT EXECUTE ON FUNCTION paired_object_v1(text, text[], double precision[], text[], double precision[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- takes_quality_paired_v1: a run's receipt against a baseline receipt, paired by judge. The sample is
-- judged as a whole (seed 000), so the items are the judges: a judge is shared when both receipts
-- hold its score in a dimension's per_model (the contributing judges of each deciding cycle). One
-- paired_object_v1 per dimension of the baseline (in the rubric's order dims, then by name), then
-- "overall": each judge's mean over the baseline's dimensions (a judge lacking one has none).
-- Differences are now - baseline. docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.takes_quality_paired_v1(baseline jsonb, now_receipt jsonb, dims text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH keys AS (
        SELECT k.name, row_number() OVER (ORDER BY array_position(dims, k.name) NULLS LAST, k.name COLLATE "C") AS n
          FROM jsonb_object_keys(CASE WHEN jsonb_typeof(baseline -> 'scores') = 'object'
                                      THEN baseline -> 'scores' ELSE '{}' END) k(name)),
    scored AS (
        SELECT s.side, k.name, m.key AS model, (m.value::text)::float8 AS v
          FROM keys k
         CROSS JOIN (VALUES ('a', baseline), ('b', now_receipt)) s(side, doc)
         CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(s.doc -> 'scores' -> k.name -> 'per_model') = 'object'
                                            THEN s.doc -> 'scores' -> k.name -> 'per_model' ELSE '{}' END) m
         WHERE jsonb_typeof(m.value) = 'number'),
    judged AS (
        SELECT side, name, model, v FROM scored
        UNION ALL
        SELECT side, 'overall', model, avg(v) FROM scored
         GROUP BY side, model HAVING count(*) = (SELECT count(*) FROM keys)),
    rows AS (SELECT name, n FROM keys UNION ALL SELECT 'overall', (SELECT count(*) FROM keys) + 1)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(r.name, a.items, a.vals, b.items, b.vals) ORDER BY r.n), '[]')
      FROM rows r
      LEFT JOIN LATERAL (SELECT array_agg(j.model ORDER BY j.model) AS items, array_agg(j.v ORDER BY j.model) AS vals
                           FROM judged j WHERE j.name = r.name AND j.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(j.model ORDER BY j.model) AS items, array_agg(j.v ORDER BY j.model) AS vals
                           FROM judged j WHERE j.name = r.name AND j.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION takes_quality_paired_v1(jsonb, jsonb, text[]) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- brain_eval_paired_v1: run B against run A over the questions both have (the unit of sampling is the
-- question; a question is shared when both runs have a row with its question_id and the measure
-- applies to it in both), one paired_object_v1 per measure, in this order: question_passed (1 pass,
-- 0 fail; McNemar's exact p), citation_rate, hallucination_rate (each question's hallucinations over
-- its claims, for questions with claims), staleness_recognised (stale-fixture questions, 0/1),
-- diagnosis_accuracy, levers_mapped (no lever violation, 0/1), confidence_in_band (0/1, each run's
-- rubric band) and narrative_coherence (1-5). The differences are B - A. The rows are read as the
-- caller may read them (a reviewer's own runs, the runner's hot tier); a run the caller cannot read
-- has no questions, and every item of the other shows in its only_a or only_b.
-- docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.brain_eval_paired_v1(run_a uuid, run_b uuid) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH q AS (
        SELECT x.side, s.question_id::text AS item,
               s.question_passed::int::float8 AS passed, s.citation_rate::float8 AS citation,
               CASE WHEN s.total_claims > 0 THEN s.hallucinations_detected::float8 / s.total_claims END AS hallucination,
               CASE WHEN s.uses_stale_fixture THEN s.staleness_correctly_recognized::int::float8 END AS stale,
               s.diagnosis_accuracy_score::float8 AS diagnosis,
               (s.lever_mapping_violations = 0)::int::float8 AS levers,
               evalledger.confidence_in_band_v1(s.confidence_distribution, r.definition -> 'confidence_band')::int::float8
                   AS in_band,
               s.narrative_coherence_rating::float8 AS coherence
          FROM (VALUES ('a', run_a), ('b', run_b)) x(side, run)
          JOIN evalledger.brain_eval_question_score s ON s.eval_run_id = x.run
          JOIN evalledger.brain_eval_log l ON l.eval_run_id = s.eval_run_id
          JOIN evalledger.rubric r ON r.rubric_id = l.rubric_id),
    k (n, key) AS (
        VALUES (1, 'question_passed'), (2, 'citation_rate'), (3, 'hallucination_rate'), (4, 'staleness_recognised'),
               (5, 'diagnosis_accuracy'), (6, 'levers_mapped'), (7, 'confidence_in_band'), (8, 'narrative_coherence')),
    m AS (
        SELECT k.n, k.key, q.side, q.item,
               CASE k.key WHEN 'question_passed' THEN q.passed WHEN 'citation_rate' THEN q.citation
                          WHEN 'hallucination_rate' THEN q.hallucination WHEN 'staleness_recognised' THEN q.stale
                          WHEN 'diagnosis_accuracy' THEN q.diagnosis WHEN 'levers_mapped' THEN q.levers
                          WHEN 'confidence_in_band' THEN q.in_band ELSE q.coherence END AS v
          FROM q CROSS JOIN k)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(k.key, a.items, a.vals, b.items, b.vals) ORDER BY k.n), '[]')
      FROM k
      LEFT JOIN LATERAL (SELECT array_agg(m.item ORDER BY m.item) AS items, array_agg(m.v ORDER BY m.item) AS vals
                           FROM m WHERE m.key = k.key AND m.side = 'a' AND m.v IS NOT NULL) a ON true
      LEFT JOIN LATERAL (SELECT array_agg(m.item ORDER BY m.item) AS items, array_agg(m.v ORDER BY m.item) AS vals
                           FROM m WHERE m.key = k.key AND m.side = 'b' AND m.v IS NOT NULL) b ON true
$$;
GRANT EXECUTE ON FUNCTION brain_eval_paired_v1(uuid, uuid)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- work_quality_paired_v1: snapshot B against snapshot A (two Snapshot documents), paired by judge. One
-- work product is scored by 2 or 3 judges, so the items are the judges: aggregate.verdicts[] by
-- model (a model's second verdict in one snapshot is "model (2)"). One paired_object_v1 per
-- dimension of the policy (work_quality_policy_v1), in its order; a judge is shared in a dimension
-- when both snapshots hold its finite score there. Differences are B - A.
-- docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.work_quality_paired_v1(a_doc jsonb, b_doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH dims AS (
        SELECT d.dim, d.n FROM jsonb_array_elements_text(evalledger.work_quality_policy_v1() -> 'dimensions')
                               WITH ORDINALITY d(dim, n)),
    verdicts AS (
        SELECT s.side, v.verdict,
               CASE WHEN row_number() OVER (PARTITION BY s.side, v.verdict ->> 'model' ORDER BY v.n) = 1
                    THEN v.verdict ->> 'model'
                    ELSE format('%s (%s)', v.verdict ->> 'model',
                                row_number() OVER (PARTITION BY s.side, v.verdict ->> 'model' ORDER BY v.n)) END AS judge
          FROM (VALUES ('a', a_doc), ('b', b_doc)) s(side, doc)
         CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(s.doc -> 'aggregate' -> 'verdicts') = 'array'
                                                      THEN s.doc -> 'aggregate' -> 'verdicts' ELSE '[]' END)
                            WITH ORDINALITY v(verdict, n)),
    scored AS (
        SELECT v.side, d.dim, v.judge, (v.verdict -> 'scores' ->> d.dim)::float8 AS x
          FROM verdicts v CROSS JOIN dims d
         WHERE jsonb_typeof(v.verdict -> 'scores' -> d.dim) = 'number' AND v.judge IS NOT NULL)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(d.dim, a.items, a.vals, b.items, b.vals) ORDER BY d.n), '[]')
      FROM dims d
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'a') a ON true
      LEFT JOIN LATERAL (SELECT array_agg(s.judge ORDER BY s.judge) AS items, array_agg(s.x ORDER BY s.judge) AS vals
                           FROM scored s WHERE s.dim = d.dim AND s.side = 'b') b ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_paired_v1(jsonb, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- gate_decide_v1: a regression gate's decision, by one of three modes, with what it rests on
-- (docs/statistics.md, "Paired comparisons and gates"). The two sides: for takes-quality a baseline
-- receipt and run p_run_id as the ledger holds it; for work-quality two Snapshot documents.
--   default: the seed's own gate, unchanged: takes_quality_regression_v1 (a dimension mean, or the
--     overall, dropped by more than the threshold: fail; a side with no mean: inconclusive; a run
--     cancelled or abandoned: fail) and work_quality_compare_v1 with work_quality_is_regression_v1
--     (overall or value_for_money dropped by more than the tolerance: fail);
--   significant: fail only when a gated row's paired interval lies wholly beyond the threshold
--     (its upper end below -threshold);
--   possible: fail when any part of it does (its lower end below -threshold).
-- The gated rows: every dimension and the overall for takes-quality, overall and value_for_money for
-- work-quality (the rows the seeds' gates read); the paired rows are takes_quality_paired_v1's and
-- work_quality_paired_v1's. In significant and possible a gated row without an interval (fewer than
-- two shared judges) is unmeasurable: no row regressed and one unmeasurable is inconclusive, never a
-- pass, and the reasons name each and why. A takes-quality run cancelled or abandoned fails in every
-- mode. The threshold is the seed's default when NULL (takes_quality_threshold_v1; the work-quality
-- rubric's regress_tolerance, as the seed's tol <= 0). Returns {"mode", "threshold", "decision",
-- "reasons", "seed", "paired"}, each paired row with "gated" and "regressed".
CREATE FUNCTION evalledger.gate_decide_v1(
    p_suite text, p_mode text, p_threshold numeric, baseline jsonb, current_doc jsonb, p_run_id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    seed jsonb;
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
        t := CASE WHEN p_threshold IS NULL OR p_threshold <= 0
                  THEN (evalledger.work_quality_policy_v1() ->> 'regress_tolerance')::numeric ELSE p_threshold END;
        delta := evalledger.work_quality_compare_v1(coalesce(baseline -> 'aggregate' -> 'mean_scores', '{}'),
                                                    coalesce(current_doc -> 'aggregate' -> 'mean_scores', '{}'),
                                                    baseline ->> 'run_id');
        seed_reasons := evalledger.work_quality_is_regression_v1(delta, t);
        seed := jsonb_build_object('comparison', delta, 'reasons', to_jsonb(seed_reasons), 'tolerance', t);
        paired := evalledger.work_quality_paired_v1(baseline, current_doc);
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
GRANT EXECUTE ON FUNCTION gate_decide_v1(text, text, numeric, jsonb, jsonb, bigint)
    TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- A regression gate's decision (issue 36, item 5): `takes-quality regress` and `snapshot compare`
-- record one row per gate they decide, in the mode asked for (default: the seed's gate; significant
-- or possible: by the paired interval). The runner names the two sides (a baseline receipt and a
-- run, or two Snapshot documents), the mode and the threshold it was given; the database decides
-- (eval_gate_decision_admit_v1, by gate_decide_v1): the decision, its reasons, the comparison it
-- rests on (the seed's and the paired one), who asked and when. Supplied, those are refused.
-- Append-only: never updated, never deleted (the retention purge knows it not, so never).
CREATE TABLE eval_gate_decision (
    gate_id      bigint      GENERATED ALWAYS AS IDENTITY,
    suite        text        NOT NULL,
    mode         text        NOT NULL,
    threshold    numeric,
    baseline_ref text        NOT NULL,
    current_ref  text        NOT NULL,
    baseline     jsonb       NOT NULL,
    current_doc  jsonb,
    run_id       bigint,
    decision     text,
    reasons      text[],
    comparison   jsonb,
    decided_by   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT eval_gate_decision_pkey PRIMARY KEY (gate_id),
    CONSTRAINT eval_gate_decision_suite_known CHECK (suite IN ('takes-quality', 'work-quality')),
    CONSTRAINT eval_gate_decision_mode_known CHECK (mode IN ('default', 'significant', 'possible')),
    CONSTRAINT eval_gate_decision_threshold_finite CHECK (threshold >= 0 AND finite_v1(threshold)),
    CONSTRAINT eval_gate_decision_refs_bounded CHECK (
        btrim(baseline_ref) <> '' AND length(baseline_ref) <= 4000 AND btrim(current_ref) <> ''
        AND length(current_ref) <= 4000),
    -- takes-quality: a baseline receipt and a run of the ledger; work-quality: two Snapshot documents.
    CONSTRAINT eval_gate_decision_sides_whole CHECK (
        jsonb_typeof(baseline) = 'object'
        AND ((suite = 'takes-quality' AND run_id IS NOT NULL AND current_doc IS NULL)
             OR (suite = 'work-quality' AND run_id IS NULL AND jsonb_typeof(current_doc) = 'object'))),
    CONSTRAINT eval_gate_decision_decision_known CHECK (decision IN ('pass', 'fail', 'inconclusive')),
    CONSTRAINT eval_gate_decision_decided CHECK (
        decision IS NOT NULL AND reasons IS NOT NULL AND comparison IS NOT NULL AND decided_by IS NOT NULL)
);

CREATE INDEX eval_gate_decision_created_idx ON eval_gate_decision (created_at);

CREATE POLICY eval_gate_decision_runner ON eval_gate_decision TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON eval_gate_decision TO evalledger_runner;

-- The runner names the sides, the mode and the threshold; the decision is the database's.
GRANT INSERT (suite, mode, threshold, baseline_ref, current_ref, baseline, current_doc, run_id)
    ON eval_gate_decision TO evalledger_runner;

CREATE POLICY eval_gate_decision_revops ON eval_gate_decision FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_gate_decision_auditor ON eval_gate_decision FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_gate_decision TO evalledger_revops, evalledger_auditor;

-- eval_gate_decision_admit_v1: a gate decision is the database's. A decision, reasons, comparison or
-- decider supplied is refused (refuse_supplied_v1); a takes-quality run the caller may not read is
-- none to compare; gate_decide_v1 decides from the two sides, the mode and the threshold given, and
-- the row is stamped with the caller and the database's clock.
CREATE FUNCTION evalledger.eval_gate_decision_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    decided jsonb;
BEGIN
    PERFORM evalledger.refuse_supplied_v1(
        'eval_gate_decision',
        jsonb_build_object('decision', NEW.decision, 'reasons', NEW.reasons, 'comparison', NEW.comparison,
                           'decided_by', NEW.decided_by));
    IF NEW.suite = 'takes-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE r.id = NEW.run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run % to compare with the baseline', NEW.run_id
            USING ERRCODE = 'no_data_found', COLUMN = 'run_id';
    END IF;
    decided := evalledger.gate_decide_v1(NEW.suite, NEW.mode, NEW.threshold, NEW.baseline, NEW.current_doc, NEW.run_id);
    NEW.decision := decided ->> 'decision';
    NEW.reasons := ARRAY(SELECT jsonb_array_elements_text(decided -> 'reasons'));
    NEW.comparison := decided;
    NEW.decided_by := evalledger.caller_v1();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_gate_decision_10_admit BEFORE INSERT ON eval_gate_decision
    FOR EACH ROW EXECUTE FUNCTION eval_gate_decision_admit_v1();

-- Append-only: a gate decision is never updated nor deleted, TRUNCATE never (refuse_change_v3).
CALL guard_append_only_v1(ARRAY['eval_gate_decision:UPDATE OR DELETE:refuse_change_v3']);

-- Row-level security, the owner's and code's policies and ENABLE ALWAYS on the new table; the
-- journal covers it.
CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
