-- takes-quality's named queries. Each starts with a "-- name: <name>" line and a comment that
-- says what it does (loaded by core/queries.py).

-- name: start_run
-- A new run row (the database fills in the rubric, panel and scope fingerprints), or nothing when this judging of the eval exists.
INSERT INTO evalledger.eval_takes_quality_runs (rubric_id, target_id, corpus_source, corpus_path, slug_prefix,
                                                sample_limit, seed, n_takes, corpus_sha8, prompt_sha8, models, judges,
                                                rerun)
VALUES (%(rubric_id)s, %(target_id)s, %(corpus_source)s, %(corpus_path)s, %(slug_prefix)s, %(sample_limit)s,
        %(seed)s, %(n_takes)s, %(corpus_sha8)s, %(prompt_sha8)s, %(models)s, %(judges)s, %(rerun)s)
ON CONFLICT ON CONSTRAINT eval_takes_quality_runs_identity_key DO NOTHING
RETURNING id, completed_at, receipt_json, seed, rerun, true AS created;

-- name: head_run
-- The latest judging of an eval (its highest rerun): same corpus, prompt and rubric fingerprints, the same panel in any order, the same scope (source, path, slug prefix), the same judges and the same repeats (read through to_jsonb, so a ledger from before repeats reads as 1).
SELECT r.id, r.completed_at, r.receipt_json, r.seed, r.rerun, false AS created
  FROM evalledger.eval_takes_quality_runs r
 WHERE r.corpus_sha8 = %(corpus_sha8)s AND r.prompt_sha8 = %(prompt_sha8)s
   AND r.rubric_sha8 = (SELECT left(b.fingerprint, 8) FROM evalledger.rubric b WHERE b.rubric_id = %(rubric_id)s)
   AND ARRAY(SELECT m FROM unnest(r.models) m ORDER BY m COLLATE "C")
     = ARRAY(SELECT m FROM unnest(%(models)s::text[]) m ORDER BY m COLLATE "C")
   AND r.corpus_source = %(corpus_source)s AND r.corpus_path IS NOT DISTINCT FROM %(corpus_path)s
   AND r.slug_prefix IS NOT DISTINCT FROM %(slug_prefix)s AND r.judges = %(judges)s
   AND coalesce((to_jsonb(r) ->> 'repeats')::int, 1) = %(repeats)s
 ORDER BY r.rerun DESC
 LIMIT 1;

-- name: run_state
-- One run as a claim finds it: complete or not, its receipt, seed and rerun.
SELECT r.id, r.completed_at, r.receipt_json, r.seed, r.rerun, false AS created
  FROM evalledger.eval_takes_quality_runs r WHERE r.id = %(run_id)s;

-- name: claim_run
-- Claim a run for this runner until the claim's transaction ends (never committed); waits while another runner holds it.
INSERT INTO evalledger.run_claim (suite, run_id) VALUES ('takes-quality', %(run_id)s);

-- name: current_calls
-- Each judge's current row in one cycle, per repeat (takes_quality_current_v1): answered, failed outside its content, or started (repeat_no through to_jsonb: 1 before repeats).
SELECT model, coalesce((to_jsonb(c) ->> 'repeat_no')::int, 1) AS repeat_no, contributes, error_kind, call_started,
       call_started OR error_kind IN ('provider_error', 'budget_exhausted') AS to_retry
  FROM evalledger.takes_quality_current_v1(%(run_id)s) c WHERE cycle = %(cycle)s;

-- name: insert_start
-- A judge call about to be sent, with the runner's estimate of its cost (counted if no answer follows).
INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, call_started,
                                                          estimated_cost_usd)
VALUES (%(run_id)s, %(cycle)s, %(model)s, false, true, %(estimated_cost_usd)s);

-- name: insert_verdict
-- One judge's verdict as the runner observed it; the database decides whether it contributes, and why not.
INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, structured, response_json,
                                                          raw_excerpt, error_kind, error_message, input_tokens,
                                                          output_tokens, cost_usd, latency_ms, attempts)
VALUES (%(run_id)s, %(cycle)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s)
ON CONFLICT ON CONSTRAINT eval_takes_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores;

-- name: insert_verdict_billed
-- One judge's verdict with its usage in every token class and the price it is billed at: the database decides
-- whether it contributes, and why not, and computes its cost. Without them, insert_verdict.
INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, structured, response_json,
                                                          raw_excerpt, error_kind, error_message, input_tokens,
                                                          output_tokens, cost_usd, latency_ms, attempts,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of)
