-- Replay runs decided on the rows their plan counted, and every replayed query's status recomputed
-- (issue 40; found by an insider review of the replay suite).
--
-- A ledger window's plan is the database's: at the run's start it counts the newest max_rows captured
-- rows of the window that the runner may read (planned). But replay_query_admit_v1 admitted any
-- captured row of the window, as many as the runner liked: a run planned on one row was decided on
-- five, and a run planned on the newest three (which the brain now fails) passed on three older ones
-- the runner chose instead. A replayed query of a ledger window must now be one the run planned: fewer
-- than `planned` rows of its window are newer (created_at, then id: the order the runner asks them
-- and the purge records them in). A file's rows are the runner's, as before.
--
-- ledger_recompute_v3 compared a replayed query's recall, jaccard and rbo only, and only where its
-- stored status said replayed: a failing query rewritten to not_replayable, its measures nulled, its
-- run's decision rewritten to what the rest decide, was not named by `ledger verify --recompute`,
-- which docs/ledger.md promises catches a rewritten computed column whose inputs were left as they
-- were. The status and every measure now come from one function (replay_query_measured_v1), which
-- the admission stores and the recompute compares every query of a completed run with.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- replay_query_measured_v1: what the database decides of a replayed query from what it stores of
-- it (the captured fields, what the adapter did and returned) and its run's rubric's rbo_p: its
-- status (an answer in the captured mode is replayed, an answer in another mode or a decline is
-- not replayable, a failure is an adapter failure, the purge's row is purged) and, replayed only,
-- its recall, Jaccard, rank-biased overlap, sources gained and lost, and latency ratio (NULL when
-- the captured latency was 0), unrounded. One home for the rule: replay_query_admit_v1 stores what
-- it returns, and ledger_recompute_v3 compares every stored query with it again.
CREATE FUNCTION evalledger.replay_query_measured_v1(
    q evalledger.replay_query, rbo_p numeric,
    OUT status text, OUT recall numeric, OUT jaccard numeric, OUT rbo numeric, OUT sources_gained text[],
    OUT sources_lost text[], OUT latency_ratio numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.status,
           CASE WHEN s.replayed THEN evalledger.replay_recall_v1(q.captured_slugs, q.retrieved_slugs) END,
           CASE WHEN s.replayed THEN evalledger.replay_jaccard_v1(q.captured_slugs, q.retrieved_slugs) END,
           CASE WHEN s.replayed THEN evalledger.replay_rbo_v1(q.captured_chunk_ids, q.retrieved_chunk_ids, rbo_p) END,
           CASE WHEN s.replayed THEN ARRAY(SELECT DISTINCT x COLLATE "C" FROM unnest(q.source_ids) x
                                            WHERE x <> ALL (q.captured_source_ids) ORDER BY 1) END,
           CASE WHEN s.replayed THEN ARRAY(SELECT DISTINCT x COLLATE "C" FROM unnest(q.captured_source_ids) x
                                            WHERE x <> ALL (q.source_ids) ORDER BY 1) END,
           CASE WHEN s.replayed AND q.captured_latency_ms > 0
                THEN q.latency_ms::numeric / q.captured_latency_ms::numeric END
      FROM (SELECT d.status, d.status = 'replayed' AS replayed
              FROM (SELECT CASE WHEN q.outcome = 'capture_purged' THEN 'capture_purged'
                                WHEN q.outcome = 'adapter_failed' THEN 'adapter_failed'
                                WHEN q.outcome = 'answered' AND q.vector_enabled = q.captured_vector_enabled
                                    THEN 'replayed'
                                ELSE 'not_replayable' END AS status) d) s
$$;

CREATE OR REPLACE FUNCTION evalledger.replay_query_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.replay_run;
    cap evalledger.eval_candidates;
    purged boolean := NEW.outcome = 'capture_purged';
    readable boolean;
BEGIN
    -- FOR SHARE, as takes_quality_verdict_admit_v2: a completion waits for this row, or this row for
    -- the completion (and then sees it), so no query lands after the decision.
    SELECT * INTO run FROM evalledger.replay_run r WHERE r.replay_run_id = NEW.replay_run_id FOR SHARE;
    IF purged THEN
        IF NOT evalledger.capture_purging_v1() OR run.source IS DISTINCT FROM 'ledger' THEN
            RAISE EXCEPTION 'evalledger: only the retention purge records a captured row it takes (outcome capture_purged)'
                USING ERRCODE = 'insufficient_privilege', COLUMN = 'outcome';
        END IF;
        IF run.completed_at IS NOT NULL THEN
            RETURN NULL;  -- completed whole meanwhile: nothing of it is missing
        END IF;
    END IF;
    -- Whether the caller may read the run and (a ledger window's) captured row, asked once: what a
    -- caller reads of a clock it reads of every later one (a tier is a lower bound), so the older of
    -- the two answers for both; only when it does not is each asked again, for its own refusal.
    readable := purged OR evalledger.caller_reads_v1(
        least(run.created_at, CASE WHEN run.source = 'ledger' THEN NEW.capture_created_at END), NULL);
    IF run.replay_run_id IS NULL OR run.completed_at IS NOT NULL
       OR NOT (readable OR evalledger.caller_reads_v1(run.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no open replay run % takes replayed queries', NEW.replay_run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'replay_run_id';
    END IF;
    PERFORM evalledger.refuse_supplied_v1(
        'replay_query',
        jsonb_build_object('status', NEW.status, 'recall', NEW.recall, 'jaccard', NEW.jaccard, 'rbo', NEW.rbo,
                           'sources_gained', NEW.sources_gained, 'sources_lost', NEW.sources_lost,
                           'latency_ratio', NEW.latency_ratio));
    IF run.source = 'ledger' THEN
        PERFORM evalledger.refuse_supplied_v1(
            'replay_query',
            jsonb_build_object('tool_name', NEW.tool_name, 'captured_slugs', NEW.captured_slugs,
                               'captured_chunk_ids', NEW.captured_chunk_ids,
                               'captured_source_ids', NEW.captured_source_ids,
                               'captured_vector_enabled', NEW.captured_vector_enabled,
                               'captured_expand_enabled', NEW.captured_expand_enabled,
                               'captured_detail', NEW.captured_detail,
                               'captured_latency_ms', NEW.captured_latency_ms));
        SELECT * INTO cap FROM evalledger.eval_candidates c
         WHERE c.created_at = NEW.capture_created_at AND c.id = NEW.capture_id
           AND (run.since_at IS NULL OR c.created_at >= run.since_at) AND c.created_at < run.until_at
           AND (run.tool IS NULL OR c.tool_name = run.tool) AND (run.remote IS NULL OR c.remote = run.remote)
           AND (readable OR evalledger.caller_reads_v1(c.created_at, NULL));
        IF cap.id IS NULL THEN
            -- The purge took it while this insert waited for its lock, and recorded it for the run.
            IF EXISTS (SELECT 1 FROM evalledger.replay_query q
                        WHERE q.replay_run_id = NEW.replay_run_id AND q.capture_id = NEW.capture_id
                          AND q.status = 'capture_purged') THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION 'evalledger: captured row % (at %) is not one of replay run %''s window',
                    NEW.capture_id, NEW.capture_created_at, NEW.replay_run_id
                USING ERRCODE = 'foreign_key_violation', COLUMN = 'capture_id';
        END IF;
        -- One the run planned: fewer than `planned` rows of its window are newer. Every newer row is
        -- one the caller reads too (a tier is a lower bound), and no row is added to a window once it
        -- started (it ends at the export bound) nor taken from its newer end (the purge takes the
        -- oldest months), so this is the plan the run's start counted, whichever role asks.
        IF (SELECT count(*) FROM (
                SELECT 1 FROM evalledger.eval_candidates c
                 WHERE (c.created_at, c.id) > (cap.created_at, cap.id) AND c.created_at < run.until_at
                   AND (run.tool IS NULL OR c.tool_name = run.tool) AND (run.remote IS NULL OR c.remote = run.remote)
                 LIMIT run.planned) newer) >= run.planned THEN
            RAISE EXCEPTION 'evalledger: captured row % (at %) is not one replay run % planned: it replays the newest % '
                            'of its window', NEW.capture_id, NEW.capture_created_at, NEW.replay_run_id, run.planned
                USING ERRCODE = 'check_violation', COLUMN = 'capture_id', CONSTRAINT = 'replay_query_planned';
        END IF;
        NEW.tool_name := cap.tool_name;
        NEW.captured_slugs := cap.retrieved_slugs;
        NEW.captured_chunk_ids := cap.retrieved_chunk_ids;
        NEW.captured_source_ids := cap.source_ids;
        NEW.captured_vector_enabled := cap.vector_enabled;
        NEW.captured_expand_enabled := cap.expand_enabled;
        NEW.captured_detail := cap.detail;
        NEW.captured_latency_ms := cap.latency_ms;
    END IF;

    SELECT m.status, m.recall, m.jaccard, m.rbo, m.sources_gained, m.sources_lost, m.latency_ratio
      INTO NEW.status, NEW.recall, NEW.jaccard, NEW.rbo, NEW.sources_gained, NEW.sources_lost, NEW.latency_ratio
      FROM evalledger.replay_query_measured_v1(
               NEW, (SELECT (r.definition ->> 'rbo_p')::numeric FROM evalledger.rubric r
                      WHERE r.rubric_id = run.rubric_id)) m;
    IF NEW.outcome = 'answered' AND NEW.status = 'not_replayable' THEN
        NEW.error := coalesce(NEW.error, format('answered with vector_enabled %s, captured %s: another mode, not counted',
                                                NEW.vector_enabled::text, NEW.captured_vector_enabled::text));
    END IF;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION evalledger.ledger_recompute_v3()
RETURNS TABLE (table_name text, row_key text, column_name text, stored text, recomputed text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
    -- Each completed brain-eval run and its uncertainty, derived once: the run is compared with its row, and
    -- its stored uncertainty and trend row with what the two derive.
    WITH brain_run AS MATERIALIZED (
        SELECT l AS stored, evalledger.ledger_recompute_brain_eval_v2(l) AS now_is,
               coalesce(evalledger.brain_eval_uncertainty_v1(l.eval_run_id), '{}'::jsonb) AS uncertainty
          FROM evalledger.brain_eval_log l WHERE l.completed_at IS NOT NULL
    ), decided (table_name, row_key, was, now_is, columns) AS (
        SELECT 'brain_eval_log', evalledger.journal_key_v1(r.stored), to_jsonb(r.stored), r.now_is,
               ARRAY['aggregated_scores', 'hard_criteria_passed', 'soft_criteria_passed_count', 'decision',
                     'decision_rationale', 'token_cost_usd', 'reviewer_hours_spent', 'calibration_notes']
          FROM brain_run r
        UNION ALL
        SELECT 'brain_eval_question_score', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object('question_passed', evalledger.brain_eval_question_verdict_v1(
                   q, evalledger.brain_eval_question_policy_v2(q.eval_run_id, q.question_id))),
               ARRAY['question_passed']
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.completed_at IS NOT NULL
        UNION ALL
        -- Every completed run's stored uncertainty and trend row (its key: the run's). A run completed
        -- without one is named by its key column, stored null. A trend row is compared in what its
        -- completion derived (the decision, the aggregates and their bounds) with brain_eval_trend_of_v1 of
        -- the run and its uncertainty as recomputed, so a rewritten run or interval is named there and not in
        -- the copy; what it copies as it is (the run's trigger, times, prompt, reviewer) the journal holds.
        SELECT 'brain_eval_run_uncertainty', evalledger.journal_key_v1(r.stored), to_jsonb(u),
               jsonb_build_object('eval_run_id', (r.stored).eval_run_id, 'uncertainty', r.uncertainty),
               CASE WHEN u.eval_run_id IS NULL THEN ARRAY['eval_run_id'] ELSE ARRAY['uncertainty'] END
          FROM brain_run r LEFT JOIN evalledger.brain_eval_run_uncertainty u ON u.eval_run_id = (r.stored).eval_run_id
        UNION ALL
        SELECT 'brain_eval_trend', evalledger.journal_key_v1(r.stored), to_jsonb(t),
               to_jsonb(evalledger.brain_eval_trend_of_v1(jsonb_populate_record(r.stored, r.now_is), r.uncertainty)),
               CASE WHEN t.eval_run_id IS NULL THEN ARRAY['eval_run_id']
                    ELSE ARRAY['decision', 'citation_rate', 'hallucination_rate', 'staleness_recognition_rate',
                               'diagnosis_accuracy_mean', 'lever_mapping_correctness', 'confidence_calibration_in_band',
                               'narrative_coherence_mean', 'citation_rate_ci95_lo', 'citation_rate_ci95_hi',
                               'hallucination_rate_ci95_lo', 'hallucination_rate_ci95_hi',
                               'staleness_recognition_rate_ci95_lo', 'staleness_recognition_rate_ci95_hi',
                               'diagnosis_accuracy_mean_ci95_lo', 'diagnosis_accuracy_mean_ci95_hi',
                               'lever_mapping_correctness_ci95_lo', 'lever_mapping_correctness_ci95_hi',
                               'confidence_calibration_in_band_ci95_lo', 'confidence_calibration_in_band_ci95_hi',
                               'narrative_coherence_mean_ci95_lo', 'narrative_coherence_mean_ci95_hi'] END
          FROM brain_run r LEFT JOIN evalledger.brain_eval_trend t ON t.eval_run_id = (r.stored).eval_run_id
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
        -- Every query of a completed run, whatever its status says: a status rewritten away from
        -- replayed (its measures nulled with it) is named as surely as a rewritten measure.
        SELECT 'replay_query', evalledger.journal_key_v1(q), to_jsonb(q),
               to_jsonb(evalledger.replay_query_measured_v1(q, (b.definition ->> 'rbo_p')::numeric)),
               ARRAY['status', 'recall', 'jaccard', 'rbo', 'sources_gained', 'sources_lost', 'latency_ratio']
          FROM evalledger.replay_run r JOIN evalledger.replay_query q USING (replay_run_id)
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         WHERE r.completed_at IS NOT NULL
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
