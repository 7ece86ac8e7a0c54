-- replay_decision_v1: a replay run's decision, its rationale and the figures they rest on, from its
-- stored query rows and its rubric (data): fail when more than pass_rule.adapter_failed_share_at_most
-- of the queries asked failed in the adapter; else inconclusive when fewer queries were replayed in
-- their captured mode than min_replayable, or than min_replayable_share of those asked (a brain
-- that declines or answers in another mode is not measured, and does not pass by it); else fail
-- when the mean recall is below mean_recall_at_least, when any query's recall is below
-- every_recall_at_least (the lowest named, by capture id, up to ten), or when the p95 of the
-- replayed latencies is more than p95_latency_ratio_at_most times the p95 of their captured
-- latencies (percentile_cont; not compared when the captured p95 is 0 ms); else inconclusive when
-- the retention purge took captured rows of the run before they were replayed (status
-- capture_purged: missing evidence never counts as met; counted and named, the lowest ten capture
-- ids, in every rationale and in the summary as capture_purged); pass otherwise. Those rows are not
-- queries asked: the shares above are of the others. Before all of these, a run closed unfinished
-- (fewer rows recorded than it planned: only a run left open past the hot tier, closed when a new
-- run of its request started, replay_run_admit_v1) is inconclusive, the rationale counting what it
-- recorded of its plan and saying why (the summary counts the rest as unrecorded). Figures are stored unrounded, in the shortest digits that read
-- back the same float8 (extra_float_digits pinned to 1: not the caller's setting, which any role may
-- change); the rationale shows them to three decimals. The decision trigger (replay_run_decide_v1) calls it, and so does
-- the ledger's recompute.
CREATE FUNCTION evalledger.replay_decision_v1(run evalledger.replay_run) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
DECLARE
    rule jsonb;
    need numeric;
    share numeric;
    failing boolean;
    f record;
    low text;
    reasons text[] := '{}';
    decision text;
    rationale text;
    purged text;
    unrecorded bigint;
