-- A gate's side holding a judge's score past float8's range is refused in one line naming it (found by
-- a review). A gate decision (eval_gate_decision) whose Snapshot document, or baseline receipt, held a
-- number a double precision cannot hold as a judge's score (1e400, or 1e-400, which would round to
-- zero; JSON's numbers are numeric, which holds both) was refused by the bare cast error of the
-- function that reads the scores as float8 (work_quality_judge_scores_v1, takes_quality_paired_v1):
-- "value ... is out of range for type double precision", its 400 digits, naming neither the document,
-- the judge nor the dimension. Those functions now read a score by score_float8_v1, which refuses one
-- past the range naming where it stands, and the gate's admission reads every score of the sides it
-- will read first (gate_scores_in_range_v1), so the refusal names the side and its ref, the verdict or
-- judge and the dimension, with SQLSTATE numeric_value_out_of_range, and nothing is stored. A score
-- in range reads as the same float8 as before: no decision changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- score_float8_v1: a JSON number read as a score, as float8 (double precision), or refused in one
-- line naming where it stands (what: the document, judge and dimension, as the caller words it) when
-- it is past float8's range: too large (it would round to infinity: 2^1024 - 2^970 and beyond) or too
-- small (it would round to zero: a nonzero magnitude of 2^-1075 or less, past the smallest subnormal),
-- which the cast refuses with a bare "out of range" naming nothing (JSON's numbers are PostgreSQL's
-- numeric, which holds both). The bounds are the cast's own (float8in: a value rounded to nearest,
-- refused when it rounds to an infinity or a nonzero one rounds to zero), tested exactly
-- (tests/db/test_gate_scores_out_of_range_are_refused_naming_them.py); a score in range is the cast's
-- very value. Read by the functions that read judges' scores out of documents
-- (work_quality_judge_scores_v1, takes_quality_paired_v1) and by a gate's admission
-- (gate_scores_in_range_v1).
CREATE FUNCTION evalledger.score_float8_v1(score jsonb, what text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n numeric := (score::text)::numeric;
    e integer;
    m numeric;
BEGIN
    IF n <> 0 AND (abs(n) >= power(2::numeric, 1024) - power(2::numeric, 970)
                   OR abs(n) * power(2::numeric, 1075) <= 1) THEN
        -- Shown short, as its significant digits and a power of ten (1e400, not its 401 digits).
        e := floor(log(abs(n)))::integer;
        -- Scaled by a positive power of ten only: PostgreSQL 15's numeric power of ten to a large
        -- negative exponent is 0.
        m := trim_scale(round(CASE WHEN e >= 0 THEN n / power(10::numeric, e) ELSE n * power(10::numeric, -e) END, 16));
        IF abs(m) >= 10 THEN
            e := e + 1;
            m := trim_scale(round(CASE WHEN e >= 0 THEN n / power(10::numeric, e) ELSE n * power(10::numeric, -e) END, 16));
        END IF;
        RAISE EXCEPTION 'evalledger: %: the score %e% is past the range of a double precision number (float8)',
                        what, m, e
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    RETURN (score::text)::float8;
END;
$$;
GRANT EXECUTE ON FUNCTION score_float8_v1(jsonb, text) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_judge_scores_v1: each judge's score of each dimension in a Snapshot document
-- (aggregate.verdicts[].scores): its mean over its repeats (the verdicts of one model, --repeats K;
-- its one verdict when K is 1), the fold the snapshot's own mean_scores are decided by
-- (work_quality_decide_v1; docs/statistics.md, "Judge repeats"). One row per judge and dimension it
-- scored with a number; judge is the verdicts' model, NULL for a verdict that names none (each such
-- verdict a judge of its own). The one home of the fold for a document: work_quality_uncertainty_v1
-- and work_quality_paired_v2 read it, so an interval and a paired comparison count each judge once.
-- A judge's repeats are summed in the document's order, never a plan's (docs/statistics.md, "Order
-- of summation"). A score past float8's range is refused naming the verdict, its judge and the
-- dimension (score_float8_v1), never cast to a bare "out of range".
CREATE OR REPLACE FUNCTION evalledger.work_quality_judge_scores_v1(doc jsonb)
RETURNS TABLE (judge text, dimension text, score float8)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT v ->> 'model', e.key,
           avg(evalledger.score_float8_v1(e.value, format('a Snapshot document, aggregate.verdicts[%s] (judge %s), dimension %s',
                                                          x.n - 1, coalesce(v ->> 'model', 'unnamed'), e.key))
               ORDER BY x.n)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc -> 'aggregate' -> 'verdicts') = 'array'
                                     THEN doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) WITH ORDINALITY x(v, n)
     CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(v -> 'scores') = 'object' THEN v -> 'scores' ELSE '{}' END) e
     WHERE jsonb_typeof(e.value) = 'number'
     GROUP BY e.key, coalesce(v ->> 'model', n::text), v ->> 'model'
