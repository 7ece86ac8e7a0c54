-- Judge repeats (issue 36, item 4), work-quality: `run work-quality --repeats K` asks each judge K
-- times. The snapshot says K (eval_work_quality_snapshots.repeats, 1 to 10; an import's is 1) and each
-- verdict row its repeat (eval_work_quality_judge_verdicts.repeat_no, 1 to the snapshot's K; every
-- row stored before is repeat 1 of a snapshot of 1), each repeat with its own retries: the unique key
-- widens to hold them, and the sequence trigger refuses a repeat outside 1 to K. A judge's score of a
-- dimension is its mean over its contributing repeats, and the means and spreads are over the judges'
-- means (a snapshot of one repeat is decided, and its document written, exactly as before); the
-- document lists each contributing repeat as a verdict. Two views for BI: work_quality_flaky_v1 (a
-- judge's repeats that straddle the regression line: the previous mean less the rubric's
-- regress_tolerance) and work_quality_repeat_variance_v1 (the judges' within-item variance beside the
-- between-item variance, per rubric version and dimension).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The unique key widens, past the drop guard (see 0102.journal-cost.sql).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE eval_work_quality_snapshots
    ADD COLUMN repeats integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT eval_work_quality_snapshots_repeats_range CHECK (repeats BETWEEN 1 AND 10);
GRANT INSERT (repeats) ON eval_work_quality_snapshots TO evalledger_runner;

ALTER TABLE eval_work_quality_judge_verdicts
    ADD COLUMN repeat_no integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT eval_work_quality_judge_verdicts_repeat_positive CHECK (repeat_no >= 1),
    DROP CONSTRAINT eval_work_quality_judge_verdicts_once,
    ADD CONSTRAINT eval_work_quality_judge_verdicts_once UNIQUE (snapshot_id, model, repeat_no, retry_no);
GRANT INSERT (repeat_no) ON eval_work_quality_judge_verdicts TO evalledger_runner;

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

-- work_quality_current_v1: each judge's current row on a snapshot (per repeat, repeat_no): its latest by retry_no (the
-- earlier ones are calls that were retried, or that started and were answered or lost). With the
-- reader's rights.
CREATE OR REPLACE FUNCTION evalledger.work_quality_current_v1(p_snapshot_id bigint)
RETURNS SETOF evalledger.eval_work_quality_judge_verdicts
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (v.model, v.repeat_no) v.*
      FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = p_snapshot_id
     ORDER BY v.model, v.repeat_no, v.retry_no DESC
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION work_quality_current_v1(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION work_quality_current_v1(bigint) TO evalledger_owner;

-- work_quality_document_v1: a completed run's snapshot as the seed's Snapshot JSON (field names and
-- shapes of seed 003; an empty string stands for a field Go leaves out), built from the rows:
-- the contributing verdicts in panel order, the means, spreads, note and comparison the
-- completion computed. The runner writes the file from this document and nothing else. With
-- repeats (--repeats K) each contributing repeat is a verdict of the list, in repeat order after
-- its judge's place in the panel (the seed's shape: a judge may appear more than once).
CREATE OR REPLACE FUNCTION evalledger.work_quality_document_v1(s evalledger.eval_work_quality_snapshots) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'schema_version', 1,
        'kind', s.kind,
        'name', s.name,
        'persona', s.persona,
        'run_id', s.run_id,
        'at', to_char(s.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'bot_version', s.bot_version,
        'iterion_sha', s.iterion_sha,
        'task', s.task,
        'metrics', jsonb_build_object('cost_usd', s.cost_usd, 'tokens', s.tokens, 'duration_ms', s.duration_ms,
                                      'iterations', s.iterations, 'model_calls', s.model_calls, 'retries', s.retries),
        'aggregate', jsonb_build_object(
            'verdicts', coalesce((
                SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                           'model', v.model, 'family', v.family, 'same_family_as_bot', v.same_family,
                           'scores', v.scores, 'narrative', v.narrative, 'relative_vs_prev', v.relative_vs_prev,
                           'relative_narrative', v.relative_narrative, 'confidence', v.confidence))
                           ORDER BY array_position(s.models, v.model), v.repeat_no)
                  FROM evalledger.eval_work_quality_judge_verdicts v
                 WHERE v.snapshot_id = s.snapshot_id AND v.contributes), '[]'),
            'mean_scores', s.mean_scores,
            'disagreement', s.disagreement,
            'note', s.note),
        'evidence_digest', s.evidence_digest,
        'prev_run_id', s.prev_run_id,
        'comparison', s.comparison)
