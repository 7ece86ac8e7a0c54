-- BrainEvalQuestionScore: one row per (run, question). The runner (or, for a harness run, the
-- database from the brain's answer) inserts the automatic fields; the reviewer's fields are NULL
-- until the run's reviewer enters them, and question_passed is NULL until the question has every
-- field its criteria need. Completion requires all of them (brain_eval_log_decide_v2), so a
-- completed run's rows carry every field seed 002 requires.
CREATE TABLE brain_eval_question_score (
    question_score_id              uuid         NOT NULL DEFAULT gen_random_uuid(),
    eval_run_id                    uuid         NOT NULL,
    question_id                    varchar(16)  NOT NULL,
    brain_analysis_id              uuid         NOT NULL,
    question_type                  varchar(32)  NOT NULL,
    uses_stale_fixture             boolean      NOT NULL,
    citation_rate                  numeric(5,4) NOT NULL,
    hallucinations_detected        integer,
    total_claims                   integer,
    staleness_correctly_recognized boolean,
    diagnosis_accuracy_score       numeric(3,2),
    lever_mapping_violations       integer,
    confidence_distribution        jsonb        NOT NULL,
    narrative_coherence_rating     integer,
    reviewer_comments              text,
    question_passed                boolean,
    created_at                     timestamptz  NOT NULL DEFAULT now(),
    -- The tier clock: the run's own recording time, so retention reads a column, not the run.
    run_created_at                 timestamptz  NOT NULL,
    -- The run's reviewer, stamped at insert as the clock is (issue 20): the reviewer's policy
    -- compares the row's own column instead of collecting every run of the reviewer per statement.
    run_reviewer_user_id           uuid         NOT NULL,
    CONSTRAINT brain_eval_question_score_pkey PRIMARY KEY (question_score_id),
    -- No CASCADE: runs are append-only.
    CONSTRAINT brain_eval_question_score_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_question_score_analysis_fkey FOREIGN KEY (brain_analysis_id) REFERENCES brain_analysis_log (analysis_id),
    CONSTRAINT brain_eval_question_score_run_reviewer_fkey
        FOREIGN KEY (run_reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_question_score_question_once_per_run UNIQUE (eval_run_id, question_id),
    -- An analysis is one question's answer: its cost counts once.
    CONSTRAINT brain_eval_question_score_analysis_once UNIQUE (brain_analysis_id),
    CONSTRAINT brain_eval_question_score_question_type_known CHECK (question_type::text IN (
        'plan_diagnosis', 'coverage_gap', 'play_retrospective', 'forecast_bias', 'churn_diagnosis',
        'expansion_qualification', 'handoff_briefing', 'qbr_narrative')),
    CONSTRAINT brain_eval_question_score_citation_rate_range CHECK (citation_rate BETWEEN 0 AND 1),
    CONSTRAINT brain_eval_question_score_claims_consistent CHECK (
        total_claims >= 0 AND hallucinations_detected >= 0 AND hallucinations_detected <= total_claims),
    CONSTRAINT brain_eval_question_score_staleness_only_on_stale_fixture CHECK (
        staleness_correctly_recognized IS NULL OR uses_stale_fixture),
    CONSTRAINT brain_eval_question_score_diagnosis_scale CHECK (
        diagnosis_accuracy_score IS NULL OR diagnosis_accuracy_score IN (0.0, 0.5, 1.0)),
    CONSTRAINT brain_eval_question_score_lever_violations_not_negative CHECK (
        lever_mapping_violations IS NULL OR lever_mapping_violations >= 0),
    CONSTRAINT brain_eval_question_score_coherence_scale CHECK (
        narrative_coherence_rating IS NULL OR narrative_coherence_rating BETWEEN 1 AND 5),
    -- 4000 characters (docs/review-web.md): the web form and the terminal say so before anything is sent.
    CONSTRAINT brain_eval_question_score_comment_length CHECK (char_length(reviewer_comments) <= 4000),
    CONSTRAINT brain_eval_question_score_confidence_distribution_shape CHECK (
        jsonb_typeof(confidence_distribution) = 'object'
        AND confidence_distribution ?& ARRAY['high_confidence_pct', 'multi_source_pct', 'inference_pct', 'speculation_pct']
        AND jsonb_typeof(confidence_distribution -> 'high_confidence_pct') = 'number'
        AND jsonb_typeof(confidence_distribution -> 'multi_source_pct') = 'number'
        AND jsonb_typeof(confidence_distribution -> 'inference_pct') = 'number'
        AND jsonb_typeof(confidence_distribution -> 'speculation_pct') = 'number'
        AND (confidence_distribution ->> 'high_confidence_pct')::numeric BETWEEN 0 AND 100
        AND (confidence_distribution ->> 'multi_source_pct')::numeric BETWEEN 0 AND 100
        AND (confidence_distribution ->> 'inference_pct')::numeric BETWEEN 0 AND 100
        AND (confidence_distribution ->> 'speculation_pct')::numeric BETWEEN 0 AND 100),
    CONSTRAINT brain_eval_question_score_citation_rate_finite CHECK (finite_v1(citation_rate)),
    CONSTRAINT brain_eval_question_score_diagnosis_accuracy_score_finite CHECK (finite_v1(diagnosis_accuracy_score))
);

CREATE INDEX brain_eval_question_score_question_created_idx ON brain_eval_question_score (question_id, created_at DESC);

CREATE INDEX brain_eval_question_score_run_idx ON brain_eval_question_score (eval_run_id);

CREATE INDEX brain_eval_question_score_stale_fixture_idx ON brain_eval_question_score (uses_stale_fixture, staleness_correctly_recognized);

CREATE INDEX brain_eval_question_score_run_created_idx ON brain_eval_question_score (run_created_at);

CREATE POLICY brain_eval_question_score_runner ON brain_eval_question_score TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT, INSERT ON brain_eval_question_score TO evalledger_runner;

-- A question row carries its run's reviewer (run_reviewer_user_id, issue 20): one comparison per
-- row whatever the history, where collecting the reviewer's runs cost every statement, the one-row
-- UPDATE of a score among them, a scan of its history twice.
CREATE POLICY brain_eval_question_score_reviewer ON brain_eval_question_score TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND run_reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)))
    WITH CHECK (run_created_at >= evalledger.hot_tier_start_v1()
                AND run_reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

-- Every column of its question rows but question_passed (issue 17, class 8): a reviewer who read
-- each verdict as it scored could learn a question's thresholds by scoring, reading and rolling
-- back, with nothing on the record. The run's decision, once completed, is on brain_eval_log.
GRANT SELECT (question_score_id, eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture,
              citation_rate, hallucinations_detected, total_claims, staleness_correctly_recognized,
              diagnosis_accuracy_score, lever_mapping_violations, confidence_distribution,
              narrative_coherence_rating, reviewer_comments, created_at, run_created_at, run_reviewer_user_id)
    ON brain_eval_question_score TO evalledger_reviewer;
GRANT UPDATE (hallucinations_detected, total_claims, staleness_correctly_recognized, diagnosis_accuracy_score,
               narrative_coherence_rating, reviewer_comments)
    ON brain_eval_question_score TO evalledger_reviewer;

CREATE POLICY brain_eval_question_score_revops ON brain_eval_question_score FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_question_score_auditor ON brain_eval_question_score FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_question_score TO evalledger_revops, evalledger_auditor;

-- The sev-2 incidents walk each brain's runs newest first and look up each run's missed
-- stale-fixture questions here: one probe of a small index per run, until the 20th incident,
-- where seed 002's index 6 (no run in its key) collected every miss of the history to sort them.
-- A miss is spelled NOT coalesce(..., true), as panel_stale_misses spells it, and not = false:
-- that form index 6 could serve too, and the planner, counting a sixth of the misses there (it
-- takes the two columns for independent, though only a stale question has the flag), ANDed
-- every miss of the history into each run's probe instead of using this index.
CREATE INDEX brain_eval_question_score_stale_missed_idx ON brain_eval_question_score (eval_run_id)
    WHERE uses_stale_fixture AND NOT coalesce(staleness_correctly_recognized, true);

-- A policy of brain_analysis_log, created here: it reads this table, which references that one.
CREATE POLICY brain_analysis_log_reviewer ON brain_analysis_log FOR SELECT TO evalledger_reviewer
    USING (created_at >= evalledger.hot_tier_start_v1()
           AND analysis_id = ANY (ARRAY(SELECT q.brain_analysis_id FROM evalledger.brain_eval_question_score q)));
