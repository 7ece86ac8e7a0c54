-- The trend panel's error bars in the rows it reads (issue 36, item 3 and its measure). The panel read
-- each run's row and joined its stored uncertainty (brain_eval_run_uncertainty, 0148), taking
-- fourteen numbers out of a JSON document for every run shown: with its bars it cost 1.4x to 1.5x the
-- panel without them (bench/panels.py), where the issue asks at most 1.25x. Each completed run now
-- gets a trend row at its completion (brain_eval_trend: the columns the trend shows and each
-- aggregate's 95% interval, one row per run, read newest first through one index), copied by the
-- database from the run's row and its stored uncertainty (brain_eval_trend_of_v1), never input:
-- append-only, journalled, aged with its run (the retention functions list it), and compared with the
-- two rows again by the ledger's recompute (ledger_recompute_v3). The panel reads brain_trend_rows_v2:
-- v1's rows and columns with ci95_lo and ci95_hi, an open run past its deadline (abandoned, decided
-- fail) still from its own row. brain_trend_rows_v1 stays as it is (BI tools call it). Runs completed
-- before this migration get their trend rows here, copied by the same function (journalled as
-- INSERTs). What each reader may read is unchanged: the same readers as the run's own row.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- Each completed brain-eval run's trend row (issue 36, item 3; migration 0164): what the trend panel
-- shows of it (its trigger, when it ran, the prompt and catalog, the decision, seed 002's seven
-- aggregates as numbers) and beside them each aggregate's 95% interval, the error bars, in one row
-- the panel reads through one index, newest first. Before, the panel read the run's row and joined
-- its stored uncertainty, taking fourteen numbers out of a JSON document for every run shown: the
-- bars cost 1.4x to 1.5x the panel without them (bench/panels.py). Every column is a copy the
-- database makes at completion from two stored rows (brain_eval_trend_of_v1: the run's own row
-- and brain_eval_run_uncertainty), never input: only the completion trigger writes it (no role holds
-- INSERT), append-only, journalled, aged with its run (the run's tier clock), and compared with
-- those rows again by the ledger's recompute (ledger_recompute_v3). The bounds are double precision,
-- one column each: canon-v1 has a form for that and none for an array of it.
CREATE TABLE brain_eval_trend (
    eval_run_id                             uuid             NOT NULL,
    brain_under_test                        varchar(16)      NOT NULL,
    run_trigger                             text             NOT NULL,
    started_at                              timestamptz      NOT NULL,
    completed_at                            timestamptz      NOT NULL,
    model_id                                varchar(64)      NOT NULL,
    system_prompt_hash                      varchar(64)      NOT NULL,
    question_catalog_version                varchar(32)      NOT NULL,
    decision                                eval_decision,
    citation_rate                           numeric,
    hallucination_rate                      numeric,
    staleness_recognition_rate              numeric,
    diagnosis_accuracy_mean                 numeric,
    lever_mapping_correctness               numeric,
    confidence_calibration_in_band          numeric,
    narrative_coherence_mean                numeric,
    citation_rate_ci95_lo                   double precision,
    citation_rate_ci95_hi                   double precision,
    hallucination_rate_ci95_lo              double precision,
    hallucination_rate_ci95_hi              double precision,
    staleness_recognition_rate_ci95_lo      double precision,
    staleness_recognition_rate_ci95_hi      double precision,
    diagnosis_accuracy_mean_ci95_lo         double precision,
    diagnosis_accuracy_mean_ci95_hi         double precision,
    lever_mapping_correctness_ci95_lo       double precision,
    lever_mapping_correctness_ci95_hi       double precision,
    confidence_calibration_in_band_ci95_lo  double precision,
    confidence_calibration_in_band_ci95_hi  double precision,
    narrative_coherence_mean_ci95_lo        double precision,
    narrative_coherence_mean_ci95_hi        double precision,
    reviewer_user_id                        uuid             NOT NULL,
    created_at                              timestamptz      NOT NULL DEFAULT now(),
    run_created_at                          timestamptz      NOT NULL,
    CONSTRAINT brain_eval_trend_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_trend_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_trend_citation_rate_finite CHECK (finite_v1(citation_rate)),
    CONSTRAINT brain_eval_trend_hallucination_rate_finite CHECK (finite_v1(hallucination_rate)),
    CONSTRAINT brain_eval_trend_staleness_recognition_rate_finite CHECK (finite_v1(staleness_recognition_rate)),
    CONSTRAINT brain_eval_trend_diagnosis_accuracy_mean_finite CHECK (finite_v1(diagnosis_accuracy_mean)),
    CONSTRAINT brain_eval_trend_lever_mapping_correctness_finite CHECK (finite_v1(lever_mapping_correctness)),
    CONSTRAINT brain_eval_trend_confidence_calibration_in_band_finite CHECK (finite_v1(confidence_calibration_in_band)),
    CONSTRAINT brain_eval_trend_narrative_coherence_mean_finite CHECK (finite_v1(narrative_coherence_mean)),
    CONSTRAINT brain_eval_trend_citation_rate_ci95_lo_finite CHECK (finite_v1(citation_rate_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_citation_rate_ci95_hi_finite CHECK (finite_v1(citation_rate_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_hallucination_rate_ci95_lo_finite CHECK (finite_v1(hallucination_rate_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_hallucination_rate_ci95_hi_finite CHECK (finite_v1(hallucination_rate_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_staleness_recognition_rate_ci95_lo_finite CHECK (finite_v1(staleness_recognition_rate_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_staleness_recognition_rate_ci95_hi_finite CHECK (finite_v1(staleness_recognition_rate_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_diagnosis_accuracy_mean_ci95_lo_finite CHECK (finite_v1(diagnosis_accuracy_mean_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_diagnosis_accuracy_mean_ci95_hi_finite CHECK (finite_v1(diagnosis_accuracy_mean_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_lever_mapping_correctness_ci95_lo_finite CHECK (finite_v1(lever_mapping_correctness_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_lever_mapping_correctness_ci95_hi_finite CHECK (finite_v1(lever_mapping_correctness_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_confidence_calibration_in_band_ci95_lo_finite CHECK (finite_v1(confidence_calibration_in_band_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_confidence_calibration_in_band_ci95_hi_finite CHECK (finite_v1(confidence_calibration_in_band_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_narrative_coherence_mean_ci95_lo_finite CHECK (finite_v1(narrative_coherence_mean_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_narrative_coherence_mean_ci95_hi_finite CHECK (finite_v1(narrative_coherence_mean_ci95_hi::numeric))
);

-- The trend reads a brain's latest runs of one trigger: the scan stops at the p_last-th the reader
-- may read. The trigger is its label as text: text equality is leakproof and an enum's is not, so
-- under RevOps' and a reviewer's row-level security only a text column can be the index's condition.
CREATE INDEX brain_eval_trend_brain_trigger_started_idx
    ON brain_eval_trend (brain_under_test, run_trigger, started_at DESC, eval_run_id DESC);

-- And its open runs past their deadline (abandoned, decided fail) from the runs' own rows: an open run
-- is rare, so its index is small, and the trend finds a brain's (none, mostly) without walking every
-- run the brain completed.
CREATE INDEX brain_eval_log_open_trend_idx
    ON brain_eval_log (brain_under_test, run_trigger, started_at DESC, eval_run_id DESC) WHERE completed_at IS NULL;

COMMENT ON TABLE brain_eval_trend IS
    'Each completed brain-eval run''s trend row: its decision and seed 002''s aggregates with their 95% intervals, copied by the database at completion from the run''s row and its stored uncertainty (brain_eval_trend_of_v1); read by brain_trend_rows_v2.';

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY brain_eval_trend_runner ON brain_eval_trend FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_trend_reviewer ON brain_eval_trend FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

CREATE POLICY brain_eval_trend_revops ON brain_eval_trend FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_trend_auditor ON brain_eval_trend FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_trend
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['brain_eval_trend:UPDATE OR DELETE:refuse_change_v3']);

-- brain_eval_trend_of_v1: a completed run's trend row (brain_eval_trend) as the database
-- derives it from the run's row (its trigger, times, prompt, catalog, decision, and seed 002's
-- aggregates as brain_trend_rows_v1 reads them from aggregated_scores) and its uncertainty (each
-- aggregate's 95% interval, as brain_eval_intervals_v1 reads it); created_at is the calling
-- transaction's now(). The one derivation, of two sources: the completion trigger stores it from the
-- completed row and the uncertainty just stored (brain_eval_trend_complete_v1), and the ledger's
-- recompute compares every stored row with it of what the recompute derives for the run and its
-- uncertainty (ledger_recompute_v3), so a rewritten run or interval is named where it was rewritten,
-- and a rewritten trend row where it was.
CREATE FUNCTION evalledger.brain_eval_trend_of_v1(l evalledger.brain_eval_log, uncertainty jsonb)
RETURNS evalledger.brain_eval_trend
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text, l.started_at, l.completed_at, l.model_id,
           l.system_prompt_hash, l.question_catalog_version, l.decision,
           (l.aggregated_scores ->> 'citation_rate')::numeric,
           (l.aggregated_scores ->> 'hallucination_rate')::numeric,
           (l.aggregated_scores ->> 'staleness_recognition_rate')::numeric,
           (l.aggregated_scores ->> 'diagnosis_accuracy_mean')::numeric,
           (l.aggregated_scores ->> 'lever_mapping_correctness')::numeric,
           (l.aggregated_scores ->> 'confidence_calibration_in_band')::numeric,
           (l.aggregated_scores ->> 'narrative_coherence_mean')::numeric,
           (uncertainty #>> '{citation_rate,ci95,0}')::float8, (uncertainty #>> '{citation_rate,ci95,1}')::float8,
           (uncertainty #>> '{hallucination_rate,ci95,0}')::float8, (uncertainty #>> '{hallucination_rate,ci95,1}')::float8,
           (uncertainty #>> '{staleness_recognition_rate,ci95,0}')::float8, (uncertainty #>> '{staleness_recognition_rate,ci95,1}')::float8,
           (uncertainty #>> '{diagnosis_accuracy_mean,ci95,0}')::float8, (uncertainty #>> '{diagnosis_accuracy_mean,ci95,1}')::float8,
           (uncertainty #>> '{lever_mapping_correctness,ci95,0}')::float8, (uncertainty #>> '{lever_mapping_correctness,ci95,1}')::float8,
           (uncertainty #>> '{confidence_calibration_in_band,ci95,0}')::float8, (uncertainty #>> '{confidence_calibration_in_band,ci95,1}')::float8,
           (uncertainty #>> '{narrative_coherence_mean,ci95,0}')::float8, (uncertainty #>> '{narrative_coherence_mean,ci95,1}')::float8,
           l.reviewer_user_id, now(), l.created_at
$$;

-- brain_eval_trend_complete_v1: after a run's completion (the decision computed before it, its
-- uncertainty stored by brain_eval_log_40_uncertainty), store its trend row (brain_eval_trend,
-- brain_eval_trend_of_v1 of the two) in the same transaction, so the trend panel reads each run
-- and its error bars in one row. SECURITY DEFINER: the table takes rows from the code role alone.
CREATE FUNCTION evalledger.brain_eval_trend_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_trend
    SELECT t.* FROM evalledger.brain_eval_trend_of_v1(
        NEW, (SELECT u.uncertainty FROM evalledger.brain_eval_run_uncertainty u WHERE u.eval_run_id = NEW.eval_run_id)) t;
    RETURN NULL;
END;
$$;

-- After the uncertainty (brain_eval_log_40_uncertainty, whose row it copies) and before the journal (_90_).
CREATE TRIGGER brain_eval_log_45_trend AFTER UPDATE OF completed_at ON brain_eval_log
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION brain_eval_trend_complete_v1();

-- brain_trend_rows_v2: brain_trend_rows_v1's rows (per brain, its last p_last completed runs of one
-- trigger, quarterly when p_trigger is NULL, newest first, with the same filters and columns), each
-- with its error bars: ci95_lo and ci95_hi, each aggregate's 95% interval in seed 002's order
-- (citation, hallucination, staleness, diagnosis, levers, confidence, coherence), NULL where nothing
-- was measured. A completed run is read from its trend row (brain_eval_trend: its columns and its
-- bars in one row, through one index, newest first); an open run past its deadline, in v1 as
-- abandoned (decided fail, no scores, no bars) before the next write closes it, from its own row
-- (open runs are few: one per brain, prompt and catalog). Plain SQL without SET, every operator
-- schema-qualified (as v1), read under the reader's own row-level security. The dashboards' trend
-- panel (panel_trend).
CREATE FUNCTION evalledger.brain_trend_rows_v2(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_last integer)
RETURNS TABLE (
    brain_under_test               varchar(16),
    recency_rank                   bigint,
    eval_run_id                    uuid,
    run_trigger                    text,
    quarter                        text,
    started_at                     timestamptz,
    completed_at                   timestamptz,
    model_id                       varchar(64),
    system_prompt_hash             varchar(64),
    question_catalog_version       varchar(32),
    decision                       text,
    citation_rate                  numeric,
    hallucination_rate             numeric,
    staleness_recognition_rate     numeric,
    diagnosis_accuracy_mean        numeric,
    lever_mapping_correctness      numeric,
    confidence_calibration_in_band numeric,
    narrative_coherence_mean       numeric,
    ci95_lo                        double precision[],
    ci95_hi                        double precision[])
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, r.recency_rank, r.eval_run_id, r.run_trigger::text,
           pg_catalog.to_char(pg_catalog.timezone('UTC', r.started_at), 'YYYY-"Q"Q'),
           r.started_at, r.completed_at, r.model_id, r.system_prompt_hash, r.question_catalog_version,
           r.decision, r.citation_rate, r.hallucination_rate, r.staleness_recognition_rate, r.diagnosis_accuracy_mean,
           r.lever_mapping_correctness, r.confidence_calibration_in_band, r.narrative_coherence_mean, r.ci95_lo, r.ci95_hi
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT x.*, pg_catalog.row_number() OVER (ORDER BY x.started_at DESC, x.eval_run_id DESC) AS recency_rank
              FROM ((SELECT d.eval_run_id, d.run_trigger, d.started_at, d.completed_at, d.model_id, d.system_prompt_hash,
                            d.question_catalog_version, d.decision::text AS decision, d.citation_rate, d.hallucination_rate,
                            d.staleness_recognition_rate, d.diagnosis_accuracy_mean, d.lever_mapping_correctness,
                            d.confidence_calibration_in_band, d.narrative_coherence_mean,
                            ARRAY[d.citation_rate_ci95_lo, d.hallucination_rate_ci95_lo, d.staleness_recognition_rate_ci95_lo, d.diagnosis_accuracy_mean_ci95_lo, d.lever_mapping_correctness_ci95_lo, d.confidence_calibration_in_band_ci95_lo, d.narrative_coherence_mean_ci95_lo] AS ci95_lo,
                            ARRAY[d.citation_rate_ci95_hi, d.hallucination_rate_ci95_hi, d.staleness_recognition_rate_ci95_hi, d.diagnosis_accuracy_mean_ci95_hi, d.lever_mapping_correctness_ci95_hi, d.confidence_calibration_in_band_ci95_hi, d.narrative_coherence_mean_ci95_hi] AS ci95_hi
                       FROM evalledger.brain_eval_trend d
                      WHERE d.brain_under_test OPERATOR(pg_catalog.=) t.target_id
                        AND d.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger::text
                        AND (p_from_month IS NULL
                             OR d.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
                        AND (p_to_month IS NULL
                             OR d.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                                     OPERATOR(pg_catalog.+) interval '1 month'))
                      ORDER BY d.started_at DESC, d.eval_run_id DESC
                      LIMIT p_last)
                    UNION ALL
                    (SELECT l.eval_run_id, l.run_trigger::text, l.started_at, NULL::timestamptz, l.model_id, l.system_prompt_hash,
                            l.question_catalog_version, 'fail', NULL::numeric, NULL::numeric, NULL::numeric, NULL::numeric,
                            NULL::numeric, NULL::numeric, NULL::numeric, NULL::double precision[], NULL::double precision[]
                       FROM evalledger.brain_eval_log l
                      WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id AND l.completed_at IS NULL
                        AND l.run_trigger OPERATOR(pg_catalog.=) coalesce(p_trigger, 'quarterly')::evalledger.eval_run_trigger
                        AND pg_catalog.now() OPERATOR(pg_catalog.>=) evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id)
                        AND (p_from_month IS NULL
                             OR l.started_at OPERATOR(pg_catalog.>=) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_from_month::timestamp)))
                        AND (p_to_month IS NULL
                             OR l.started_at OPERATOR(pg_catalog.<) pg_catalog.timezone('UTC', pg_catalog.date_trunc('month', p_to_month::timestamp)
                                                                     OPERATOR(pg_catalog.+) interval '1 month'))
                      ORDER BY l.started_at DESC, l.eval_run_id DESC
                      LIMIT p_last)) x
             ORDER BY x.started_at DESC, x.eval_run_id DESC
             LIMIT p_last) r
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain' AND (p_brain IS NULL OR t.target_id OPERATOR(pg_catalog.=) p_brain)
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION brain_trend_rows_v2(text, date, date, text, integer) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- The retention functions: the trend row ages with its run, by the run's tier clock, and leaves before it.
-- retention_due_v2: true when a row of an aging table is due for purge: its tier clock (the
-- database's own recording time, carried onto child rows from their parent) is past the purge
-- horizon and no legal hold covers it. Reference data and every other table: never. A released
-- hold goes with its run (run holds) or once its release is past the horizon (brain and range
-- holds); a release goes only with its hold (ON DELETE CASCADE). The horizon is purge_horizon_at_v1
-- (UTC, the statement's clock), and a brain hold covers a row of the brain's prompt whatever its
-- label (retention_held_v2 with run_brains_v1).
CREATE OR REPLACE FUNCTION evalledger.retention_due_v2(table_name text, r jsonb) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    clock timestamptz;
    brain text;
    prompt text;
    run uuid;
BEGIN
    CASE table_name
    WHEN 'brain_eval_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_under_test';
        prompt := r ->> 'system_prompt_hash';
        run := r ->> 'eval_run_id';
    WHEN 'brain_eval_question_score', 'brain_eval_harness_run', 'brain_eval_harness_answer',
         'brain_eval_judge_suggestion', 'brain_eval_review_entry', 'brain_eval_run_review',
         'brain_eval_suggestion_shown', 'brain_eval_run_closure', 'brain_eval_run_uncertainty',
         'brain_eval_trend' THEN
        clock := r ->> 'run_created_at';
        run := r ->> 'eval_run_id';
        SELECT l.brain_under_test, l.system_prompt_hash INTO brain, prompt
          FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run;
    WHEN 'brain_analysis_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain';
        prompt := r ->> 'system_prompt_hash';
    WHEN 'brain_eval_import', 'eval_work_quality_snapshots', 'eval_candidate_keys' THEN
        clock := r ->> 'created_at';
    WHEN 'eval_takes_quality_runs' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'target_id';
    WHEN 'eval_takes_quality_judge_verdicts', 'eval_takes_quality_run_uncertainty' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'eval_run_closure' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t
         WHERE t.id = (r ->> 'takes_quality_run_id')::bigint;
    WHEN 'eval_work_quality_judge_verdicts' THEN
        clock := r ->> 'snapshot_created_at';
    WHEN 'eval_work_quality_snapshot_uncertainty' THEN
        clock := r ->> 'run_created_at';
    WHEN 'eval_capture_failures' THEN
        clock := r ->> 'recorded_at';
    WHEN 'eval_gate_decision' THEN
        -- Its own clock, its takes-quality run's brain; never while that run stays.
        IF evalledger.retention_gate_pinned_v1((r ->> 'run_id')::bigint) THEN
            RETURN false;
        END IF;
        clock := r ->> 'created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'replay_run' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_version';
    WHEN 'replay_query' THEN
        clock := r ->> 'run_created_at';
        SELECT x.brain_version INTO brain FROM evalledger.replay_run x
         WHERE x.replay_run_id = (r ->> 'replay_run_id')::bigint;
    WHEN 'legal_hold' THEN
        IF r ->> 'released_at' IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint) THEN
            RETURN false;
        END IF;
        IF r ->> 'eval_run_id' IS NOT NULL THEN
            SELECT l.created_at, l.brain_under_test, l.system_prompt_hash, l.eval_run_id INTO clock, brain, prompt, run
              FROM evalledger.brain_eval_log l WHERE l.eval_run_id = (r ->> 'eval_run_id')::uuid;
        ELSE
            SELECT coalesce((r ->> 'released_at')::timestamptz, max(x.released_at)) INTO clock
              FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint;
            RETURN clock < evalledger.purge_horizon_at_v1();
        END IF;
    WHEN 'legal_hold_release' THEN
        RETURN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h WHERE h.hold_id = (r ->> 'hold_id')::bigint);
    ELSE
        RETURN false;
    END CASE;
    RETURN coalesce(clock < evalledger.purge_horizon_at_v1()
                    AND NOT evalledger.retention_held_v2(clock, evalledger.run_brains_v1(brain, prompt), run), false);
END;
$$;

-- retention_rows_v2: every row of every aging table but the captured queries (which leave by
-- whole monthly partitions) with its tier clock, the brains and run a hold may name (a brain-eval
-- row's label and every brain of its prompt), and whether a row that stays still references it (an
-- analysis of a kept run, an import of a kept run; a work-quality snapshot is never pinned by the one
-- after it): what retention_plan_v2 classifies, by the same rules as retention_due_v2 and the purge.
CREATE OR REPLACE FUNCTION evalledger.retention_rows_v2()
RETURNS TABLE (table_name text, tier_clock timestamptz, brains text[], run uuid, pinned boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.brain_under_test, l.created_at, l.import_id,
               evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash) AS brains,
               l.created_at < evalledger.purge_horizon_at_v1()
               AND NOT evalledger.retention_held_v2(l.created_at,
                                                    evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                                    l.eval_run_id) AS goes
          FROM evalledger.brain_eval_log l
    )
    SELECT 'brain_eval_log', r.created_at, r.brains, r.eval_run_id, false FROM runs r
    UNION ALL
    SELECT 'brain_eval_question_score', q.run_created_at, r.brains, q.eval_run_id, false
      FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_run', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_run t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_answer', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_answer t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_judge_suggestion', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_judge_suggestion t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_review_entry', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_review_entry t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_review', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_review t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_suggestion_shown', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_suggestion_shown t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_closure', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_closure t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_uncertainty', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_uncertainty t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_trend', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_trend t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_analysis_log', a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL::uuid,
           EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
                    WHERE q.brain_analysis_id = a.analysis_id AND NOT r.goes)
           OR EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h JOIN runs r USING (eval_run_id)
                       WHERE h.analysis_id = a.analysis_id AND NOT r.goes)
      FROM evalledger.brain_analysis_log a
    UNION ALL
    SELECT 'brain_eval_import', i.created_at, NULL::text[], NULL,
           EXISTS (SELECT 1 FROM runs r WHERE r.import_id = i.import_id AND NOT r.goes)
      FROM evalledger.brain_eval_import i
    UNION ALL
    SELECT 'eval_takes_quality_runs', t.created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_runs t
    UNION ALL
    SELECT 'eval_takes_quality_judge_verdicts', v.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_judge_verdicts v JOIN evalledger.eval_takes_quality_runs t ON t.id = v.run_id
    UNION ALL
    SELECT 'eval_takes_quality_run_uncertainty', u.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_run_uncertainty u JOIN evalledger.eval_takes_quality_runs t ON t.id = u.run_id
    UNION ALL
    SELECT 'eval_work_quality_snapshots', s.created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshots s
    UNION ALL
    SELECT 'eval_work_quality_judge_verdicts', v.snapshot_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_judge_verdicts v
    UNION ALL
    SELECT 'eval_work_quality_snapshot_uncertainty', u.run_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshot_uncertainty u
    UNION ALL
    SELECT 'eval_run_closure', c.run_created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL, false
      FROM evalledger.eval_run_closure c LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = c.takes_quality_run_id
    UNION ALL
    SELECT 'eval_candidate_keys', k.created_at, NULL, NULL, false FROM evalledger.eval_candidate_keys k
    UNION ALL
    SELECT 'eval_capture_failures', f.recorded_at, NULL, NULL, false FROM evalledger.eval_capture_failures f
    UNION ALL
    -- A gate decision by its own clock, the brain of its takes-quality run, kept while that run stays.
    SELECT 'eval_gate_decision', g.created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL,
           evalledger.retention_gate_pinned_v1(g.run_id)
      FROM evalledger.eval_gate_decision g LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = g.run_id
    UNION ALL
    SELECT 'replay_run', r.created_at, ARRAY[r.brain_version], NULL, false FROM evalledger.replay_run r
    UNION ALL
    SELECT 'replay_query', q.run_created_at, ARRAY[r.brain_version], NULL, false
      FROM evalledger.replay_query q JOIN evalledger.replay_run r USING (replay_run_id)
$$;

-- retention_plan_v2: per aging table, how many rows are hot (recorded in the last 24 months),
-- cold (24 months to 7 years: auditors only), due for purge (past 7 years, no hold) and held past
-- the horizon, and which holds keep which rows. Captured queries count by whole monthly partition,
-- as they are purged. Counts only, so auditors may ask it of tables they cannot read. The windows
-- are hot_tier_start_v1 and purge_horizon_at_v1 (UTC, the statement's clock), the holds those of
-- retention_held_v2 (a brain hold keeps its prompt's rows).
CREATE OR REPLACE FUNCTION evalledger.retention_plan_v2()
RETURNS TABLE (table_name text, hot bigint, cold bigint, due bigint, held bigint, held_by text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH holds AS (
        SELECT h.hold_id, h.eval_run_id, h.target_id, h.held_from, h.held_to,
               CASE WHEN h.eval_run_id IS NOT NULL THEN 'run ' || h.eval_run_id
                    WHEN h.target_id IS NOT NULL THEN 'brain ' || h.target_id
                    ELSE 'range ' || to_char(h.held_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                         || '..' || to_char(h.held_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') END AS scope
          FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
    ),
    parts AS (
        SELECT c.relname::text AS part,
               (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC' AS month_start,
               (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' AS month_end,
               evalledger.capture_partition_expired_v2(c.relname) AS expired
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
    ),
    rows AS (
        SELECT r.table_name, r.tier_clock, r.brains, r.run, r.pinned,
               r.tier_clock >= evalledger.hot_tier_start_v1() AS hot,
               r.tier_clock < evalledger.purge_horizon_at_v1() AS past
          FROM evalledger.retention_rows_v2() r
        UNION ALL
        SELECT 'eval_candidates', c.created_at, NULL::text[], NULL, false,
               c.created_at >= evalledger.hot_tier_start_v1(), p.expired
          FROM evalledger.eval_candidates c
          JOIN parts p ON c.created_at >= p.month_start AND c.created_at < p.month_end
    ),
    covered AS (
        SELECT r.table_name, h.hold_id, h.scope, count(*) AS n
          FROM rows r
          JOIN holds h ON h.eval_run_id = r.run OR h.target_id = ANY (r.brains)
                       OR (r.table_name <> 'eval_candidates' AND r.tier_clock BETWEEN h.held_from AND h.held_to)
                       OR (r.table_name = 'eval_candidates' AND EXISTS (
                               SELECT 1 FROM parts p
                                WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end
                                  AND h.held_from < p.month_end AND h.held_to >= p.month_start))
         WHERE r.past
         GROUP BY r.table_name, h.hold_id, h.scope
    ),
    classified AS (
        SELECT r.table_name, r.hot, r.past, r.pinned,
               r.past AND (r.pinned OR
                   CASE WHEN r.table_name = 'eval_candidates' THEN EXISTS (
                            SELECT 1 FROM parts p JOIN holds h ON h.held_from < p.month_end AND h.held_to >= p.month_start
                             WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end)
                        ELSE evalledger.retention_held_v2(r.tier_clock, r.brains, r.run) END) AS held
          FROM rows r
    ),
    tables AS (
        SELECT t.table_name, t.n
          FROM unnest(ARRAY['brain_eval_log', 'brain_eval_question_score', 'brain_eval_harness_run',
                            'brain_eval_harness_answer', 'brain_eval_judge_suggestion', 'brain_eval_review_entry',
                            'brain_eval_run_review', 'brain_eval_suggestion_shown', 'brain_eval_run_closure',
                            'brain_eval_run_uncertainty', 'brain_eval_trend',
                            'brain_analysis_log', 'brain_eval_import',
                            'eval_takes_quality_runs', 'eval_takes_quality_judge_verdicts',
                            'eval_takes_quality_run_uncertainty',
                            'eval_work_quality_snapshots', 'eval_work_quality_judge_verdicts',
                            'eval_work_quality_snapshot_uncertainty', 'eval_run_closure',
                            'replay_run', 'replay_query',
                            'eval_candidates', 'eval_candidate_keys', 'eval_capture_failures',
                            'eval_gate_decision'])
               WITH ORDINALITY AS t (table_name, n)
    )
    SELECT t.table_name,
           count(c.table_name) FILTER (WHERE c.hot),
           count(c.table_name) FILTER (WHERE NOT c.hot AND NOT c.past),
           count(c.table_name) FILTER (WHERE c.past AND NOT c.held),
           count(c.table_name) FILTER (WHERE c.held),
           nullif(concat_ws('; ',
               (SELECT string_agg(format('hold %s (%s): %s', v.hold_id, v.scope, v.n), '; ' ORDER BY v.hold_id)
                  FROM covered v WHERE v.table_name = t.table_name),
               CASE WHEN count(*) FILTER (WHERE c.pinned AND c.past) > 0
                    THEN format(CASE WHEN t.table_name = 'eval_gate_decision' THEN '%s decided about kept runs'
                                     ELSE '%s referenced by kept rows' END,
                                count(*) FILTER (WHERE c.pinned AND c.past)) END), '')
      FROM tables t LEFT JOIN classified c USING (table_name)
     GROUP BY t.table_name, t.n
     ORDER BY t.n
$$;
GRANT EXECUTE ON FUNCTION retention_plan_v2() TO evalledger_retention, evalledger_auditor, evalledger_owner;

-- retention_purge_v2: the one way rows leave the ledger (seed 002: hard delete past 7 years,
-- subject to legal hold). Deletes, in foreign-key order, every row whose tier clock is past the
-- purge horizon and that no unreleased hold covers: brain-eval runs with their judge suggestions,
-- harness answers, review entries, suggestions shown, run reviews, question rows, harness runs and
-- released holds;
-- analyses and imports no row references any more; takes-quality verdicts, stored uncertainty then runs; work-quality
-- verdicts, stored uncertainty then snapshots (a snapshot a kept one builds on stays); replay queries then runs;
-- captured-query partitions whose
-- whole month is past the horizon and that no range hold overlaps, and capture keys and failures;
-- released brain and range holds whose release is past the horizon. Each step is a row of
-- retention_purge_log (who, when, which table, how many rows, which run or partition), and the
-- function returns this transaction's rows of it. The code role's, executable only by
-- evalledger_retention: the guards (refuse_change_v3) let a DELETE through only inside it. The
-- horizon is purge_horizon_at_v1 (UTC, the statement's clock: no session TimeZone moves it); a brain
-- hold keeps what runs the brain's prompt, whatever the label (retention_held_v2, run_brains_v1); a
-- work-quality snapshot goes when it is due even if a kept one compared with it (the kept one keeps
-- its comparison and the previous run's id), so an active target's history still ages out. It runs
-- under READ COMMITTED only: it waits for the hold tables' writers, and only a fresh snapshot then
-- sees the hold that one of them committed. It waits for those writers at most 5 seconds: the owner
-- role's INSERT on the hold tables lets it LOCK them ROW EXCLUSIVE and keep its transaction open, so
-- the purge stops then, naming who holds them, instead of queueing for ever. A captured-query
-- partition whose DROP (ACCESS EXCLUSIVE on eval_candidates) would wait behind a reader's open
-- transaction, and so queue every capture and read behind it, is left to the next purge. Before a
-- partition goes, every replay run still open over it gets a capture_purged row for each captured
-- row of the month it planned and has not replayed (never a pass: replay_decision_v1).
CREATE OR REPLACE FUNCTION evalledger.retention_purge_v2()
RETURNS TABLE (purged_table text, purged_rows bigint, purged_run uuid, purged_partition text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET lock_timeout = '5s' AS $$
DECLARE
    horizon timestamptz := evalledger.purge_horizon_at_v1();
    runs uuid[];
    tq_runs bigint[];
    snapshots bigint[];
    replays bigint[];
    part record;
    n bigint;
    purged text;
BEGIN
    PERFORM evalledger.require_read_committed_v2('the retention purge');
    -- No hold is placed or released while the purge decides and deletes.
    BEGIN
        LOCK TABLE evalledger.legal_hold, evalledger.legal_hold_release IN SHARE MODE;
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(DISTINCT a.usename::text, ', ') INTO purged
          FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
           AND l.relation IN ('evalledger.legal_hold'::regclass, 'evalledger.legal_hold_release'::regclass);
        RAISE EXCEPTION 'evalledger: the purge waited 5 s for the legal holds, which % holds in an open transaction: nothing purged',
                coalesce(purged, 'another session')
            USING ERRCODE = 'lock_not_available', HINT = 'run the purge again once that transaction ends';
    END;
    INSERT INTO evalledger.retention_purge_marker (txid) VALUES (txid_current());

    -- brain-eval runs, children first
    SELECT coalesce(array_agg(l.eval_run_id), '{}') INTO runs
      FROM evalledger.brain_eval_log l
     WHERE l.created_at < horizon
       AND NOT evalledger.retention_held_v2(l.created_at, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                            l.eval_run_id);
    -- In foreign-key order; released holds of those runs go with them (their releases by ON DELETE
    -- CASCADE). Each table's rows, counted per run, into the log.
    FOREACH purged IN ARRAY ARRAY['brain_eval_judge_suggestion', 'brain_eval_harness_answer', 'brain_eval_review_entry',
                                  'brain_eval_suggestion_shown', 'brain_eval_run_review', 'brain_eval_run_closure',
                                  'brain_eval_run_uncertainty', 'brain_eval_trend', 'brain_eval_question_score',
                                  'brain_eval_harness_run', 'legal_hold', 'brain_eval_log'] LOOP
        EXECUTE format('WITH gone AS (DELETE FROM evalledger.%I t WHERE t.eval_run_id = ANY ($1) RETURNING t.eval_run_id) '
                       'INSERT INTO evalledger.retention_purge_log (table_name, row_count, eval_run_id) '
                       'SELECT %L, count(*), g.eval_run_id FROM gone g GROUP BY g.eval_run_id', purged, purged)
            USING runs;
    END LOOP;

    -- Analyses (production and eval) and imports that nothing references any more.
    WITH gone AS (
        DELETE FROM evalledger.brain_analysis_log a
         WHERE a.created_at < horizon
           AND NOT evalledger.retention_held_v2(a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q WHERE q.brain_analysis_id = a.analysis_id)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h WHERE h.analysis_id = a.analysis_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_analysis_log', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.brain_eval_import i
         WHERE i.created_at < horizon
           AND NOT evalledger.retention_held_v2(i.created_at, NULL, NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.import_id = i.import_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_eval_import', count(*) FROM gone HAVING count(*) > 0;

    -- Gate decisions, each by its own clock as it falls due, never while the takes-quality run it decided
    -- about stays (retention_gate_pinned_v1); before the runs, so a hold of the run's brain still reaches it.
    WITH gone AS (
        DELETE FROM evalledger.eval_gate_decision g
         WHERE g.created_at < horizon
           AND NOT evalledger.retention_held_v2(
                   g.created_at,
                   ARRAY(SELECT t.target_id::text FROM evalledger.eval_takes_quality_runs t WHERE t.id = g.run_id), NULL)
           AND NOT evalledger.retention_gate_pinned_v1(g.run_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_gate_decision', count(*) FROM gone HAVING count(*) > 0;

    -- takes-quality: verdicts, the stored uncertainty, then runs
    SELECT coalesce(array_agg(t.id), '{}') INTO tq_runs
      FROM evalledger.eval_takes_quality_runs t
     WHERE t.created_at < horizon AND NOT evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL);
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_run_uncertainty u WHERE u.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_run_uncertainty', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_runs t WHERE t.id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_runs', count(*) FROM gone HAVING count(*) > 0;

    -- work-quality: verdicts, the stored uncertainty, then snapshots, each as it falls due: a snapshot that a kept one
    -- compared with does not pin it (the kept one names its run and keeps the comparison).
    SELECT coalesce(array_agg(s.snapshot_id), '{}') INTO snapshots
      FROM evalledger.eval_work_quality_snapshots s
     WHERE s.created_at < horizon AND NOT evalledger.retention_held_v2(s.created_at, NULL, NULL);
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshot_uncertainty u
                   WHERE u.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshot_uncertainty', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_run_closure c WHERE c.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_run_closure', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshots', count(*) FROM gone HAVING count(*) > 0;

    -- replay: each run with its queries as the run falls due (their tier clock is the run's
    -- recording time; a hold on the brain version's label, or a range holding that time, keeps both).
    SELECT coalesce(array_agg(r.replay_run_id), '{}') INTO replays
      FROM evalledger.replay_run r
     WHERE r.created_at < horizon AND NOT evalledger.retention_held_v2(r.created_at, ARRAY[r.brain_version], NULL);
    WITH gone AS (DELETE FROM evalledger.replay_query q WHERE q.replay_run_id = ANY (replays) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'replay_query', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.replay_run r WHERE r.replay_run_id = ANY (replays) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'replay_run', count(*) FROM gone HAVING count(*) > 0;

    -- Captured queries: whole monthly partitions past the horizon that no range hold overlaps
    -- (the drop guard admits them inside the capture purge's marker), then keys and failures.
    INSERT INTO evalledger.capture_purge_marker (txid) VALUES (txid_current());
    FOR part IN
        SELECT c.relname::text AS name
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
           AND evalledger.capture_partition_expired_v2(c.relname)
           AND NOT EXISTS (
               SELECT 1 FROM evalledger.legal_hold h
                WHERE h.held_from IS NOT NULL AND h.released_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
                  AND h.held_from < (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                  AND h.held_to >= (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC')
         ORDER BY c.relname
    LOOP
        -- Counted through the parent: a partition has no policy of its own, so FORCE hides its rows.
        SELECT count(*) INTO n FROM evalledger.eval_candidates c
         WHERE c.tableoid = ('evalledger.' || quote_ident(part.name))::regclass;
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
            -- Open replay runs first: with no reader of the captured rows left (the DROP's lock, taken
            -- now), each captured row of this month a run planned and has not replayed is recorded
            -- for it as purged (replay_query_admit_v1 copies its captured fields), so the run is
            -- still completed whole, and decided without passing on it (replay_decision_v1). What a
            -- run planned is the newest `planned` rows of its window (the rows its role could read,
            -- at most max_rows: newest first, as the runner asks them), less those purged before.
            LOCK TABLE evalledger.eval_candidates IN ACCESS EXCLUSIVE MODE;
            INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, outcome, error)
            SELECT r.replay_run_id, w.id, w.created_at, 'capture_purged',
                   format('captured row purged by retention (%s) before the run replayed it', part.name)
              FROM evalledger.replay_run r
             CROSS JOIN LATERAL (
                    SELECT c.id, c.created_at, c.tableoid FROM evalledger.eval_candidates c
                     WHERE (r.since_at IS NULL OR c.created_at >= r.since_at) AND c.created_at < r.until_at
                       AND (r.tool IS NULL OR c.tool_name = r.tool) AND (r.remote IS NULL OR c.remote = r.remote)
                     ORDER BY c.created_at DESC, c.id DESC
                     LIMIT greatest(r.planned - (SELECT count(*) FROM evalledger.replay_query p
                                                  WHERE p.replay_run_id = r.replay_run_id
                                                    AND p.status = 'capture_purged'), 0)) w
             WHERE r.source = 'ledger' AND r.completed_at IS NULL
               AND w.tableoid = ('evalledger.' || quote_ident(part.name))::regclass
               AND NOT EXISTS (SELECT 1 FROM evalledger.replay_query q
                                WHERE q.replay_run_id = r.replay_run_id AND q.capture_id = w.id)
             ORDER BY r.replay_run_id, w.created_at, w.id;
            EXECUTE format('DROP TABLE evalledger.%I', part.name);
            INSERT INTO evalledger.retention_purge_log (table_name, row_count, partition_name)
            VALUES ('eval_candidates', n, part.name);
        EXCEPTION WHEN lock_not_available THEN
            NULL;  -- a reader holds eval_candidates: the next purge drops it
        END;
        PERFORM pg_catalog.set_config('lock_timeout', '5s', true);
    END LOOP;
    DELETE FROM evalledger.capture_purge_marker m WHERE m.txid = txid_current();
    WITH gone AS (
        DELETE FROM evalledger.eval_candidate_keys k
         WHERE k.created_at < horizon AND NOT evalledger.retention_held_v2(k.created_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_candidate_keys', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.eval_capture_failures f
         WHERE f.recorded_at < horizon AND NOT evalledger.retention_held_v2(f.recorded_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_capture_failures', count(*) FROM gone HAVING count(*) > 0;

    -- Brain and range holds released more than the horizon ago.
    WITH gone AS (
        DELETE FROM evalledger.legal_hold h
         WHERE h.eval_run_id IS NULL
           AND coalesce(h.released_at, (SELECT max(x.released_at) FROM evalledger.legal_hold_release x
                                          WHERE x.hold_id = h.hold_id)) < horizon
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'legal_hold', count(*) FROM gone HAVING count(*) > 0;

    DELETE FROM evalledger.retention_purge_marker m WHERE m.txid = txid_current();
    RETURN QUERY
        SELECT p.table_name, p.row_count, p.eval_run_id, p.partition_name
          FROM evalledger.retention_purge_log p
         WHERE p.txid = txid_current()
         ORDER BY p.purge_log_id;
END;
$$;

-- The purge is the retention role's alone; the plan (counts only) also the auditor's and the owner's.
GRANT EXECUTE ON FUNCTION retention_purge_v2() TO evalledger_retention;

-- The new table sealed and journalled as every table is.
CALL seal_tables_v2();
CALL journal_attach_v2();

-- After the journal's attach, which makes the new table's key function the recompute calls.
-- Compares the suites' runs by the keys the journal gives them (journal_key_v1, made per table by
-- journal_attach_v2).
-- ledger_recompute_v3 (issue 18: brain-eval runs by brain_eval_decide_v2 and question rows by
-- brain_eval_question_verdict_v1, the versions their triggers decide by; v2 re-derived both by the
-- versions issue 17 replaced): every computed column of every completed run whose value now differs from
-- what its suite's decision computes from the run's inputs (one row per column): brain-eval runs
-- (aggregates, criteria, decision, rationale, cost, hours and notes) and their question rows
-- (question_passed) and the uncertainty their completion stored (brain_eval_run_uncertainty, by
-- brain_eval_uncertainty_v1) and the trend rows derived from the two (brain_eval_trend, by
-- brain_eval_trend_of_v1; a completed run without either is named), takes-quality runs (cycles, verdict, overall score, cost, receipt) and
-- the uncertainty their completion stored (eval_takes_quality_run_uncertainty, by
-- takes_quality_uncertainty_v1), and work-quality runs (means, spreads, note, comparison, judges' cost, document) and
-- the uncertainty their completion stored (eval_work_quality_snapshot_uncertainty, by
-- work_quality_uncertainty_v2 cut to its snapshot's own rubric's scale, whatever was activated
-- since), and replay runs
-- (decision, rationale, summary) and their replayed queries (recall, jaccard, rbo), and regression
-- gate decisions (decision, reasons, comparison: gate_decide_v2, as eval_gate_decision_admit_v1
-- decides them, a work-quality gate under the rubric it was decided under, whatever was activated
-- since, a takes-quality gate when its run had completed as it was decided). Values compare
-- as JSON values, rendered with extra_float_digits pinned to 1 whatever the reader's session says,
-- so 0.50 and 0.5 are equal and nothing is rounded. It reads through each suite's
-- one entry point (ledger_recompute_<suite>_v1), which calls the functions the suite's trigger
-- calls: a rewritten decision shows here even where the journal was rewritten to match it. Runs
-- imported from history files are the files' own and are not re-derived (the intervals the database
-- stored for them are).
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
        SELECT 'replay_query', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object(
                   'recall', evalledger.replay_recall_v1(q.captured_slugs, q.retrieved_slugs),
                   'jaccard', evalledger.replay_jaccard_v1(q.captured_slugs, q.retrieved_slugs),
                   'rbo', evalledger.replay_rbo_v1(q.captured_chunk_ids, q.retrieved_chunk_ids,
                                                   (b.definition ->> 'rbo_p')::numeric)),
               ARRAY['recall', 'jaccard', 'rbo']
          FROM evalledger.replay_run r JOIN evalledger.replay_query q USING (replay_run_id)
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         WHERE r.completed_at IS NOT NULL AND q.status = 'replayed'
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

-- Every run completed before this migration: its trend row, derived now by the function its
-- completion would have called, of its row and its stored uncertainty (journalled as INSERTs).
INSERT INTO brain_eval_trend
SELECT t.*
  FROM brain_eval_log l
  LEFT JOIN brain_eval_run_uncertainty u ON u.eval_run_id = l.eval_run_id
 CROSS JOIN LATERAL brain_eval_trend_of_v1(l, u.uncertainty) t
 WHERE l.completed_at IS NOT NULL
 ORDER BY l.created_at, l.eval_run_id;

RESET ROLE;
