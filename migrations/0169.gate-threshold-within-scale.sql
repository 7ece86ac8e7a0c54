-- A gate's threshold no wider than its rubric's scale (found by an insider review): a threshold had
-- only to be finite and not negative, so a runner could gate a takes-quality run that fell from 10 to 1
-- on every dimension with a threshold of 1e100 and store `pass`, a check that cannot fail. A
-- threshold as wide as the scale of the rubric the gate is decided under (the takes-quality run's, the
-- work-quality rubric active now) or wider is now refused, naming the rubric and its scale. Gates
-- stored before keep what they stored: the recompute re-decides them from their own threshold.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

CREATE OR REPLACE FUNCTION evalledger.eval_gate_decision_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    decided jsonb;
    scale jsonb;
    rubric text;
BEGIN
    PERFORM evalledger.refuse_supplied_v1(
        'eval_gate_decision',
        jsonb_build_object('decision', NEW.decision, 'reasons', NEW.reasons, 'comparison', NEW.comparison,
                           'decided_by', NEW.decided_by, 'work_quality_rubric_id', NEW.work_quality_rubric_id,
                           'run_completed', NEW.run_completed));
    IF NEW.suite = 'takes-quality' AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE r.id = NEW.run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run % to compare with the baseline', NEW.run_id
            USING ERRCODE = 'no_data_found', COLUMN = 'run_id';
    END IF;
    PERFORM evalledger.gate_scores_in_range_v1(NEW.suite, NEW.baseline, NEW.baseline_ref, NEW.current_doc,
                                               NEW.current_ref);
    NEW.work_quality_rubric_id := evalledger.active_rubric_v1('work-quality');
    SELECT b.definition -> 'scale', format('%s %s', b.suite, b.version) INTO scale, rubric
      FROM evalledger.rubric b
     WHERE b.rubric_id = CASE WHEN NEW.suite = 'takes-quality'
                              THEN (SELECT r.rubric_id FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id)
                              ELSE NEW.work_quality_rubric_id END;
    IF NEW.threshold >= (scale ->> 'max')::numeric - (scale ->> 'min')::numeric THEN
        RAISE EXCEPTION 'evalledger: a gate threshold of % spans the whole of rubric %''s scale (% to %): no drop could '
                        'exceed it, so the gate could never fail', NEW.threshold::float8, rubric, scale ->> 'min', scale ->> 'max'
            USING ERRCODE = 'check_violation', COLUMN = 'threshold',
                  CONSTRAINT = 'eval_gate_decision_threshold_within_scale';
    END IF;
    SELECT evalledger.gate_decide_v2(NEW.suite, NEW.mode, NEW.threshold, NEW.baseline, NEW.current_doc, NEW.run_id,
                                     NEW.work_quality_rubric_id),
           CASE WHEN NEW.suite = 'takes-quality'
                THEN (SELECT r.completed_at IS NOT NULL FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id) END
      INTO decided, NEW.run_completed;
    NEW.decision := decided ->> 'decision';
    NEW.reasons := ARRAY(SELECT jsonb_array_elements_text(decided -> 'reasons'));
    NEW.comparison := decided;
    NEW.decided_by := evalledger.caller_v1();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