$$;
GRANT EXECUTE ON FUNCTION work_quality_judge_scores_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- takes_quality_paired_v1: a run's receipt against a baseline receipt, paired by judge. The sample is
-- judged as a whole (seed 000), so the items are the judges: a judge is shared when both receipts
-- hold its score in a dimension's per_model (the contributing judges of each deciding cycle). One
-- paired_object_v1 per dimension of the baseline (in the rubric's order dims, then by name), then
-- "overall": each judge's mean over the baseline's dimensions (a judge lacking one has none).
-- Differences are now - baseline. A judge's overall sums its dimensions by name, byte by byte
-- (COLLATE "C"), never in a plan's order. docs/statistics.md, "Paired comparisons and gates" and
-- "Order of summation". A score past float8's range is refused naming the receipt, the judge and
-- the dimension (score_float8_v1), never cast to a bare "out of range".
CREATE OR REPLACE FUNCTION evalledger.takes_quality_paired_v1(baseline jsonb, now_receipt jsonb, dims text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH keys AS (
        SELECT k.name, row_number() OVER (ORDER BY array_position(dims, k.name) NULLS LAST, k.name COLLATE "C") AS n
          FROM jsonb_object_keys(CASE WHEN jsonb_typeof(baseline -> 'scores') = 'object'
                                      THEN baseline -> 'scores' ELSE '{}' END) k(name)),
    scored AS (
        SELECT s.side, k.name, m.key AS model,
               evalledger.score_float8_v1(m.value, format('the %s, judge %s, dimension %s',
                                                          CASE s.side WHEN 'a' THEN 'baseline receipt' ELSE 'run''s receipt' END,
                                                          m.key, k.name)) AS v
          FROM keys k
         CROSS JOIN (VALUES ('a', baseline), ('b', now_receipt)) s(side, doc)
         CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(s.doc -> 'scores' -> k.name -> 'per_model') = 'object'
                                            THEN s.doc -> 'scores' -> k.name -> 'per_model' ELSE '{}' END) m
         WHERE jsonb_typeof(m.value) = 'number'),
    judged AS (
        SELECT side, name, model, v FROM scored
        UNION ALL
        SELECT side, 'overall', model, avg(v ORDER BY name COLLATE "C") FROM scored
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

-- gate_scores_in_range_v1: a gate's sides hold no judge's score past float8's range. A gate
-- (eval_gate_decision_admit_v1) reads the judges' scores of the documents the runner names as float8
-- (work_quality_paired_v2 by work_quality_judge_scores_v1, takes_quality_paired_v1), where a number
-- past its range (1e400, or 1e-400, which would round to zero) was refused by a bare cast error naming
-- neither the document, the judge nor the dimension. Before the gate is decided, each score that gate
-- reads is read by score_float8_v1, in document order (the baseline first), and the first past the
-- range is refused in one line naming the side and its ref, the verdict or judge and the dimension:
-- work-quality, every number of aggregate.verdicts[].scores of both Snapshot documents; takes-quality,
-- every number of scores.<dimension>.per_model of the baseline receipt (the other side is the run's
-- receipt, the database's own). Nothing is stored: the insert fails whole.
CREATE FUNCTION evalledger.gate_scores_in_range_v1(
    p_suite text, baseline jsonb, baseline_ref text, current_doc jsonb, current_ref text)
RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF p_suite = 'work-quality' THEN
        PERFORM evalledger.score_float8_v1(e.value, format('the %s document (%s), aggregate.verdicts[%s] (judge %s), dimension %s',
                                                           s.side, s.ref, x.n - 1, coalesce(x.v ->> 'model', 'unnamed'), e.key))
           FROM (VALUES (1, 'baseline', baseline_ref, baseline), (2, 'current', current_ref, current_doc)) s(k, side, ref, doc)
          CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(s.doc -> 'aggregate' -> 'verdicts') = 'array'
                                                       THEN s.doc -> 'aggregate' -> 'verdicts' ELSE '[]' END) WITH ORDINALITY x(v, n)
          CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(x.v -> 'scores') = 'object' THEN x.v -> 'scores' ELSE '{}' END) e
          WHERE jsonb_typeof(e.value) = 'number';
    ELSIF p_suite = 'takes-quality' THEN
        PERFORM evalledger.score_float8_v1(m.value, format('the baseline receipt (%s), judge %s, dimension %s',
                                                           baseline_ref, m.key, d.key))
           FROM jsonb_each(CASE WHEN jsonb_typeof(baseline -> 'scores') = 'object' THEN baseline -> 'scores' ELSE '{}' END) d
          CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(d.value -> 'per_model') = 'object'
                                             THEN d.value -> 'per_model' ELSE '{}' END) m
          WHERE jsonb_typeof(m.value) = 'number';
    END IF;
END;
$$;

-- eval_gate_decision_admit_v1: a gate decision is the database's. A decision, reasons, comparison or
-- decider supplied is refused (refuse_supplied_v1); a takes-quality run the caller may not read is
-- none to compare; a judge's score past float8's range in a side is refused naming the side, its
-- ref, the judge and the dimension (gate_scores_in_range_v1), before anything is decided; the
-- work-quality rubric active now is stored with the row (work_quality_rubric_id) and gate_decide_v2
-- decides under that one, from the two sides, the mode and the threshold given (one read of the
-- activation, so the rubric stored is the rubric decided under);
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
    PERFORM evalledger.gate_scores_in_range_v1(NEW.suite, NEW.baseline, NEW.baseline_ref, NEW.current_doc,
                                               NEW.current_ref);
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

RESET ROLE;
