-- brain_eval_uncertainty_v1: beside a run's decision (never changing it), each of the seven
-- aggregates of brain_eval_scores_v1 with its uncertainty (uncertainty_v1's object), computed from
-- the run's question rows as the reader may read them. The unit of sampling is the question,
-- clustered by question_type (docs/statistics.md, "brain-eval"):
--   citation_rate, diagnosis_accuracy_mean, narrative_coherence_mean: the mean over the questions
--     that have the score, clustered_stderr_v1 by question_type ('clustered'), or the plain
--     mean_stderr_v1 when the questions are all of one type ('mean');
--   staleness_recognition_rate, lever_mapping_correctness, confidence_calibration_in_band: the
--     proportion of questions, as a mean of 0/1 the same way, with wilson_interval_v1's exact bound
--     when every question passed or failed;
--   hallucination_rate: the claims' ratio sum(hallucinations_detected) / sum(total_claims),
--     ratio_stderr_v1 clustered by question ('ratio'; n the claims, clusters the questions), with
--     the exact bound over the claims at 0 of n and n of n.
-- Intervals are cut to the scale (0-1; 1-5 for narrative coherence). An aggregate measured under a
-- hard criterion of the run's rubric also carries "criterion": {"op", "threshold", "bound"}, bound
-- being the interval's side that matters (the upper bound for <=, the lower for >=). An aggregate
-- with nothing to measure is null, as in aggregated_scores. The question rows go to the statistics
-- functions in the order of their question_id, byte by byte (COLLATE "C"), never in the order a plan
-- reads them: the same rows give the same bits to the completion, the auditor and the recompute
-- (docs/statistics.md, "Order of summation").
CREATE FUNCTION evalledger.brain_eval_uncertainty_v1(run_id uuid) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH run AS (
        SELECT r.definition AS policy
          FROM evalledger.brain_eval_log l JOIN evalledger.rubric r ON r.rubric_id = l.rubric_id
         WHERE l.eval_run_id = run_id),
    q AS (
        SELECT s.question_id::text AS item, s.question_type::text AS kind, s.citation_rate::float8 AS citation,
               s.hallucinations_detected::float8 AS bad, s.total_claims::float8 AS claims,
               CASE WHEN s.uses_stale_fixture THEN s.staleness_correctly_recognized::int::float8 END AS stale,
               s.diagnosis_accuracy_score::float8 AS diagnosis,
               (s.lever_mapping_violations = 0)::int::float8 AS levers,
               evalledger.confidence_in_band_v1(s.confidence_distribution, run.policy -> 'confidence_band')::int::float8 AS in_band,
               s.narrative_coherence_rating::float8 AS coherence
          FROM evalledger.brain_eval_question_score s, run
         WHERE s.eval_run_id = run_id),
    a AS (
        SELECT array_agg(q.item ORDER BY q.item COLLATE "C") AS items,
               array_agg(q.kind ORDER BY q.item COLLATE "C") AS kinds,
               array_agg(q.citation ORDER BY q.item COLLATE "C") AS citation,
               array_agg(q.bad ORDER BY q.item COLLATE "C") AS bad,
               array_agg(q.claims ORDER BY q.item COLLATE "C") AS claims,
               array_agg(q.stale ORDER BY q.item COLLATE "C") AS stale,
               array_agg(q.diagnosis ORDER BY q.item COLLATE "C") AS diagnosis,
               array_agg(q.levers ORDER BY q.item COLLATE "C") AS levers,
               array_agg(q.in_band ORDER BY q.item COLLATE "C") AS in_band,
               array_agg(q.coherence ORDER BY q.item COLLATE "C") AS coherence
          FROM q),
    -- One row per aggregate: its key, estimate, standard error, n, clusters, method, successes of
    -- trials (proportions), the scale.
    measured AS (
        SELECT k.key, k.vals, k.lo_limit, k.hi_limit, k.proportion,
               coalesce(c.stderr, m.stderr) AS stderr, c.estimate, c.n, c.cluster_count,
               CASE WHEN c.cluster_count >= 2 THEN 'clustered' ELSE 'mean' END AS method
          FROM a CROSS JOIN LATERAL (VALUES
                   ('citation_rate', a.citation, 0.0::float8, 1.0::float8, false),
                   ('staleness_recognition_rate', a.stale, 0, 1, true),
                   ('diagnosis_accuracy_mean', a.diagnosis, 0, 1, false),
                   ('lever_mapping_correctness', a.levers, 0, 1, true),
                   ('confidence_calibration_in_band', a.in_band, 0, 1, true),
                   ('narrative_coherence_mean', a.coherence, 1, 5, false)) k(key, vals, lo_limit, hi_limit, proportion)
         CROSS JOIN LATERAL evalledger.clustered_stderr_v1(k.vals, a.kinds) c
         CROSS JOIN LATERAL evalledger.mean_stderr_v1(k.vals) m),
    objects AS (
        SELECT m.key, evalledger.uncertainty_v1(
                   m.estimate, m.stderr, m.n, m.cluster_count, m.method,
                   CASE WHEN m.proportion THEN m.estimate * m.n END, CASE WHEN m.proportion THEN m.n END,
                   m.lo_limit, m.hi_limit) AS u
          FROM measured m
        UNION ALL
        SELECT 'hallucination_rate', evalledger.uncertainty_v1(
                   r.estimate, r.stderr, r.n, r.cluster_count, 'ratio',
                   (SELECT sum(b.b ORDER BY b.i) FROM unnest(a.bad) WITH ORDINALITY b(b, i)), r.n, 0, 1)
          FROM a CROSS JOIN LATERAL evalledger.ratio_stderr_v1(a.bad, a.claims, a.items) r)
    SELECT jsonb_object_agg(o.key,
               CASE WHEN o.u IS NOT NULL AND h.criterion IS NOT NULL
                    THEN o.u || jsonb_build_object('criterion', jsonb_build_object(
                             'op', h.criterion -> 'op', 'threshold', h.criterion -> 'threshold',
                             'bound', o.u -> 'ci95' -> (CASE WHEN h.criterion ->> 'op' = '<=' THEN 1 ELSE 0 END)))
                    ELSE o.u END)
      FROM objects o
      LEFT JOIN LATERAL (SELECT c AS criterion FROM run, jsonb_array_elements(run.policy -> 'hard_criteria') c
                          WHERE c ->> 'key' = o.key LIMIT 1) h ON true
$$;
GRANT EXECUTE ON FUNCTION brain_eval_uncertainty_v1(uuid)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
