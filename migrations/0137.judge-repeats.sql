-- Judge repeats (issue 36, item 4), takes-quality: `run takes-quality --repeats K` asks each judge K
-- times per cycle. The run says K (eval_takes_quality_runs.repeats, 1 to 10, a part of the eval's
-- identity: a run of K repeats never reads back a run of another K) and each verdict row its repeat
-- (eval_takes_quality_judge_verdicts.repeat_no, 1 to the run's K; every row stored before is repeat
-- 1 of a run of 1), each repeat with its own retries: the unique keys widen to hold them, and the
-- sequence trigger refuses a repeat outside 1 to K. A judge's score of a dimension in a cycle is its
-- mean over its contributing repeats (the cycle's rule reads the judges' means as it read their
-- single scores: a run of one repeat is decided, and its receipt written, exactly as before); the
-- receipt counts a judge once per cycle in successes_per_cycle and names a repeat in an error line,
-- and says repeats when K > 1. Two views for BI: takes_quality_flaky_v1 (a judge's repeats that
-- straddle a threshold of the rubric's pass_rule) and takes_quality_repeat_variance_v1 (the judges'
-- within-item variance beside the between-item variance, per rubric version and dimension).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The unique keys widen, past the drop guard (see 0102.journal-cost.sql).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE eval_takes_quality_runs
    ADD COLUMN repeats integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT eval_takes_quality_runs_repeats_range CHECK (repeats BETWEEN 1 AND 10),
    DROP CONSTRAINT eval_takes_quality_runs_identity_key,
    ADD CONSTRAINT eval_takes_quality_runs_identity_key
        UNIQUE (corpus_sha8, prompt_sha8, models_sha8, rubric_sha8, scope_sha8, judges, rerun, repeats);
GRANT INSERT (repeats) ON eval_takes_quality_runs TO evalledger_runner;
-- The one-open index again, after the identity key: PostgreSQL checks a row's unique indexes in the
-- order they were made, so a second open run of one identity is still refused by the identity key
-- first, as it was before (and as a fresh build makes them).
DROP INDEX eval_takes_quality_runs_one_open_idx;
CREATE UNIQUE INDEX eval_takes_quality_runs_one_open_idx
    ON eval_takes_quality_runs ((coalesce(target_id, '')), prompt_sha8, scope_sha8, judges) WHERE completed_at IS NULL;

ALTER TABLE eval_takes_quality_judge_verdicts
    ADD COLUMN repeat_no integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_repeat_positive CHECK (repeat_no >= 1),
    DROP CONSTRAINT eval_takes_quality_judge_verdicts_once,
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_once UNIQUE (run_id, cycle, model, repeat_no, retry_no);
GRANT INSERT (repeat_no) ON eval_takes_quality_judge_verdicts TO evalledger_runner;

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

