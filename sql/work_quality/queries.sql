-- The work-quality suite's named queries (loaded by evalledger.core.queries). The runner reads
-- and writes the ledger only through these; every decision is in the functions they call.

-- name: has_completed_snapshot
-- Whether the ledger holds any completed snapshot of a target (else the store's last is imported).
SELECT EXISTS (SELECT 1 FROM evalledger.eval_work_quality_snapshots
                WHERE name = %(name)s AND completed_at IS NOT NULL);

-- name: start_run
-- A run's snapshot row; the database stamps `at` and picks the previous snapshot (the latest judged the same way).
INSERT INTO evalledger.eval_work_quality_snapshots (
    origin, rubric_id, kind, name, persona, run_id, bot_family, bot_version, iterion_sha, task, outcome,
    evidence_digest, evidence_sha256, cost_usd, tokens, duration_ms, iterations, model_calls, retries, models, judges)
VALUES ('run', %(rubric_id)s, %(kind)s, %(name)s, %(persona)s, %(run_id)s, %(bot_family)s, %(bot_version)s,
        %(iterion_sha)s, %(task)s, %(outcome)s, %(evidence_digest)s, %(evidence_sha256)s, %(cost_usd)s, %(tokens)s,
        %(duration_ms)s, %(iterations)s, %(model_calls)s, %(retries)s, %(models)s, %(judges)s)
ON CONFLICT ON CONSTRAINT eval_work_quality_snapshots_identity_key DO NOTHING
RETURNING snapshot_id, origin, completed_at, prev_snapshot_id, evidence_sha256, models, snapshot_json, 1 AS repeats,
          true AS created;

-- name: find_run
-- The row a repeated --run-id names (complete or not), judged the same way.
SELECT snapshot_id, origin, completed_at, prev_snapshot_id, evidence_sha256, models, snapshot_json,
       coalesce((to_jsonb(s) ->> 'repeats')::int, 1) AS repeats, false AS created
  FROM evalledger.eval_work_quality_snapshots s
 WHERE name = %(name)s AND run_id = %(run_id)s AND judges = %(judges)s;

-- name: snapshot_state
-- One snapshot row as a claim finds it: complete or not, and its document.
SELECT snapshot_id, origin, completed_at, prev_snapshot_id, evidence_sha256, models, snapshot_json,
       coalesce((to_jsonb(s) ->> 'repeats')::int, 1) AS repeats, false AS created
  FROM evalledger.eval_work_quality_snapshots s WHERE snapshot_id = %(snapshot_id)s;

-- name: claim_run
-- Claim a snapshot's run for this runner until the claim's transaction ends (never committed); waits while another runner holds it.
INSERT INTO evalledger.run_claim (suite, run_id) VALUES ('work-quality', %(run_id)s);

-- name: insert_start
-- A judge call about to be sent, with the runner's estimate of its cost (counted if no answer follows).
INSERT INTO evalledger.eval_work_quality_judge_verdicts (snapshot_id, model, recorded, call_started, estimated_cost_usd)
VALUES (%(snapshot_id)s, %(model)s, false, true, %(estimated_cost_usd)s);

-- name: previous_for_prompt
-- What the judges are shown of the previous snapshot: its scores, price, digest, first narrative.
SELECT s.run_id, s.at, s.mean_scores, s.cost_usd, s.tokens, s.duration_ms, s.evidence_digest,
       (SELECT v.narrative FROM evalledger.eval_work_quality_judge_verdicts v
         WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND btrim(v.narrative) <> ''
         ORDER BY array_position(s.models, v.model), v.verdict_id LIMIT 1) AS narrative
  FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = %(snapshot_id)s;

-- name: models_answered
-- The (panel model, repeat) pairs whose current row is a verdict the run keeps (a resumed run asks only the others): an answer, and a failed one only once another judge contributed (repeat_no through to_jsonb: 1 before repeats).
SELECT c.model, coalesce((to_jsonb(c) ->> 'repeat_no')::int, 1) AS repeat_no FROM evalledger.work_quality_current_v1(%(snapshot_id)s) c
 WHERE NOT c.call_started AND c.error_kind IS DISTINCT FROM 'provider_error'
   AND c.error_kind IS DISTINCT FROM 'budget_exhausted'
   AND (c.contributes OR EXISTS (SELECT 1 FROM evalledger.eval_work_quality_judge_verdicts v
                                  WHERE v.snapshot_id = %(snapshot_id)s AND v.contributes));

-- name: record_verdict
-- One judge's reply (or failure) as it arrives; the database decides whether it contributes.
INSERT INTO evalledger.eval_work_quality_judge_verdicts (
    snapshot_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
    input_tokens, output_tokens, cost_usd, latency_ms, attempts)
VALUES (%(snapshot_id)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s)
ON CONFLICT ON CONSTRAINT eval_work_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores, same_family;

-- name: record_verdict_billed
-- One judge's reply with its usage in every token class and the price it is billed at: the database decides
-- whether it contributes and computes its cost. Without them, record_verdict.
INSERT INTO evalledger.eval_work_quality_judge_verdicts (
    snapshot_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
    input_tokens, output_tokens, cost_usd, latency_ms, attempts,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of)
VALUES (%(snapshot_id)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s,
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s)
ON CONFLICT ON CONSTRAINT eval_work_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores, same_family;

-- name: start_run_repeated
-- start_run for a run that asks each judge more than once (--repeats K, K > 1).
INSERT INTO evalledger.eval_work_quality_snapshots (
    origin, rubric_id, kind, name, persona, run_id, bot_family, bot_version, iterion_sha, task, outcome,
    evidence_digest, evidence_sha256, cost_usd, tokens, duration_ms, iterations, model_calls, retries, models, judges,
    repeats)
VALUES ('run', %(rubric_id)s, %(kind)s, %(name)s, %(persona)s, %(run_id)s, %(bot_family)s, %(bot_version)s,
        %(iterion_sha)s, %(task)s, %(outcome)s, %(evidence_digest)s, %(evidence_sha256)s, %(cost_usd)s, %(tokens)s,
        %(duration_ms)s, %(iterations)s, %(model_calls)s, %(retries)s, %(models)s, %(judges)s, %(repeats)s)
ON CONFLICT ON CONSTRAINT eval_work_quality_snapshots_identity_key DO NOTHING
RETURNING snapshot_id, origin, completed_at, prev_snapshot_id, evidence_sha256, models, snapshot_json, repeats,
          true AS created;

-- name: insert_start_repeat
-- insert_start for a repeat after the first (repeat_no > 1).
INSERT INTO evalledger.eval_work_quality_judge_verdicts (snapshot_id, model, repeat_no, recorded, call_started,
                                                         estimated_cost_usd)
VALUES (%(snapshot_id)s, %(model)s, %(repeat_no)s, false, true, %(estimated_cost_usd)s);

-- name: record_verdict_repeat
-- record_verdict for a repeat after the first (repeat_no > 1).
INSERT INTO evalledger.eval_work_quality_judge_verdicts (
    snapshot_id, model, repeat_no, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
    input_tokens, output_tokens, cost_usd, latency_ms, attempts)
VALUES (%(snapshot_id)s, %(model)s, %(repeat_no)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s)
ON CONFLICT ON CONSTRAINT eval_work_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores, same_family;

-- name: record_verdict_billed_repeat
-- record_verdict_billed for a repeat after the first (repeat_no > 1).
INSERT INTO evalledger.eval_work_quality_judge_verdicts (
    snapshot_id, model, repeat_no, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
    input_tokens, output_tokens, cost_usd, latency_ms, attempts,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of)
VALUES (%(snapshot_id)s, %(model)s, %(repeat_no)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s,
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s)
ON CONFLICT ON CONSTRAINT eval_work_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores, same_family;

-- name: verdicts
-- Each judge's current row on a snapshot, in panel order.
SELECT v.model, v.contributes, v.error_kind, v.error_message, v.same_family, v.recorded
  FROM evalledger.work_quality_current_v1(%(snapshot_id)s) v
  JOIN evalledger.eval_work_quality_snapshots s USING (snapshot_id)
 ORDER BY array_position(s.models, v.model);

-- name: complete
-- Completion: the database computes the aggregate, the comparison and the document (NULL: no open snapshot this role may read).
SELECT evalledger.work_quality_complete_v1(%(snapshot_id)s) AS snapshot_json;

-- name: document
-- A completed snapshot's document, as the database built it.
SELECT snapshot_json FROM evalledger.eval_work_quality_snapshots
 WHERE snapshot_id = %(snapshot_id)s AND completed_at IS NOT NULL;

-- name: documents_by_run_id
-- `snapshot show RUN_ID`: every completed snapshot with that run id (one per target), and its uncertainty as its completion stored it (eval_work_quality_snapshot_uncertainty; NULL when nothing was measured).
SELECT s.name, s.snapshot_json, nullif(x.uncertainty, '{}'::jsonb) AS uncertainty
  FROM evalledger.eval_work_quality_snapshots s
  LEFT JOIN evalledger.eval_work_quality_snapshot_uncertainty x ON x.snapshot_id = s.snapshot_id
 WHERE s.run_id = %(run_id)s AND s.completed_at IS NOT NULL ORDER BY s.name;

-- name: list_snapshots
-- `snapshot list NAME`: the target's history, oldest first, as the history view shows it (a cancelled or abandoned snapshot a regression, its note the reason).
SELECT s.at, s.run_id, s.origin, (s.mean_scores ->> 'overall')::numeric AS overall,
       (s.mean_scores ->> 'value_for_money')::numeric AS value_for_money, s.comparison ->> 'verdict' AS verdict,
       (s.comparison ->> 'overall_delta')::numeric AS overall_delta, s.cost_usd,
       CASE WHEN w.state IN ('cancelled', 'abandoned') THEN ARRAY[w.note]
            ELSE evalledger.work_quality_is_regression_v1(s.comparison) END AS reasons
  FROM evalledger.eval_work_quality_snapshots s
  JOIN evalledger.work_quality_run_state_v1 w USING (snapshot_id)
 WHERE s.name = %(name)s AND s.completed_at IS NOT NULL
 ORDER BY s.at, s.snapshot_id;

-- name: compare
-- The seed's Compare and IsRegression over two snapshots' mean scores, as the database computes them.
SELECT d AS delta, evalledger.work_quality_is_regression_v1(d, %(tolerance)s::numeric) AS reasons,
       CASE WHEN %(tolerance)s::numeric > 0 THEN %(tolerance)s::numeric
            ELSE (evalledger.work_quality_policy_v1() ->> 'regress_tolerance')::numeric END AS tolerance
  FROM evalledger.work_quality_compare_v1(%(prev_mean)s, %(cur_mean)s, %(prev_run_id)s) d;

-- name: is_regression
-- IsRegression over a comparison the database computed earlier, with the tolerance it used.
SELECT evalledger.work_quality_is_regression_v1(%(delta)s, %(tolerance)s::numeric) AS reasons,
       CASE WHEN %(tolerance)s::numeric > 0 THEN %(tolerance)s::numeric
            ELSE (evalledger.work_quality_policy_v1() ->> 'regress_tolerance')::numeric END AS tolerance;

-- name: closed_regression
-- A snapshot cancelled or abandoned (work_quality_run_state_v1) is a regression whatever its comparison, its note the one reason; none for any other.
SELECT ARRAY[w.note] AS reasons FROM evalledger.work_quality_run_state_v1 w
 WHERE w.snapshot_id = %(snapshot_id)s AND w.state IN ('cancelled', 'abandoned');

-- name: import_snapshot
-- One history file into the ledger; a file already imported (same target and run id) adds nothing.
INSERT INTO evalledger.eval_work_quality_snapshots (origin, snapshot_json, source_file, models)
VALUES ('import', %(document)s, %(source_file)s, '{}')
ON CONFLICT ON CONSTRAINT eval_work_quality_snapshots_identity_key DO NOTHING
RETURNING snapshot_id;

-- name: dashboard_work_quality_history_v1
-- The work_quality_history_v1 panel as its readers see it.
SELECT * FROM evalledger.work_quality_history_v1;

-- name: cancel_run
-- Cancel an open run (its snapshot) with a reason: recorded, and decided a regression ("Abandoned: cancelled by ..."). Whether an open snapshot this role may read was cancelled.
SELECT evalledger.eval_run_cancel_v1('work-quality', %(snapshot_id)s, %(reason)s) AS cancelled;

-- name: run_state
-- One snapshot as work_quality_run_state_v1 reads it: its state, regression and note.
SELECT snapshot_id, name, run_id, state, regression, note FROM evalledger.work_quality_run_state_v1
 WHERE snapshot_id = %(snapshot_id)s;

-- name: list_runs
-- Work-quality runs of every target newest first, filtered by target, start time, verdict and state (`work-quality list`); the state and regression as work_quality_run_state_v1 reads them, so an open run past its deadline lists as abandoned, a regression, before anything closes it; an open run has no regression to say (NULL), never "no".
SELECT s.snapshot_id, s.name, s.kind, s.run_id, s.at, s.completed_at, s.origin,
       w.state, s.judges,
       (s.mean_scores ->> 'overall')::numeric AS overall, s.comparison ->> 'verdict' AS verdict,
       w.regression, s.cost_usd
  FROM evalledger.eval_work_quality_snapshots s
  JOIN evalledger.work_quality_run_state_v1 w USING (snapshot_id)
 WHERE (%(name)s::text IS NULL OR s.name = %(name)s)
   AND (%(since)s::timestamptz IS NULL OR s.at >= %(since)s)
   AND (%(verdict)s::text IS NULL OR s.comparison ->> 'verdict' = %(verdict)s)
   AND (%(state)s::text IS NULL OR w.state = %(state)s)
 ORDER BY s.at DESC, s.snapshot_id DESC
 LIMIT %(limit)s;

-- name: snapshot_uncertainty
-- Each dimension of a Snapshot document with its uncertainty over the judges (work_quality_uncertainty_v1): a history file's, which the ledger holds no completed snapshot of (`snapshot show PATH`).
SELECT evalledger.work_quality_uncertainty_v1(%(doc)s) AS uncertainty;

-- name: dashboard_work_quality_intervals_v1
-- The work_quality_intervals_v1 panel: each aggregate's interval beside the verdict, newest first.
SELECT * FROM evalledger.work_quality_intervals_v1 ORDER BY completed_at DESC;

-- name: gate
-- `snapshot compare`: snapshot B against snapshot A, the gate decided and stored by the database (eval_gate_decision, by gate_decide_v2) in the mode asked for; its comparison holds the seed's Compare and IsRegression and the paired rows.
INSERT INTO evalledger.eval_gate_decision (suite, mode, threshold, baseline_ref, current_ref, baseline, current_doc)
VALUES ('work-quality', %(mode)s, %(threshold)s::numeric, %(baseline_ref)s, %(current_ref)s, %(baseline)s, %(current)s)
RETURNING gate_id, decision, reasons, comparison;
-- name: dashboard_work_quality_repeat_variance_v1
-- The work_quality_repeat_variance_v1 panel: the judges' noise beside the snapshots' variance, per rubric epoch and dimension.
SELECT * FROM evalledger.work_quality_repeat_variance_v1 ORDER BY rubric_version, dimension;

-- name: dashboard_work_quality_flaky_v1
-- The work_quality_flaky_v1 panel: the snapshots whose judge repeats straddle the regression line, newest first.
SELECT * FROM evalledger.work_quality_flaky_v1 ORDER BY at DESC, snapshot_id DESC, dimension, judge_model;