VALUES (%(run_id)s, %(cycle)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s,
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s)
ON CONFLICT ON CONSTRAINT eval_takes_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores;

-- name: start_run_repeated
-- start_run for a run that asks each judge more than once (--repeats K, K > 1).
INSERT INTO evalledger.eval_takes_quality_runs (rubric_id, target_id, corpus_source, corpus_path, slug_prefix,
                                                sample_limit, seed, n_takes, corpus_sha8, prompt_sha8, models, judges,
                                                rerun, repeats)
VALUES (%(rubric_id)s, %(target_id)s, %(corpus_source)s, %(corpus_path)s, %(slug_prefix)s, %(sample_limit)s,
        %(seed)s, %(n_takes)s, %(corpus_sha8)s, %(prompt_sha8)s, %(models)s, %(judges)s, %(rerun)s, %(repeats)s)
ON CONFLICT ON CONSTRAINT eval_takes_quality_runs_identity_key DO NOTHING
RETURNING id, completed_at, receipt_json, seed, rerun, true AS created;

-- name: insert_start_repeat
-- insert_start for a repeat after the first (repeat_no > 1).
INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, repeat_no, recorded, call_started,
                                                          estimated_cost_usd)
VALUES (%(run_id)s, %(cycle)s, %(model)s, %(repeat_no)s, false, true, %(estimated_cost_usd)s);

-- name: insert_verdict_repeat
-- insert_verdict for a repeat after the first (repeat_no > 1).
INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, repeat_no, recorded, structured, response_json,
                                                          raw_excerpt, error_kind, error_message, input_tokens,
                                                          output_tokens, cost_usd, latency_ms, attempts)
VALUES (%(run_id)s, %(cycle)s, %(model)s, %(repeat_no)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s)
ON CONFLICT ON CONSTRAINT eval_takes_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores;

-- name: insert_verdict_billed_repeat
-- insert_verdict_billed for a repeat after the first (repeat_no > 1).
INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, repeat_no, recorded, structured, response_json,
                                                          raw_excerpt, error_kind, error_message, input_tokens,
                                                          output_tokens, cost_usd, latency_ms, attempts,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of)
VALUES (%(run_id)s, %(cycle)s, %(model)s, %(repeat_no)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s,
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s)
ON CONFLICT ON CONSTRAINT eval_takes_quality_judge_verdicts_once DO NOTHING
RETURNING model, contributes, error_kind, error_message, scores;
-- name: run_time_left
-- Seconds until an open run is abandoned (its rubric's open_run_days after it was recorded), by the database's clock.
SELECT extract(epoch FROM evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id) - now())::float8 AS left_s
  FROM evalledger.eval_takes_quality_runs r WHERE r.id = %(run_id)s;