-- takes_quality_current_v1: each judge's current row in each cycle (and each repeat, repeat_no) of a
-- run: its latest by retry_no. An earlier row is a call that failed outside the judge's content (a provider error,
-- a call the budget did not allow) and was retried, or a call that started and was answered or
-- lost; the current row is the verdict the run stands on. With the reader's rights.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_current_v1(p_run_id bigint)
RETURNS SETOF evalledger.eval_takes_quality_judge_verdicts
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (v.cycle, v.model, v.repeat_no) v.*
      FROM evalledger.eval_takes_quality_judge_verdicts v
     WHERE v.run_id = p_run_id
     ORDER BY v.cycle, v.model, v.repeat_no, v.retry_no DESC
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_current_v1(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION takes_quality_current_v1(bigint) TO evalledger_owner;

-- takes_quality_cycle_v1: one cycle of a takes-quality run, aggregated from its verdict rows
-- under the run's rubric: per dimension the mean (2 decimals, for display: the rule compares the
-- exact mean, shown to 4 decimals where 2 would hide the miss), min, max, the contributing
-- scores in panel order and per model; the overall score (mean of the dimension means); the
-- verdict: inconclusive when fewer than the rubric's quorum of the panel contributed, pass when
-- every dimension mean and every dimension minimum meet the rubric's thresholds, else fail;
-- and a message that says why. With repeats (--repeats K) a judge's score of a dimension is its
-- mean over its contributing repeats in the cycle (exact; shown to 4 decimals), and a judge
-- contributes when any of its repeats does: the rule then reads the judges' means as it reads
-- their single scores when K is 1, and a run of one repeat is decided exactly as before.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_cycle_v1(p_run_id bigint, p_cycle integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    policy jsonb;
    panel int;
    answered int;
    contributed int;
    need_num int;
    need_den int;
    min_mean numeric;
    min_min numeric;
    dims jsonb;
    overall numeric;
    misses text[];
    verdict text;
    message text;
    improvements jsonb;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    panel := cardinality(run.models);
    need_num := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 0)::int;
    need_den := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 1)::int;
    min_mean := (policy -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric;
    min_min := (policy -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric;

    SELECT count(*), count(DISTINCT v.model) FILTER (WHERE v.contributes) INTO answered, contributed
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id AND v.cycle = p_cycle;

    WITH dim AS (
        SELECT d ->> 'key' AS key, n FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
    ), contrib AS (
        -- Each contributing judge's score of each dimension: its one score, or its mean over its
        -- contributing repeats (exact, and as shown: 4 decimals).
        SELECT v.model, array_position(run.models, v.model) AS pos, dim.key,
               CASE WHEN count(*) = 1 THEN min((v.scores ->> dim.key)::numeric)
                    ELSE avg((v.scores ->> dim.key)::numeric) END AS score,
               CASE WHEN count(*) = 1 THEN (array_agg(v.scores -> dim.key))[1]
                    ELSE to_jsonb(trim_scale(round(avg((v.scores ->> dim.key)::numeric), 4))) END AS shown,
               CASE WHEN count(*) = 1 THEN min((v.scores ->> dim.key)::numeric)
                    ELSE trim_scale(round(avg((v.scores ->> dim.key)::numeric), 4)) END AS shown_score
          FROM evalledger.eval_takes_quality_judge_verdicts v CROSS JOIN dim
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
         GROUP BY v.model, dim.key
    ), agg AS (
        SELECT dim.key, dim.n,
               round(avg(c.score), 2) AS mean,
               avg(c.score) AS exact_mean,
               min(c.score) AS lo,
               min(c.shown_score) AS lo_shown,
               max(c.shown_score) AS hi_shown,
               coalesce(jsonb_agg(c.shown ORDER BY c.pos) FILTER (WHERE c.model IS NOT NULL), '[]') AS scores,
               coalesce(jsonb_object_agg(c.model, c.shown) FILTER (WHERE c.model IS NOT NULL), '{}') AS per_model
          FROM dim LEFT JOIN contrib c ON c.key = dim.key
         GROUP BY dim.key, dim.n
    )
    SELECT jsonb_object_agg(a.key, jsonb_build_object(
               'mean', trim_scale(a.mean),
               'min', a.lo_shown, 'max', a.hi_shown,
               'scores', a.scores, 'per_model', a.per_model)),
           trim_scale(round(avg(a.exact_mean), 2)),
           array_remove(array_agg(
               CASE WHEN a.exact_mean < min_mean
                    THEN format('%s mean %s < %s', a.key,
                                trim_scale(CASE WHEN a.mean < min_mean THEN a.mean ELSE round(a.exact_mean, 4) END),
                                min_mean) END
               ORDER BY a.n), NULL)
           || array_remove(array_agg(
               CASE WHEN a.lo < min_min THEN format('%s min %s < %s', a.key, trim_scale(a.lo_shown), min_min) END
               ORDER BY a.n), NULL)
      INTO dims, overall, misses
      FROM agg a;

    -- Each distinct suggestion once, in panel order.
    SELECT coalesce(jsonb_agg(i ORDER BY first_seen), '[]') INTO improvements FROM (
        SELECT i, min(array_position(run.models, v.model) * 1000 + n) AS first_seen
          FROM evalledger.eval_takes_quality_judge_verdicts v,
               jsonb_array_elements(coalesce(v.improvements, '[]')) WITH ORDINALITY x(i, n)
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
         GROUP BY i) s;

    IF contributed * need_den < need_num * panel THEN
        verdict := 'inconclusive';
        message := format('INCONCLUSIVE: %s of %s models contributed complete scores; the rubric needs at least %s/%s of the panel',
                          contributed, panel, need_num, need_den);
    ELSIF cardinality(misses) = 0 THEN
        verdict := 'pass';
        message := format('PASS: every dim mean >=%s and min >=%s (%s of %s models contributed; overall %s)',
                          min_mean, min_min, contributed, panel, overall);
    ELSE
        verdict := 'fail';
        message := format('FAIL: %s (%s of %s models contributed; overall %s)',
                          array_to_string(misses, '; '), contributed, panel, overall);
    END IF;

    RETURN jsonb_build_object(
        'cycle', p_cycle, 'panel', panel, 'answered', answered, 'contributed', contributed,
        'verdict', verdict, 'scores', dims, 'overall_score', overall,
        'improvements', improvements, 'message', message);
END;
$$;

-- takes_quality_uncertainty_v1: beside a takes-quality verdict (never changing it), each rubric
-- dimension and the overall score with its uncertainty (uncertainty_v1's object), from the judge
-- verdict rows as the reader may read them (docs/statistics.md, "takes-quality"). The sample is
-- judged as a whole, so the unit is the judge's call: in the deciding cycle (the last, as the
-- receipt's), the contributing judges' scores of a dimension give its mean and mean_stderr_v1's
-- standard error ('judges'; n and clusters the judges, each its own), the interval cut to the
-- rubric's scale; the overall, the mean of the dimension means, is each judge's mean over the
-- dimensions the same way. Across cycles each dimension also carries "between_call_variance": the
-- variance of one judge's scores of it from call to call (each judge's sample variance over the
-- cycles and repeats it contributed to, pooled with weights n - 1; null when no judge contributed
-- twice; with --repeats K a judge's score in the deciding cycle is its mean over its repeats) and
-- "calls": the contributing calls that variance saw. The interval covers the judges' disagreement
-- on this one sample; it does not cover which takes were sampled, nor judges outside the panel.
-- NULL for a run without verdicts.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_uncertainty_v1(p_run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH run AS (
        SELECT r.definition AS policy, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v
                                         WHERE v.run_id = p_run_id) AS last_cycle
          FROM evalledger.eval_takes_quality_runs t JOIN evalledger.rubric r ON r.rubric_id = t.rubric_id
         WHERE t.id = p_run_id),
    dim AS (
        SELECT d ->> 'key' AS key FROM run, jsonb_array_elements(run.policy -> 'dimensions') d),
    calls AS (
        SELECT v.cycle, v.model, d.key, (v.scores ->> d.key)::float8 AS score
          FROM evalledger.eval_takes_quality_judge_verdicts v CROSS JOIN dim d
         WHERE v.run_id = p_run_id AND v.contributes),
    spread AS (
        -- Each judge's variance over its cycles, pooled: sum((n_m - 1) s_m^2) / sum(n_m - 1).
        SELECT j.key, sum((j.n - 1) * j.var) / nullif(sum(j.n - 1), 0) AS between_call_variance, sum(j.n) AS calls
          FROM (SELECT c.key, c.model, count(*) AS n, coalesce(var_samp(c.score), 0) AS var
                  FROM calls c GROUP BY c.key, c.model) j
         GROUP BY j.key),
    deciding AS (
        -- A judge's score: its mean over its repeats in the cycle (its one score when K is 1).
        SELECT j.key, array_agg(j.score ORDER BY j.model) AS scores
          FROM (SELECT c.key, c.model, avg(c.score) AS score FROM calls c, run WHERE c.cycle = run.last_cycle
                 GROUP BY c.key, c.model) j
         GROUP BY j.key
        UNION ALL
        SELECT 'overall', array_agg(o.score ORDER BY o.model)
          FROM (SELECT c.model, avg(c.score) AS score FROM calls c, run WHERE c.cycle = run.last_cycle
                 GROUP BY c.model) o)
    SELECT jsonb_object_agg(d.key,
               evalledger.uncertainty_v1(m.estimate, m.stderr, m.n, m.n, 'judges', NULL, NULL,
                                         (run.policy -> 'scale' ->> 'min')::float8, (run.policy -> 'scale' ->> 'max')::float8)
               || CASE WHEN d.key = 'overall' THEN '{}'::jsonb
                       ELSE jsonb_build_object('between_call_variance', s.between_call_variance, 'calls', coalesce(s.calls, 0)) END)
      FROM deciding d
      CROSS JOIN run
      CROSS JOIN LATERAL evalledger.mean_stderr_v1(d.scores) m
      LEFT JOIN spread s ON s.key = d.key
     WHERE m.estimate IS NOT NULL
$$;
GRANT EXECUTE ON FUNCTION takes_quality_uncertainty_v1(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- takes_quality_receipt_v3: the seed-000 receipt (schema_version 1) of a run, built from the run
-- row and each judge's current row per cycle (takes_quality_current_v1): the last cycle decides.
-- Over takes_quality_receipt_v1 it tells the story of calls that were retried: `errors` lists every
-- row that did not contribute, a retried one marked "retried", and every call that started and
-- got no reply; `cost_usd` is exact (never rounded) and counts what each call cost plus, for a
-- call that started and was never answered, the runner's estimate of it. A run whose current rows
-- still hold a failure outside the judges' content (a provider error, a call the budget did not
-- allow, a call with no reply) is not final: the receipt says so (`final`: false, and the message
-- says how to retry), and takes_quality_run_decide_v2 refuses to complete it. Optional fields
-- (additive at schema_version 1): run_id, seed, judges (live or recorded), final, rerun. Over
-- takes_quality_receipt_v2 (the caller-checked v1) it asks caller_reads_v1 the same way: a run the
-- caller may not read reads as one that does not exist. With repeats (--repeats K), each judge's
-- repeats count once in successes_per_cycle (a judge contributes when any repeat does), an error
-- line names its repeat when it is not the first, and the optional field repeats says K (K > 1). Inside a trigger (the completion's decision,
-- which builds the receipt of the run it decides and returns it to no one) it asks nothing: the
-- database closes an open run past its deadline whatever its age (issue 37, item 2).
CREATE OR REPLACE FUNCTION evalledger.takes_quality_receipt_v3(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    last_cycle int;
    decided jsonb;
    successes jsonb;
    errors jsonb;
    cost numeric;
    skipped int;
    pending int;
    recorded int;
    total int;
    message text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
     WHERE r.id = p_run_id AND (evalledger.caller_reads_v1(r.created_at, NULL) OR pg_trigger_depth() > 0);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT max(v.cycle), count(*) FILTER (WHERE NOT v.call_started),
           count(*) FILTER (WHERE v.recorded)
      INTO last_cycle, total, recorded
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id;
    IF last_cycle IS NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % has no verdicts', p_run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    decided := evalledger.takes_quality_cycle_v1(p_run_id, last_cycle);
    SELECT jsonb_agg(c.n ORDER BY c.cycle) INTO successes FROM (
        SELECT g.cycle, count(DISTINCT v.model) FILTER (WHERE v.contributes) AS n
          FROM generate_series(1, last_cycle) g(cycle)
          LEFT JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = p_run_id AND v.cycle = g.cycle
         GROUP BY g.cycle) c;
    SELECT count(*) FILTER (WHERE c.error_kind = 'budget_exhausted' AND NOT c.call_started),
           count(*) FILTER (WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted'))
      INTO skipped, pending
      FROM evalledger.takes_quality_current_v1(p_run_id) c;

    WITH calls AS (
        SELECT v.*, lead(v.retry_no) OVER w IS NULL AS current, coalesce(lead(v.call_started) OVER w, false) AS restarted
          FROM evalledger.eval_takes_quality_judge_verdicts v
         WHERE v.run_id = p_run_id
        WINDOW w AS (PARTITION BY v.cycle, v.model, v.repeat_no ORDER BY v.retry_no)
    ), told AS (
        SELECT c.cycle, array_position(run.models, c.model) AS pos, c.repeat_no, c.retry_no,
               -- A started call whose answer follows is not an error: the answer says what happened.
               CASE WHEN c.call_started AND c.current
                    THEN format('cycle %s %s: no reply: the call started at %s and no answer was recorded '
                                '(estimated $%s counted)', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END,
                                to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN c.call_started AND c.restarted
                    THEN format('cycle %s %s: no reply: the runner stopped while the call was in flight '
                                '(estimated $%s counted); retried', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END,
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN NOT c.call_started AND NOT c.contributes
                    THEN format('cycle %s %s: %s%s%s', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END, c.error_kind,
                                CASE WHEN c.error_message IS NULL THEN '' ELSE ': ' || c.error_message END,
                                CASE WHEN c.current THEN '' ELSE '; retried' END) END AS line,
               CASE WHEN c.call_started AND (c.current OR c.restarted) THEN c.estimated_cost_usd ELSE 0 END
                   + c.cost_usd AS cost
          FROM calls c
    )
    SELECT coalesce(jsonb_agg(t.line ORDER BY t.cycle, t.pos, t.repeat_no, t.retry_no) FILTER (WHERE t.line IS NOT NULL), '[]'),
           trim_scale(coalesce(sum(t.cost), 0))
      INTO errors, cost
      FROM told t;

    message := decided ->> 'message';
    IF last_cycle > 1 THEN
        message := message || format('; decided in cycle %s', last_cycle);
    END IF;
    IF skipped > 0 THEN
        message := message || format('; %s call(s) not made: the budget cap would have been passed', skipped);
    END IF;
    IF pending > 0 THEN
        message := message || format('; not final: %s call(s) failed outside the judges'' content, '
                                     'and running the same eval again retries them', pending);
    END IF;

    RETURN jsonb_build_object(
        'schema_version', 1,
        'ts', to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'rubric_version', rub.version,
        'rubric_sha8', run.rubric_sha8,
        'corpus', jsonb_build_object('source', run.corpus_source, 'n_takes', run.n_takes,
                                     'slug_prefix', run.slug_prefix, 'corpus_sha8', run.corpus_sha8)
                  || CASE WHEN run.corpus_path IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object('path', run.corpus_path) END,
        'prompt_sha8', run.prompt_sha8,
        'models_sha8', run.models_sha8,
        'models', to_jsonb(run.models),
        'cycles_run', last_cycle,
        'successes_per_cycle', successes,
        'verdict', decided ->> 'verdict',
        'scores', decided -> 'scores',
        'overall_score', decided -> 'overall_score',
        'cost_usd', cost,
        'improvements', decided -> 'improvements',
        'errors', errors,
        'verdictMessage', message,
        -- Optional fields (additive at schema_version 1).
        'run_id', run.id,
        'seed', run.seed,
        'judges', coalesce(run.judges, CASE WHEN recorded = 0 THEN 'live' WHEN recorded = total THEN 'recorded'
                                            ELSE 'mixed' END),
        'final', pending = 0,
        'rerun', coalesce(run.rerun, 0))
        -- Optional, only where each judge was asked more than once per cycle (--repeats K).
        || CASE WHEN run.repeats > 1 THEN jsonb_build_object('repeats', run.repeats) ELSE '{}'::jsonb END;
END;
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v3(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v3(bigint) TO evalledger_owner;

-- takes_quality_verdict_sequence_v1: where a judge's row falls among the rows of its call, before
-- the verdict is admitted (takes_quality_verdict_admit_v2). retry_no is the database's: 0 for the
-- first row of a judge in a cycle, one more for each row after. A row follows only a started
-- call (its answer, or a new start after a runner that stopped) or a failure outside the judge's
-- content (a provider error, a call the budget did not allow): a judge that answered has its
-- verdict, and nothing replaces it. A started call (call_started, inserted before the request is
-- sent) carries only the runner's estimate of its cost; if no answer follows it, that estimate is
-- what the call counts. A run judged live takes only live rows, a recorded run only recorded
-- ones. A later cycle starts only once every judge's current row in the one before is an answer.
-- With repeats (the run's repeats, --repeats K) each judge is asked K times per cycle: repeat_no
-- (1 to K, the caller's) numbers the repeat, and each repeat has its own rows and retries as
-- above; a repeat outside 1 to K is refused, and a later cycle waits for every repeat's answer.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_verdict_sequence_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    cur evalledger.eval_takes_quality_judge_verdicts;
    undecided text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id;
    IF NOT FOUND OR run.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(run.created_at, NULL) THEN
        -- Admission (takes_quality_verdict_admit) refuses these alike: a run that is missing, closed
        -- or not the caller's to read reads as one, and nothing here says more about it.
        RETURN NEW;
    END IF;
    IF run.judges IS NOT NULL AND NEW.recorded IS DISTINCT FROM (run.judges = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is judged by % judges: a % reply is not one of its verdicts',
                NEW.run_id, run.judges, CASE WHEN NEW.recorded THEN 'recorded' ELSE 'live' END
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;

    IF NEW.repeat_no IS NULL OR NEW.repeat_no < 1 OR NEW.repeat_no > run.repeats THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % asks each judge % time(s) per cycle: repeat % is not one of them',
                NEW.run_id, run.repeats, NEW.repeat_no
            USING ERRCODE = 'check_violation', COLUMN = 'repeat_no';
    END IF;

    SELECT * INTO cur FROM evalledger.eval_takes_quality_judge_verdicts v
     WHERE v.run_id = NEW.run_id AND v.cycle = NEW.cycle AND v.model = NEW.model AND v.repeat_no = NEW.repeat_no
     ORDER BY v.retry_no DESC LIMIT 1;
    IF NOT FOUND THEN
        NEW.retry_no := 0;
    ELSIF cur.call_started OR cur.error_kind IN ('provider_error', 'budget_exhausted') THEN
        NEW.retry_no := cur.retry_no + 1;
    ELSE
        RAISE EXCEPTION 'evalledger: % has its verdict in cycle % of takes-quality run %: nothing to retry',
                NEW.model, NEW.cycle || CASE WHEN NEW.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', NEW.repeat_no) END,
                NEW.run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_judge_verdicts_retry_once';
    END IF;

    IF NEW.cycle > 1 THEN
        SELECT string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k) INTO undecided
          FROM unnest(run.models) WITH ORDINALITY u(m, p)
          CROSS JOIN generate_series(1, run.repeats) k
          LEFT JOIN evalledger.takes_quality_current_v1(NEW.run_id) c
                 ON c.cycle = NEW.cycle - 1 AND c.model = u.m AND c.repeat_no = k
         WHERE c.verdict_id IS NULL OR c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
        IF undecided IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: cycle % of takes-quality run % is not decided (no answer from %): cycle % waits',
                    NEW.cycle - 1, NEW.run_id, undecided, NEW.cycle
                USING ERRCODE = 'check_violation', COLUMN = 'cycle';
        END IF;
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

-- takes_quality_run_decide_v2: at completion (which complete_once_v1 admits first), every cycle
-- must hold a row from every panel model (for each of the run's repeats), and every judge's
-- current row must be an answer: a
-- run whose calls failed outside the judges' content (a provider error, a call the budget did not
-- allow, a call started with no reply) is not a final verdict, so it stays open and the same eval
-- run again retries exactly those calls. The database then writes what it decided: cycles_run,
-- verdict, overall_score, cost_usd and the whole receipt (takes_quality_receipt_v4). A run past its
-- rubric's deadline (brain_eval_run_deadline_v1, open_run_days from its created_at) is closed as
-- abandoned instead (its closure recorded here), and a closed run (eval_run_closure: abandoned or
-- cancelled) is decided fail, "Abandoned: ...", whole or not (issue 37, item 2).
CREATE OR REPLACE FUNCTION evalledger.takes_quality_run_decide_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    pending text;
    receipt jsonb;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('takes-quality run');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c
                                          WHERE c.takes_quality_run_id = NEW.id) THEN
        INSERT INTO evalledger.eval_run_closure
               (suite, takes_quality_run_id, closure, reason, closed_by, run_created_at)
        VALUES ('takes-quality', NEW.id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline),
                evalledger.caller_v1(), NEW.created_at);
    END IF;
    -- A closed run is decided as closed, whole or not.
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = NEW.id) THEN
        SELECT format('cycle %s lacks %s', g.cycle,
                      string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k)) INTO gap
          FROM generate_series(1, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = NEW.id)) g(cycle)
          CROSS JOIN unnest(NEW.models) WITH ORDINALITY u(m, p)
          CROSS JOIN generate_series(1, NEW.repeats) k
         WHERE NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v
                            WHERE v.run_id = NEW.id AND v.cycle = g.cycle AND v.model = u.m AND v.repeat_no = k)
         GROUP BY g.cycle ORDER BY g.cycle LIMIT 1;
        IF gap IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not whole: %', NEW.id, gap
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
        END IF;
        SELECT string_agg(format('cycle %s %s (%s)', c.cycle,
                                 c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' repeat %s', c.repeat_no) END,
                                 CASE WHEN c.call_started THEN 'started, no reply' ELSE c.error_kind END),
                          ', ' ORDER BY c.cycle, array_position(NEW.models, c.model), c.repeat_no)
          INTO pending
          FROM evalledger.takes_quality_current_v1(NEW.id) c
         WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
        IF pending IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not final: % failed outside the judges'' content',
                    NEW.id, pending
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_is_final',
                      HINT = 'running the same eval again retries exactly those calls';
        END IF;
    END IF;
    receipt := evalledger.takes_quality_receipt_v4(NEW.id);
    NEW.cycles_run := (receipt ->> 'cycles_run')::int;
    NEW.verdict := receipt ->> 'verdict';
    NEW.overall_score := (receipt ->> 'overall_score')::numeric;
    NEW.cost_usd := (receipt ->> 'cost_usd')::numeric;
    NEW.receipt_json := receipt;
    RETURN NEW;
END;
$$;

-- takes_quality_run_identity_v1: the rest of a takes-quality run's identity, after the seed's four
-- fingerprints (takes_quality_run_admit_v2 fills in the rubric's and the panel's). scope_sha8 is
-- the database's fingerprint of where the sample was drawn from: the source, the path of an fs
-- corpus and the slug prefix (each is in the receipt, and the prefix is in the judges' prompt), so
-- a run over files never reads back a run over the database. judges says how the run is judged,
-- live or recorded, so recorded replies never occupy a live run's identity. rerun numbers the
-- judgings of one eval: 0 the first, N+1 a `--rerun` once judging N is complete, among the runs
-- that ask each judge as many times (repeats).
CREATE OR REPLACE FUNCTION evalledger.takes_quality_run_identity_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.scope_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.corpus_source, NEW.corpus_path, NEW.slug_prefix)::text, 'UTF8')), 'hex'), 8);
    NEW.rerun := coalesce(NEW.rerun, 0);
    IF NEW.rerun > 0 AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE (r.corpus_sha8, r.prompt_sha8, r.models_sha8, r.rubric_sha8, r.scope_sha8, r.judges, r.rerun,
                    r.repeats)
                 = (NEW.corpus_sha8, NEW.prompt_sha8, NEW.models_sha8, NEW.rubric_sha8, NEW.scope_sha8, NEW.judges,
                    NEW.rerun - 1, NEW.repeats)
               AND r.completed_at IS NOT NULL) THEN
        RAISE EXCEPTION 'evalledger: rerun % of this takes-quality eval needs its judging % complete first',
                NEW.rerun, NEW.rerun - 1
            USING ERRCODE = 'check_violation', COLUMN = 'rerun';
    END IF;
    RETURN NEW;
