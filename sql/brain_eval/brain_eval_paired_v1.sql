-- brain_eval_paired_v1: run B against run A over the questions both have (the unit of sampling is the
-- question; a question is shared when both runs have a row with its question_id and the measure
-- applies to it in both), one paired_object_v1 per measure, in this order: question_passed (1 pass,
-- 0 fail; McNemar's exact p), citation_rate, hallucination_rate (each question's hallucinations over
-- its claims, for questions with claims), staleness_recognised (stale-fixture questions, 0/1),
-- diagnosis_accuracy, levers_mapped (no lever violation, 0/1), confidence_in_band (0/1, each run's
-- rubric band) and narrative_coherence (1-5). The differences are B - A. The rows are read as the
-- caller may read them (a reviewer's own runs, the runner's hot tier); a run the caller cannot read
-- has no questions, and every item of the other shows in its only_a or only_b.
-- docs/statistics.md, "Paired comparisons and gates".
CREATE FUNCTION evalledger.brain_eval_paired_v1(run_a uuid, run_b uuid) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH q AS (
        SELECT x.side, s.question_id::text AS item,
               s.question_passed::int::float8 AS passed, s.citation_rate::float8 AS citation,
               CASE WHEN s.total_claims > 0 THEN s.hallucinations_detected::float8 / s.total_claims END AS hallucination,
               CASE WHEN s.uses_stale_fixture THEN s.staleness_correctly_recognized::int::float8 END AS stale,
               s.diagnosis_accuracy_score::float8 AS diagnosis,
               (s.lever_mapping_violations = 0)::int::float8 AS levers,
               evalledger.confidence_in_band_v1(s.confidence_distribution, r.definition -> 'confidence_band')::int::float8
                   AS in_band,
               s.narrative_coherence_rating::float8 AS coherence
          FROM (VALUES ('a', run_a), ('b', run_b)) x(side, run)
          JOIN evalledger.brain_eval_question_score s ON s.eval_run_id = x.run
          JOIN evalledger.brain_eval_log l ON l.eval_run_id = s.eval_run_id
          JOIN evalledger.rubric r ON r.rubric_id = l.rubric_id),
    k (n, key) AS (
        VALUES (1, 'question_passed'), (2, 'citation_rate'), (3, 'hallucination_rate'), (4, 'staleness_recognised'),
               (5, 'diagnosis_accuracy'), (6, 'levers_mapped'), (7, 'confidence_in_band'), (8, 'narrative_coherence')),
    m AS (
        SELECT k.n, k.key, q.side, q.item,
               CASE k.key WHEN 'question_passed' THEN q.passed WHEN 'citation_rate' THEN q.citation
                          WHEN 'hallucination_rate' THEN q.hallucination WHEN 'staleness_recognised' THEN q.stale
                          WHEN 'diagnosis_accuracy' THEN q.diagnosis WHEN 'levers_mapped' THEN q.levers
                          WHEN 'confidence_in_band' THEN q.in_band ELSE q.coherence END AS v
          FROM q CROSS JOIN k)
    SELECT coalesce(jsonb_agg(evalledger.paired_object_v1(k.key, a.items, a.vals, b.items, b.vals) ORDER BY k.n), '[]')
      FROM k
      LEFT JOIN LATERAL (SELECT array_agg(m.item ORDER BY m.item) AS items, array_agg(m.v ORDER BY m.item) AS vals
                           FROM m WHERE m.key = k.key AND m.side = 'a' AND m.v IS NOT NULL) a ON true
      LEFT JOIN LATERAL (SELECT array_agg(m.item ORDER BY m.item) AS items, array_agg(m.v ORDER BY m.item) AS vals
                           FROM m WHERE m.key = k.key AND m.side = 'b' AND m.v IS NOT NULL) b ON true
$$;
GRANT EXECUTE ON FUNCTION brain_eval_paired_v1(uuid, uuid)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