-- name: run_calls
-- How a run's calls went: made one by one (sync), sent through a provider's batch API (batch: the requests of the run's batches the provider has, a batch written but never submitted sent nothing), and the prompt tokens the providers' caches served.
SELECT ((count(*) FILTER (WHERE NOT v.recorded AND NOT v.call_started AND v.attempts > 0))
        - (SELECT count(*) FROM evalledger.judge_batch_result r JOIN evalledger.judge_batch b USING (batch_id)
            WHERE b.suite = 'takes-quality' AND b.run_key = %(run_id)s::text))::integer AS sync,
       (SELECT count(*) FROM evalledger.judge_batch_request q JOIN evalledger.judge_batch b USING (batch_id)
         WHERE b.suite = 'takes-quality' AND b.run_key = %(run_id)s::text
           AND EXISTS (SELECT 1 FROM evalledger.judge_batch_event e
                        WHERE e.batch_id = b.batch_id AND e.status = 'submitted'))::integer AS batch,
       coalesce(sum(v.cached_input_tokens), 0)::integer AS cached_input_tokens
  FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = %(run_id)s;

-- name: receipt_uncertainty
-- A run's receipt as its disk copy and `--json` carry it: each dimension's optional stderr and ci95 (takes_quality_receipt_uncertainty_v1, as `show`), the stored receipt_json left as it is.
SELECT evalledger.takes_quality_receipt_uncertainty_v1(%(run_id)s, %(receipt)s::jsonb) AS receipt_json;

-- name: cycle_decision
-- What the database decides of one cycle so far (verdict, contributing models, panel size).
SELECT evalledger.takes_quality_cycle_v2(%(run_id)s, %(cycle)s) AS decision;

-- name: complete_run
-- Close an open run; the database computes the verdict and the receipt (NULL: no open run this role may read).
SELECT evalledger.takes_quality_complete_v1(%(run_id)s) AS receipt_json;

-- name: run_receipt
-- The receipt of one run (NULL while it is open).
SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE id = %(run_id)s;

-- name: open_receipt
-- The receipt of a run still open, as the database would write it (its `final` says whether completion would take it).
SELECT evalledger.takes_quality_receipt_v3(%(run_id)s) AS receipt_json;

-- name: receipt_by_shas
-- The receipt of the newest completed run with these four fingerprints, judged live or recorded.
SELECT receipt_json FROM evalledger.eval_takes_quality_runs
 WHERE corpus_sha8 = %(corpus_sha8)s AND prompt_sha8 = %(prompt_sha8)s AND models_sha8 = %(models_sha8)s
   AND rubric_sha8 = %(rubric_sha8)s AND completed_at IS NOT NULL
   AND coalesce(judges, receipt_json ->> 'judges') = %(judges)s
 ORDER BY completed_at DESC, id DESC
 LIMIT 1;

-- name: receipt_by_id
-- One run's receipt by its id (NULL while it is open) and whether it is complete.
SELECT receipt_json, completed_at IS NOT NULL AS complete FROM evalledger.eval_takes_quality_runs WHERE id = %(run_id)s;

-- name: trend
-- Completed runs and open ones past their deadline (abandoned, verdict fail, their cost so far: takes_quality_run_state_v1), newest rubric epoch first, newest run first within an epoch; judges: live, recorded or mixed.
SELECT r.id, coalesce(r.receipt_json ->> 'ts', to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS ts,
       b.version AS rubric_version, r.rubric_sha8, s.verdict, r.overall_score::float8 AS overall_score,
       coalesce(r.cost_usd, CASE WHEN EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = r.id)
                                 THEN (evalledger.takes_quality_receipt_v3(r.id) ->> 'cost_usd')::numeric ELSE 0 END)::float8 AS cost_usd,
       r.corpus_sha8, coalesce(r.receipt_json ->> 'judges', r.judges, 'live') AS judges, s.state
  FROM evalledger.eval_takes_quality_runs r
  JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
  JOIN evalledger.takes_quality_run_state_v1 s ON s.run_id = r.id
 WHERE (r.completed_at IS NOT NULL OR s.state = 'abandoned') AND (%(version)s::text IS NULL OR b.version = %(version)s)
 ORDER BY max(r.started_at) OVER (PARTITION BY r.rubric_id) DESC, r.rubric_id DESC, r.started_at DESC, r.id DESC
 LIMIT %(limit)s;

-- name: insert_take
-- One take of the corpus; a take already present (same content hash) is skipped.
INSERT INTO evalledger.take (take_sha, slug, kind, holder, weight, since, source, claim)
VALUES (%(take_sha)s, %(slug)s, %(kind)s, %(holder)s, %(weight)s, %(since)s, %(source)s, %(claim)s)
ON CONFLICT ON CONSTRAINT take_sha_key DO NOTHING;

-- name: sample_takes
-- A seeded sample of the corpus (slug prefix matched literally), in the order corpus.sample_key gives files.
SELECT slug, kind, holder, weight::float8 AS weight, since, source, claim
  FROM evalledger.take
 WHERE %(prefix)s::text IS NULL
    OR slug LIKE replace(replace(replace(%(prefix)s::text, '\', '\\'), '%%', '\%%'), '_', '\_') || '%%'
 ORDER BY md5(%(seed)s::text || ':' || take_sha) COLLATE "C", take_sha COLLATE "C"
 LIMIT %(limit)s;

-- name: cancel_run
-- Cancel an open run with a reason: recorded, and decided fail ("Abandoned: cancelled by ..."). Whether an open run this role may read was cancelled.
SELECT evalledger.eval_run_cancel_v1('takes-quality', %(run_id)s, %(reason)s) AS cancelled;

-- name: list_runs
-- takes-quality runs newest first, filtered by target, start time, verdict and state; the state and verdict as takes_quality_run_state_v1 reads them, so an open run past its deadline lists as abandoned, verdict fail, before anything closes it; judges says whether the replies were recorded, live or both.
SELECT r.id, r.target_id, r.started_at, r.completed_at, b.version AS rubric_version, r.n_takes, r.models,
       s.state, s.verdict, r.overall_score, r.cost_usd,
       coalesce(r.judges, CASE WHEN bool_and(v.recorded) THEN 'recorded' WHEN bool_or(v.recorded) THEN 'mixed'
                               WHEN count(v.verdict_id) > 0 THEN 'live' END) AS judges
  FROM evalledger.eval_takes_quality_runs r
  JOIN evalledger.rubric b USING (rubric_id)
  JOIN evalledger.takes_quality_run_state_v1 s ON s.run_id = r.id
  LEFT JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = r.id
 WHERE (%(target)s::text IS NULL OR r.target_id = %(target)s)
   AND (%(since)s::timestamptz IS NULL OR r.started_at >= %(since)s)
   AND (%(verdict)s::text IS NULL OR s.verdict = %(verdict)s)
   AND (%(state)s::text IS NULL OR s.state = %(state)s)
 GROUP BY r.id, b.version, s.state, s.verdict
 ORDER BY r.started_at DESC, r.id DESC
 LIMIT %(limit)s;

-- name: run_verdicts
-- One run's judge rows, cycle by cycle, repeat by repeat and retry by retry, with each judge's feedback and why it did not contribute.
SELECT cycle, model, coalesce((to_jsonb(v) ->> 'repeat_no')::int, 1) AS repeat_no, retry_no, family, same_family, recorded, contributes, call_started, error_kind, error_message,
       scores, feedback, improvements, cost_usd, estimated_cost_usd, latency_ms, attempts
  FROM evalledger.eval_takes_quality_judge_verdicts v
 WHERE run_id = %(run_id)s
 ORDER BY cycle, model, repeat_no, retry_no;

-- name: run_by_id
-- One takes-quality run, its state and deadline (takes_quality_run_state_v1) and its receipt (NULL while the run is open), each dimension's stderr and ci95 in it, and beside it each dimension's uncertainty: a completed run's as its completion stored it (eval_takes_quality_run_uncertainty), an open run's computed from its verdict rows so far (takes_quality_uncertainty_v1).
SELECT r.id, r.target_id, r.started_at, r.completed_at, s.deadline_at, s.state, b.version AS rubric_version,
       r.n_takes, r.models, s.verdict, s.verdict_message, r.overall_score, r.cost_usd,
       evalledger.takes_quality_receipt_uncertainty_v1(r.id, r.receipt_json) AS receipt_json,
       CASE WHEN r.completed_at IS NULL THEN evalledger.takes_quality_uncertainty_v1(r.id)
            ELSE nullif(x.uncertainty, '{}'::jsonb) END AS uncertainty
  FROM evalledger.eval_takes_quality_runs r
  JOIN evalledger.rubric b USING (rubric_id)
  JOIN evalledger.takes_quality_run_state_v1 s ON s.run_id = r.id
  LEFT JOIN evalledger.eval_takes_quality_run_uncertainty x ON x.run_id = r.id
 WHERE r.id = %(run_id)s;

-- name: dashboard_takes_quality_trend_v1
-- The takes_quality_trend_v1 panel, newest run first.
SELECT * FROM evalledger.takes_quality_trend_v1;

-- name: regress_threshold
-- The threshold `regress` compares with: the one given, else the database's default (seed 000's 0.5).
SELECT evalledger.takes_quality_threshold_v1(%(threshold)s::numeric) AS threshold;

-- name: gate
-- `regress`: a baseline receipt against a run as the ledger holds it, the gate decided and stored by the database (eval_gate_decision, by gate_decide_v2) in the mode asked for; its comparison holds the seed's regression and the paired rows.
INSERT INTO evalledger.eval_gate_decision (suite, mode, threshold, baseline_ref, current_ref, baseline, run_id)
VALUES ('takes-quality', %(mode)s, %(threshold)s::numeric, %(baseline_ref)s, %(current_ref)s, %(baseline)s, %(run_id)s)
RETURNING gate_id, decision, reasons, comparison;

-- name: dashboard_takes_quality_intervals_v1
-- The takes_quality_intervals_v1 panel: each aggregate's interval beside the verdict, newest first.
SELECT * FROM evalledger.takes_quality_intervals_v1 ORDER BY completed_at DESC;

-- name: dashboard_takes_quality_repeat_variance_v1
-- The takes_quality_repeat_variance_v1 panel: the judges' noise beside the items' variance, per rubric epoch and dimension.
SELECT * FROM evalledger.takes_quality_repeat_variance_v1 ORDER BY rubric_version, dimension;

-- name: dashboard_takes_quality_flaky_v1
-- The takes_quality_flaky_v1 panel: the runs whose judge repeats straddle a threshold of the rubric, newest first.
SELECT * FROM evalledger.takes_quality_flaky_v1 ORDER BY started_at DESC, run_id DESC, dimension, judge_model, cycle, rule;