END;
$$;

-- takes_quality_flaky_v1: the items whose judge repeats straddle a threshold (docs/statistics.md,
-- "Judge repeats"). A takes-quality run's sample is the item; with --repeats K each judge scores it
-- K times per cycle, and a judge's repeats of a dimension in one cycle straddle a threshold when
-- the lowest is below it and the highest at or above it. The thresholds are the run's rubric's own
-- (pass_rule.every_dim_mean_at_least and every_dim_min_at_least, read from the rubric row): a
-- straddle means the verdict could have gone the other way on another asking. One row per
-- completed run, dimension, judge, cycle and threshold straddled. Read by RevOps and auditors under
-- their own row-level security.
CREATE VIEW evalledger.takes_quality_flaky_v1 AS
    SELECT r.id AS run_id, b.version AS rubric_version, r.started_at, r.verdict, d.key AS dimension,
           v.model AS judge_model, v.cycle, count(*) AS repeats,
           min((v.scores ->> d.key)::numeric) AS lowest, max((v.scores ->> d.key)::numeric) AS highest,
           t.rule, t.threshold
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') dd
     CROSS JOIN LATERAL (SELECT dd ->> 'key' AS key) d
     CROSS JOIN LATERAL (VALUES ('every_dim_mean_at_least', (b.definition -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric),
                                ('every_dim_min_at_least', (b.definition -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric)) t(rule, threshold)
      JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = r.id AND v.contributes
     WHERE r.completed_at IS NOT NULL AND t.threshold IS NOT NULL
     GROUP BY r.id, b.version, r.started_at, r.verdict, d.key, v.model, v.cycle, t.rule, t.threshold
    HAVING count(*) >= 2 AND min((v.scores ->> d.key)::numeric) < t.threshold
       AND max((v.scores ->> d.key)::numeric) >= t.threshold;
COMMENT ON VIEW evalledger.takes_quality_flaky_v1 IS
    'Per completed takes-quality run, dimension, judge, cycle and rubric threshold: a flaky item, where the judge''s repeats (--repeats K) of the dimension straddle the threshold (lowest below it, highest at or above it). Thresholds are the rubric''s pass_rule (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.run_id IS 'The run (eval_takes_quality_runs.id): its sample of takes is the item.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.rubric_version IS 'The rubric epoch the run was judged by, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.verdict IS 'The verdict the database computed: pass, fail or inconclusive (unchanged by flakiness).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.dimension IS 'The rubric dimension whose repeats straddle the threshold.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.cycle IS 'Count: the cycle (1 onwards) whose repeats straddle it.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.repeats IS 'Count: the judge''s contributing repeats in that cycle.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.lowest IS 'The lowest of those scores, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.highest IS 'The highest of those scores, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.rule IS 'Which threshold of the rubric''s pass_rule: every_dim_mean_at_least or every_dim_min_at_least.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.threshold IS 'That threshold, on the rubric''s scale (1-10), as the rubric row holds it.';

REVOKE ALL ON takes_quality_flaky_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_flaky_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_flaky_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- takes_quality_repeat_variance_v1: judge noise told from item variance (docs/statistics.md, "Judge
-- repeats"), per rubric version and dimension over the completed takes-quality runs the reader may
-- read. The item is a run's sample of takes; a group is one judge's contributing repeats of the item
-- in one cycle (--repeats K). judge_variance (within an item, between repeats) pools the groups'
-- sample variances with weights n - 1: sum((n_g - 1) s_g^2) / sum(n_g - 1), NULL when no group has
-- two repeats. item_variance (between items) is the sample variance of the items' means (each the
-- mean of all its contributing scores of the dimension), NULL with fewer than two items. When
-- item_variance is not larger than judge_variance / (judges x repeats), the runs' differences are
-- within the judges' own noise. flaky_items counts the runs with a straddle (takes_quality_flaky_v1).
CREATE VIEW evalledger.takes_quality_repeat_variance_v1 AS
    WITH scored AS (
        SELECT r.id AS run_id, b.version AS rubric_version, d ->> 'key' AS dimension, v.model, v.cycle,
               (v.scores ->> (d ->> 'key'))::float8 AS score
          FROM evalledger.eval_takes_quality_runs r
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') d
          JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = r.id AND v.contributes
         WHERE r.completed_at IS NOT NULL),
    groups AS (
        SELECT s.rubric_version, s.dimension, count(*) AS n, coalesce(var_samp(s.score), 0) AS var
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.run_id, s.model, s.cycle),
    within AS (
        SELECT g.rubric_version, g.dimension, sum((g.n - 1) * g.var) / nullif(sum(g.n - 1), 0) AS judge_variance,
               sum(g.n) AS calls, max(g.n) AS max_repeats
          FROM groups g GROUP BY g.rubric_version, g.dimension),
    items AS (
        SELECT s.rubric_version, s.dimension, s.run_id, avg(s.score) AS item_mean
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.run_id),
    between_items AS (
        SELECT i.rubric_version, i.dimension, count(*) AS items, var_samp(i.item_mean) AS item_variance
          FROM items i GROUP BY i.rubric_version, i.dimension)
    SELECT w.rubric_version, w.dimension, bi.items, w.calls, w.max_repeats, w.judge_variance, bi.item_variance,
           (SELECT count(DISTINCT f.run_id) FROM evalledger.takes_quality_flaky_v1 f
             WHERE f.rubric_version = w.rubric_version AND f.dimension = w.dimension) AS flaky_items
      FROM within w JOIN between_items bi USING (rubric_version, dimension);
COMMENT ON VIEW evalledger.takes_quality_repeat_variance_v1 IS
    'Per rubric version and dimension over completed takes-quality runs: the judges'' noise (the variance between one judge''s repeats of one item, pooled) beside the variance between items (the runs'' means), and how many items are flaky (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.rubric_version IS 'The rubric epoch, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.dimension IS 'A rubric dimension (accuracy, attribution, ...).';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.items IS 'Count: the completed runs (items) with a contributing score of the dimension.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.calls IS 'Count: the contributing judge calls (repeats and cycles) behind the row.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.max_repeats IS 'Count: the most contributing repeats one judge gave one item in one cycle (1: no repeats, judge_variance NULL).';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.judge_variance IS 'Within-item variance between repeats of one judge in one cycle, pooled with weights n - 1 (the rubric''s scale squared); NULL when no judge was asked twice.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.item_variance IS 'Between-item variance: the sample variance of the runs'' mean scores (the rubric''s scale squared); NULL with fewer than two runs.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.flaky_items IS 'Count: the runs with a judge whose repeats straddle a rubric threshold on this dimension (takes_quality_flaky_v1).';

REVOKE ALL ON takes_quality_repeat_variance_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_repeat_variance_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_repeat_variance_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
