-- work_quality_document_v1: a completed run's snapshot as the seed's Snapshot JSON (field names and
-- shapes of seed 003; an empty string stands for a field Go leaves out), built from the rows:
-- the contributing verdicts in panel order, the means, spreads, note and comparison the
-- completion computed. The runner writes the file from this document and nothing else. With
-- repeats (--repeats K) each contributing repeat is a verdict of the list, in repeat order after
-- its judge's place in the panel (the seed's shape: a judge may appear more than once).
CREATE FUNCTION evalledger.work_quality_document_v1(s evalledger.eval_work_quality_snapshots) RETURNS jsonb
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
