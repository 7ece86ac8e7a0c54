-- purgeable_v1: true when a ledger row is past the purge horizon (measured from its run's
-- started_at, so a run and its rows expire together) and no unreleased legal hold covers its run.
-- A released hold (released_at, or a legal_hold_release row) expires with its run, and its release
-- with it: their foreign keys would otherwise keep the run forever.
CREATE FUNCTION evalledger.purgeable_v1(table_name text, r jsonb) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.started_at
          FROM evalledger.brain_eval_log l
         WHERE (table_name IN ('brain_eval_log', 'brain_eval_question_score', 'legal_hold')
                AND l.eval_run_id = (r ->> 'eval_run_id')::uuid)
            OR (table_name = 'brain_analysis_log'
                AND l.eval_run_id IN (SELECT q.eval_run_id FROM evalledger.brain_eval_question_score q
                                       WHERE q.brain_analysis_id = (r ->> 'analysis_id')::uuid))
    )
    SELECT CASE table_name
             WHEN 'brain_analysis_log' THEN (r ->> 'produced_at')::timestamptz < now() - evalledger.purge_horizon_v1()
             WHEN 'legal_hold' THEN ((r ->> 'released_at') IS NOT NULL
                                     OR EXISTS (SELECT 1 FROM evalledger.legal_hold_release x
                                                 WHERE x.hold_id = (r ->> 'hold_id')::bigint))
                                    AND EXISTS (SELECT 1 FROM runs)
             -- only as its hold goes (ON DELETE CASCADE, the hold's deletion checked): never alone
             WHEN 'legal_hold_release' THEN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h
                                                         WHERE h.hold_id = (r ->> 'hold_id')::bigint)
             ELSE EXISTS (SELECT 1 FROM runs)
           END
       AND NOT EXISTS (SELECT 1 FROM runs WHERE started_at >= now() - evalledger.purge_horizon_v1())
       AND NOT EXISTS (SELECT 1 FROM runs JOIN evalledger.legal_hold h USING (eval_run_id)
                        WHERE h.released_at IS NULL
                          AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id));
$$;