$$;

-- work_quality_decide_v1: a work-quality run's computed columns at completion, from its verdict rows: the
-- means (mean_scores) per dimension over the contributing judges; the spreads (disagreement, max - min)
-- when at least two contributed; the note naming each judge skipped in its current row
-- (work_quality_current_v1: a call retried is not skipped) and each contributing judge of the assessed
-- run's family, after a label naming the judges whose replies were recorded rather than live; the
-- comparison with the previous snapshot (work_quality_compare_v1); what the judges cost, exactly, a
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
        s.comparison := evalledger.work_quality_compare_v1(prev_mean, s.mean_scores, s.prev_run_id);
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

-- work_quality_uncertainty_v1: beside a work-quality snapshot (never changing it or its
-- comparison), each dimension with its uncertainty (uncertainty_v1's object) over the judges whose
-- verdicts the Snapshot document holds (aggregate.verdicts[].scores): the judges' mean and
-- mean_stderr_v1's standard error ('judges'; n and clusters the judges, each its own), the 95%
-- interval cut to the active work-quality rubric's scale. One work product is judged, so the
-- interval covers the judges' disagreement on it, not other runs of the bot (docs/statistics.md,
-- "work-quality"). What `snapshot show` prints, and its optional aggregate.stderr and ci95. It reads
-- no run, only the document given and the rubric's scale, so it runs as its owner (the active
-- rubric is active_rubric_v1's, which only the writing roles' functions call).
CREATE OR REPLACE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH scale AS (
        SELECT (r.definition -> 'scale' ->> 'min')::float8 AS lo, (r.definition -> 'scale' ->> 'max')::float8 AS hi
          FROM evalledger.rubric r WHERE r.rubric_id = evalledger.active_rubric_v1('work-quality')),
    scored AS (
        -- A judge's score: its mean over its repeats (the verdicts of one model; its one when K is 1).
        SELECT j.key, array_agg(j.score) AS scores
          FROM (SELECT e.key, avg(e.value::text::float8) AS score
                  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc -> 'aggregate' -> 'verdicts') = 'array'
                                                 THEN doc -> 'aggregate' -> 'verdicts' ELSE '[]' END)
                       WITH ORDINALITY x(v, n)
                 CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(v -> 'scores') = 'object' THEN v -> 'scores' ELSE '{}' END) e
                 WHERE jsonb_typeof(e.value) = 'number'
                 GROUP BY e.key, coalesce(v ->> 'model', n::text)) j
         GROUP BY j.key)
    SELECT jsonb_object_agg(s.key, evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                                             coalesce(scale.lo, 0), coalesce(scale.hi, 1)))
      FROM scored s
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(s.scores) m
      LEFT JOIN scale ON true
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- work_quality_verdict_sequence_v1: where a judge's row falls among the rows of its call on a
-- snapshot, before the verdict is admitted (work_quality_verdict_admit_v2). retry_no is the
-- database's: 0 first, one more for each row after. A row follows only a started call (its answer,
-- or a new start after a runner that stopped), a failure outside the judge's content (a provider
-- error, a call the budget did not allow), or, while no judge of the snapshot has contributed,
-- any failure: a run with no verdict at all can never be completed, so its --run-id is judged
-- again rather than left open for good. A started call carries only the runner's estimate of its
-- cost, which counts if no answer follows. A live snapshot takes live rows, a recorded one
-- recorded rows. An imported snapshot's rows come from its file, once each. With repeats (the
-- snapshot's repeats, --repeats K) each judge is asked K times: repeat_no (1 to K, the caller's)
-- numbers the repeat, each with its own rows and retries as above; a repeat outside 1 to K is refused.
CREATE OR REPLACE FUNCTION evalledger.work_quality_verdict_sequence_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    snap evalledger.eval_work_quality_snapshots;
    cur evalledger.eval_work_quality_judge_verdicts;
