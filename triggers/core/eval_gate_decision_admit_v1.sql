-- eval_gate_decision_admit_v1: a gate decision is the database's. A decision, reasons, comparison or
-- decider supplied is refused (refuse_supplied_v1); a takes-quality run the caller may not read is
-- none to compare; a judge's score past float8's range in a side is refused naming the side, its
-- ref, the judge and the dimension (gate_scores_in_range_v1), before anything is decided; the
-- work-quality rubric active now is stored with the row (work_quality_rubric_id) and gate_decide_v2
-- decides under that one, from the two sides, the mode and the threshold given (one read of the
-- activation, so the rubric stored is the rubric decided under);
-- for a takes-quality gate, whether its run had completed is read in the same statement, so in the one
-- snapshot the decision reads the run in, and stored (run_completed: the receipt it compared was
-- final); the row is stamped with the caller and the database's clock. A threshold as wide as the
-- rubric's scale or wider (the takes-quality run's rubric, the work-quality rubric active now) is
-- refused: no drop could exceed it, so the gate could never fail (migration 0169).
CREATE FUNCTION evalledger.eval_gate_decision_admit_v1() RETURNS trigger
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

CREATE TRIGGER eval_gate_decision_10_admit BEFORE INSERT ON eval_gate_decision
    FOR EACH ROW EXECUTE FUNCTION eval_gate_decision_admit_v1();