BEGIN
    SELECT r.definition -> 'pass_rule', (r.definition ->> 'min_replayable')::numeric,
           (r.definition ->> 'min_replayable_share')::numeric INTO rule, need, share
      FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT count(*) FILTER (WHERE q.status <> 'capture_purged') AS asked,
           count(*) FILTER (WHERE q.status = 'capture_purged') AS capture_purged,
           count(*) FILTER (WHERE q.status = 'replayed') AS replayed,
           count(*) FILTER (WHERE q.status = 'not_replayable') AS not_replayable,
           count(*) FILTER (WHERE q.status = 'adapter_failed') AS adapter_failed,
           avg(q.recall) AS mean_recall,
           min(q.recall) AS min_recall,
           avg(q.jaccard) AS mean_jaccard,
           avg(q.rbo) AS mean_rbo,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.latency_ms) FILTER (WHERE q.status = 'replayed') AS p95_ms,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.captured_latency_ms)
               FILTER (WHERE q.status = 'replayed') AS captured_p95_ms,
           count(*) FILTER (WHERE cardinality(q.sources_lost) > 0) AS losing_a_source
      INTO f
      FROM evalledger.replay_query q WHERE q.replay_run_id = run.replay_run_id;
    IF f.capture_purged > 0 THEN
        SELECT format('%s captured %s the run planned %s purged by retention before %s replayed (%s)',
                      count(*), CASE WHEN count(*) = 1 THEN 'row' ELSE 'rows' END,
                      CASE WHEN count(*) = 1 THEN 'was' ELSE 'were' END,
                      CASE WHEN count(*) = 1 THEN 'it was' ELSE 'they were' END,
                      string_agg('capture ' || x.capture_id, ', ' ORDER BY x.capture_id) FILTER (WHERE x.n <= 10)
                      || CASE WHEN count(*) > 10 THEN format(' and %s more', count(*) - 10) ELSE '' END)
          INTO purged
          FROM (SELECT q.capture_id, row_number() OVER (ORDER BY q.capture_id) AS n
                  FROM evalledger.replay_query q
                 WHERE q.replay_run_id = run.replay_run_id AND q.status = 'capture_purged') x;
    END IF;

    unrecorded := run.planned - f.asked - f.capture_purged;
    failing := f.asked > 0 AND f.adapter_failed::numeric / f.asked > (rule ->> 'adapter_failed_share_at_most')::numeric;
    need := greatest(need, ceil(share * f.asked));
    IF unrecorded > 0 THEN
        decision := 'inconclusive';
        rationale := format('Inconclusive: closed unfinished, %s of the %s captured rows it planned recorded (%s '
                            'replayed in their captured mode): the run was left open past the hot tier, where no '
                            'runner can resume it, and a new run of the same request closed it.',
                            f.asked + f.capture_purged, run.planned, f.replayed);
    ELSIF NOT failing AND f.replayed < need THEN
        decision := 'inconclusive';
        rationale := format('Inconclusive: %s of %s queries replayed in their captured mode, at least %s needed '
                            '(%s not replayable, %s adapter failures).',
                            f.replayed, f.asked, need, f.not_replayable, f.adapter_failed);
        IF purged IS NOT NULL THEN
            rationale := rationale || format(' %s.', purged);
        END IF;
    ELSE
        IF f.mean_recall < (rule ->> 'mean_recall_at_least')::numeric THEN
            reasons := reasons || format('mean recall %s below %s', round(f.mean_recall, 3),
                                         rule ->> 'mean_recall_at_least');
        END IF;
        SELECT format('%s %s below %s: %s', count(*), CASE WHEN count(*) = 1 THEN 'query' ELSE 'queries' END,
                      rule ->> 'every_recall_at_least',
                      string_agg(format('capture %s (recall %s)', x.capture_id, round(x.recall, 3)), ', '
                                 ORDER BY x.recall, x.capture_id) FILTER (WHERE x.n <= 10)
                      || CASE WHEN count(*) > 10 THEN format(' and %s more', count(*) - 10) ELSE '' END)
          INTO low
          FROM (SELECT q.capture_id, q.recall, row_number() OVER (ORDER BY q.recall, q.capture_id) AS n
                  FROM evalledger.replay_query q
                 WHERE q.replay_run_id = run.replay_run_id AND q.status = 'replayed'
                   AND q.recall < (rule ->> 'every_recall_at_least')::numeric) x
        HAVING count(*) > 0;
        IF low IS NOT NULL THEN
            reasons := reasons || low;
        END IF;
        IF f.captured_p95_ms > 0
           AND f.p95_ms::numeric / f.captured_p95_ms::numeric > (rule ->> 'p95_latency_ratio_at_most')::numeric THEN
            reasons := reasons || format('p95 latency %sx the captured, above %sx',
                                         round(f.p95_ms::numeric / f.captured_p95_ms::numeric, 3),
                                         rule ->> 'p95_latency_ratio_at_most');
        END IF;
        IF failing THEN
            reasons := reasons || format('%s of %s queries failed in the adapter, above a share of %s',
                                         f.adapter_failed, f.asked, rule ->> 'adapter_failed_share_at_most');
        END IF;
        IF cardinality(reasons) > 0 THEN
            decision := 'fail';
            rationale := 'Fail: ' || array_to_string(reasons, '; ') || '.';
            IF purged IS NOT NULL THEN
                rationale := rationale || format(' %s.', purged);
            END IF;
        ELSIF purged IS NOT NULL THEN
            decision := 'inconclusive';
            rationale := format('Inconclusive: %s, and missing evidence never counts as met; the %s replayed '
                                'queries alone would pass (mean recall %s, lowest %s).',
                                purged, f.replayed, round(f.mean_recall, 3), round(f.min_recall, 3));
        ELSE
            decision := 'pass';
            rationale := format('Pass: mean recall %s over %s replayed queries, lowest %s; p95 latency %s.',
                                round(f.mean_recall, 3), f.replayed, round(f.min_recall, 3),
                                CASE WHEN f.captured_p95_ms > 0
                                     THEN round(f.p95_ms::numeric / f.captured_p95_ms::numeric, 3) || 'x the captured'
                                     ELSE 'not compared (captured p95 0 ms)' END);
        END IF;
        IF f.not_replayable + f.adapter_failed > 0 THEN
            rationale := rationale || format(' %s not replayable, %s adapter failures.', f.not_replayable,
                                             f.adapter_failed);
        END IF;
    END IF;
    RETURN jsonb_build_object(
        'decision', decision, 'rationale', rationale, 'asked', f.asked, 'replayed', f.replayed,
        'not_replayable', f.not_replayable, 'adapter_failed', f.adapter_failed,
        'mean_recall', f.mean_recall, 'min_recall', f.min_recall, 'mean_jaccard', f.mean_jaccard,
        'mean_rbo', f.mean_rbo, 'p95_latency_ms', f.p95_ms, 'captured_p95_latency_ms', f.captured_p95_ms,
        'p95_latency_ratio', CASE WHEN f.captured_p95_ms > 0 THEN f.p95_ms::numeric / f.captured_p95_ms::numeric END,
        'queries_losing_a_source', f.losing_a_source)
        || CASE WHEN f.capture_purged > 0 THEN jsonb_build_object('capture_purged', f.capture_purged)
                ELSE '{}'::jsonb END
        || CASE WHEN unrecorded > 0 THEN jsonb_build_object('unrecorded', unrecorded) ELSE '{}'::jsonb END;
END;
$$;