BEGIN
    SELECT * INTO snap FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.snapshot_id;
    IF NOT FOUND OR snap.origin = 'import' OR snap.completed_at IS NOT NULL
       OR NOT evalledger.caller_reads_v1(snap.created_at, NULL) THEN
        NEW.retry_no := 0;
        -- Admission (work_quality_verdict_admit) refuses a missing, closed or unreadable snapshot
        -- alike, and admits imports: nothing here says more about it.
        RETURN NEW;
    END IF;
    IF snap.judges IS NOT NULL AND NEW.recorded IS DISTINCT FROM (snap.judges = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % is judged by % judges: a % reply is not one of its verdicts',
                NEW.snapshot_id, snap.judges, CASE WHEN NEW.recorded THEN 'recorded' ELSE 'live' END
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;

    IF NEW.repeat_no IS NULL OR NEW.repeat_no < 1 OR NEW.repeat_no > snap.repeats THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % asks each judge % time(s): repeat % is not one of them',
                NEW.snapshot_id, snap.repeats, NEW.repeat_no
            USING ERRCODE = 'check_violation', COLUMN = 'repeat_no';
    END IF;

    SELECT * INTO cur FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.model = NEW.model AND v.repeat_no = NEW.repeat_no
     ORDER BY v.retry_no DESC LIMIT 1;
    IF NOT FOUND THEN
        NEW.retry_no := 0;
    ELSIF cur.call_started OR cur.error_kind IN ('provider_error', 'budget_exhausted')
          OR (NOT cur.contributes AND NOT EXISTS (SELECT 1 FROM evalledger.eval_work_quality_judge_verdicts v
                                                   WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes)) THEN
        NEW.retry_no := cur.retry_no + 1;
    ELSE
        RAISE EXCEPTION 'evalledger: % has its verdict on work-quality snapshot %: nothing to retry',
                NEW.model || CASE WHEN NEW.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', NEW.repeat_no) END,
                NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_judge_verdicts_once';
    END IF;

    IF NEW.call_started THEN
        IF NEW.recorded OR NEW.error_kind IS NOT NULL OR NEW.response_json IS NOT NULL OR NEW.raw_excerpt IS NOT NULL
           OR NEW.input_tokens <> 0 OR NEW.output_tokens <> 0 OR NEW.cost_usd <> 0 OR NEW.attempts <> 0 THEN
            RAISE EXCEPTION 'evalledger: a started call carries only the estimate of its cost'
                USING ERRCODE = 'check_violation', COLUMN = 'call_started';
        END IF;
        IF NEW.estimated_cost_usd IS NULL OR NEW.estimated_cost_usd < 0 THEN
            RAISE EXCEPTION 'evalledger: a started call needs the estimate of its cost (0 or more)'
                USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
        END IF;
        NEW.error_kind := 'provider_error';
        NEW.error_message := 'call started: no reply recorded';
    ELSIF NEW.estimated_cost_usd IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: only a started call carries an estimated cost; an answer carries its own'
            USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
    END IF;
    RETURN NEW;
END;
$$;

-- work_quality_snapshot_decide_v3: a run's completion (complete_once_v1 has already refused any
-- other UPDATE), once every panel model's current row (work_quality_current_v1; one per repeat
-- with --repeats K) is an answer or a failure: a call that started with no reply recorded is no verdict yet. The database computes
-- the aggregate: mean_scores per dimension over the contributing judges; disagreement (max - min)
-- per dimension when at least two contributed (one judge has no spread to show); the note naming
-- each judge skipped in its current row (a call retried is not skipped), and each contributing
-- judge of the assessed run's family, after a label naming the judges whose replies were recorded
-- rather than live; the comparison with the previous snapshot (work_quality_compare_v1); what the
-- judges cost, exactly, a call that started and was never answered counting the runner's estimate
-- of it; and the whole document. With no contributing judge there is nothing to aggregate:
-- completion is refused and the run stays open, and the same --run-id judges again. Verdicts lock
-- their snapshot FOR SHARE, so this waits for them; it then reads under READ COMMITTED only
-- (require_fresh_snapshot_v1), whose fresh snapshot sees what it waited for. Over v2: current rows.
-- A snapshot past its rubric's deadline (brain_eval_run_deadline_v1, open_run_days from its
-- created_at) is closed as abandoned instead (its closure recorded here), and a closed one
-- (eval_run_closure: abandoned or cancelled; issue 37, item 2) is completed whole or not, with what
-- its judges had answered, and its note is the abandonment's rationale ("Abandoned: ..."): the
-- suite's failing decision, a regression (work_quality_history_rows_v1). What it computes is
-- work_quality_decide_v1's, which the ledger's recompute calls too.
CREATE OR REPLACE FUNCTION evalledger.work_quality_snapshot_decide_v3() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    contributing integer;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
    closed evalledger.eval_run_closure;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('work-quality snapshot');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c
                                          WHERE c.snapshot_id = NEW.snapshot_id) THEN
        INSERT INTO evalledger.eval_run_closure (suite, snapshot_id, closure, reason, closed_by, run_created_at)
        VALUES ('work-quality', NEW.snapshot_id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline),
                evalledger.caller_v1(), NEW.created_at);
    END IF;
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.snapshot_id = NEW.snapshot_id;
    SELECT string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k) INTO gap
      FROM unnest(NEW.models) WITH ORDINALITY u(m, p)
     CROSS JOIN generate_series(1, NEW.repeats) k
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.work_quality_current_v1(NEW.snapshot_id) v
                        WHERE v.model = u.m AND v.repeat_no = k AND NOT v.call_started);
    IF gap IS NOT NULL AND closed.closure_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % lacks a verdict from %', NEW.snapshot_id, gap
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_verdicts';
    END IF;
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes;
    IF contributing = 0 AND closed.closure_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no judge produced a verdict for work-quality snapshot %', NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_a_verdict';
    END IF;

    NEW := evalledger.work_quality_decide_v1(NEW);
    RETURN NEW;
