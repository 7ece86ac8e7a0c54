-- ledger_recompute_work_quality_v2: a completed work-quality run's computed columns, re-derived
-- from its verdict rows: the means and spreads over the contributing judges, the note, what the
-- judges cost, the comparison with the previous snapshot (work_quality_compare_v1) and the document
-- (work_quality_document_v1), as work_quality_snapshot_decide_v3 computes them at completion (a skipped
-- judge is noted by its current row, and a call its runner lost counts its estimate). The
-- comparison and the document are the trigger's own functions; the means, spreads, note and cost
-- the trigger computes inline, so they are restated here, statement for statement, and the tests
-- hold the two equal on every completed snapshot until the trigger calls a shared function. The
-- one place the ledger's recompute names work-quality's decision. A closed snapshot's note is its
-- closure's rationale (eval_run_closure; issue 37, item 2), as the trigger writes it.
CREATE FUNCTION evalledger.ledger_recompute_work_quality_v2(snap evalledger.eval_work_quality_snapshots) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s evalledger.eval_work_quality_snapshots := snap;
    dims text[];
    contributing integer;
    prev_mean jsonb;
BEGIN
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = s.snapshot_id AND v.contributes;
    dims := ARRAY(SELECT d ->> 'key' FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                   WHERE r.rubric_id = s.rubric_id ORDER BY n);
    SELECT jsonb_object_agg(d, a.mean), CASE WHEN contributing >= 2 THEN jsonb_object_agg(d, a.spread) END
      INTO s.mean_scores, s.disagreement
      FROM unnest(dims) d
     CROSS JOIN LATERAL (
            SELECT trim_scale(avg((v.scores ->> d)::numeric)) AS mean,
                   trim_scale(max((v.scores ->> d)::numeric) - min((v.scores ->> d)::numeric)) AS spread
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes) a;
    SELECT coalesce(string_agg(line, '; ' ORDER BY p, k), '') INTO s.note
      FROM (SELECT array_position(s.models, v.model) AS p, 1 AS k,
                   format('judge %s skipped: %s%s', v.model, v.error_kind, coalesce(': ' || v.error_message, '')) AS line
              FROM evalledger.work_quality_current_v1(s.snapshot_id) v
             WHERE NOT v.contributes
            UNION ALL
            SELECT array_position(s.models, v.model), 2,
                   format('judge %s shares the assessed run''s family (%s)', v.model, v.family)
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.same_family
            UNION ALL
            SELECT 0, 0, 'recorded replies shipped with evalledger, not live calls: '
                         || string_agg(v.model, ', ' ORDER BY array_position(s.models, v.model))
              FROM evalledger.eval_work_quality_judge_verdicts v
             WHERE v.snapshot_id = s.snapshot_id AND v.contributes AND v.recorded
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
                   coalesce(lead(v.call_started) OVER (PARTITION BY v.model ORDER BY v.retry_no), false) AS restarted
              FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = s.snapshot_id) c;
    IF EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id) THEN
        s.mean_scores := jsonb_strip_nulls(s.mean_scores);
        SELECT evalledger.brain_eval_abandoned_v1(c.closure, c.reason, c.closed_by) INTO s.note
          FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id;
    END IF;
    s.snapshot_json := evalledger.work_quality_document_v1(s);
    RETURN jsonb_build_object('mean_scores', s.mean_scores, 'disagreement', s.disagreement, 'note', s.note,
                              'comparison', s.comparison, 'judges_cost_usd', s.judges_cost_usd,
                              'snapshot_json', s.snapshot_json);
END;
$$;
