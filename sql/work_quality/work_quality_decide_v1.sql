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
CREATE FUNCTION evalledger.work_quality_decide_v1(snap evalledger.eval_work_quality_snapshots)
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