END;
$$;

-- work_quality_flaky_v1: the snapshots whose judge repeats straddle the regression line (docs/
-- statistics.md, "Judge repeats"). A work-quality snapshot (one work product) is the item; with
-- --repeats K each judge scores it K times. Its rubric holds no absolute threshold: the gate is
-- relative, overall or value_for_money dropping by more than the rubric's compare.regress_tolerance
-- (read from the snapshot's rubric row) below the previous snapshot's mean. A judge's repeats of one
-- of those dimensions straddle that line when the lowest is below it and the highest at or above it:
-- on another asking the comparison could have gone the other way. One row per completed snapshot
-- with a previous one, dimension and judge that straddles. Read by RevOps and auditors under their
-- own row-level security.
CREATE VIEW evalledger.work_quality_flaky_v1 AS
    SELECT s.snapshot_id, s.name, s.run_id, b.version AS rubric_version, s.at, d.key AS dimension,
           v.model AS judge_model, count(*) AS repeats,
           min((v.scores ->> d.key)::numeric) AS lowest, max((v.scores ->> d.key)::numeric) AS highest,
           (p.mean_scores ->> d.key)::numeric - (b.definition -> 'compare' ->> 'regress_tolerance')::numeric AS threshold
      FROM evalledger.eval_work_quality_snapshots s
      JOIN evalledger.rubric b ON b.rubric_id = s.rubric_id
      JOIN evalledger.eval_work_quality_snapshots p ON p.snapshot_id = s.prev_snapshot_id
     CROSS JOIN (VALUES ('overall'), ('value_for_money')) d(key)
      JOIN evalledger.eval_work_quality_judge_verdicts v ON v.snapshot_id = s.snapshot_id AND v.contributes
     WHERE s.completed_at IS NOT NULL AND p.mean_scores ? d.key
     GROUP BY s.snapshot_id, s.name, s.run_id, b.version, s.at, d.key, v.model, p.mean_scores, b.definition
    HAVING count(*) >= 2
       AND min((v.scores ->> d.key)::numeric)
           < (p.mean_scores ->> d.key)::numeric - (b.definition -> 'compare' ->> 'regress_tolerance')::numeric
       AND max((v.scores ->> d.key)::numeric)
           >= (p.mean_scores ->> d.key)::numeric - (b.definition -> 'compare' ->> 'regress_tolerance')::numeric;
COMMENT ON VIEW evalledger.work_quality_flaky_v1 IS
    'Per completed work-quality snapshot with a previous one, gated dimension (overall, value_for_money) and judge: a flaky item, where the judge''s repeats (--repeats K) straddle the regression line, the previous mean less the rubric''s compare.regress_tolerance (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id): its work product is the item.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.name IS 'The target (bot or feature) the snapshot assesses.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.run_id IS 'The assessed run''s id (--run-id).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.rubric_version IS 'The rubric epoch the snapshot was judged by, e.g. v1.0.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.at IS 'When the snapshot was taken (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.dimension IS 'The gated dimension whose repeats straddle the line: overall or value_for_money.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.repeats IS 'Count: the judge''s contributing repeats.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.lowest IS 'The lowest of those scores, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.highest IS 'The highest of those scores, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.threshold IS 'The regression line, on the rubric''s scale (0-1): the previous snapshot''s mean of the dimension less the rubric''s regress_tolerance.';

REVOKE ALL ON work_quality_flaky_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_flaky_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_flaky_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- work_quality_repeat_variance_v1: judge noise told from item variance (docs/statistics.md, "Judge
-- repeats"), per rubric version and dimension over the completed work-quality snapshots judged by
-- a panel (not imports) that the reader may read. The item is a snapshot's work product; a group is
-- one judge's contributing repeats of it (--repeats K). judge_variance (within an item, between
-- repeats) pools the groups' sample variances with weights n - 1, NULL when no judge was asked twice;
-- item_variance (between items) is the sample variance of the snapshots' means (each the mean of all
-- its contributing scores of the dimension), NULL with fewer than two snapshots. flaky_items counts
-- the snapshots with a straddle (work_quality_flaky_v1).
CREATE VIEW evalledger.work_quality_repeat_variance_v1 AS
    WITH scored AS (
        SELECT s.snapshot_id, b.version AS rubric_version, d ->> 'key' AS dimension, v.model,
               (v.scores ->> (d ->> 'key'))::float8 AS score
          FROM evalledger.eval_work_quality_snapshots s
          JOIN evalledger.rubric b ON b.rubric_id = s.rubric_id
         CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') d
          JOIN evalledger.eval_work_quality_judge_verdicts v ON v.snapshot_id = s.snapshot_id AND v.contributes
         WHERE s.completed_at IS NOT NULL AND s.origin = 'run'),
    groups AS (
        SELECT s.rubric_version, s.dimension, count(*) AS n, coalesce(var_samp(s.score), 0) AS var
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.snapshot_id, s.model),
    within AS (
        SELECT g.rubric_version, g.dimension, sum((g.n - 1) * g.var) / nullif(sum(g.n - 1), 0) AS judge_variance,
               sum(g.n) AS calls, max(g.n) AS max_repeats
          FROM groups g GROUP BY g.rubric_version, g.dimension),
    items AS (
        SELECT s.rubric_version, s.dimension, s.snapshot_id, avg(s.score) AS item_mean
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.snapshot_id),
    between_items AS (
        SELECT i.rubric_version, i.dimension, count(*) AS items, var_samp(i.item_mean) AS item_variance
          FROM items i GROUP BY i.rubric_version, i.dimension)
    SELECT w.rubric_version, w.dimension, bi.items, w.calls, w.max_repeats, w.judge_variance, bi.item_variance,
           (SELECT count(DISTINCT f.snapshot_id) FROM evalledger.work_quality_flaky_v1 f
             WHERE f.rubric_version = w.rubric_version AND f.dimension = w.dimension) AS flaky_items
      FROM within w JOIN between_items bi USING (rubric_version, dimension);
COMMENT ON VIEW evalledger.work_quality_repeat_variance_v1 IS
    'Per rubric version and dimension over completed work-quality snapshots judged by a panel: the judges'' noise (the variance between one judge''s repeats of one work product, pooled) beside the variance between snapshots, and how many are flaky (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.rubric_version IS 'The rubric epoch, e.g. v1.0.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.dimension IS 'A rubric dimension (efficacy, completeness, ..., overall).';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.items IS 'Count: the completed snapshots (items) with a contributing score of the dimension.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.calls IS 'Count: the contributing judge calls (repeats) behind the row.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.max_repeats IS 'Count: the most contributing repeats one judge gave one snapshot (1: no repeats, judge_variance NULL).';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.judge_variance IS 'Within-item variance between repeats of one judge, pooled with weights n - 1 (the rubric''s scale squared); NULL when no judge was asked twice.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.item_variance IS 'Between-item variance: the sample variance of the snapshots'' mean scores (the rubric''s scale squared); NULL with fewer than two snapshots.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.flaky_items IS 'Count: the snapshots with a judge whose repeats straddle the regression line on this dimension (work_quality_flaky_v1).';

REVOKE ALL ON work_quality_repeat_variance_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_repeat_variance_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_repeat_variance_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
