-- brain_eval_log_decide_v1: on completion, check the run is whole and write what it decided.
CREATE FUNCTION evalledger.brain_eval_log_decide_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    scored int;
    computed jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('run');
    SELECT count(*) INTO scored FROM evalledger.brain_eval_question_score q WHERE q.eval_run_id = NEW.eval_run_id;
    IF scored <> NEW.question_count THEN
        RAISE EXCEPTION 'evalledger: run % declares % questions but % are scored', NEW.eval_run_id,
                NEW.question_count, scored
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_log_complete_run_has_every_question';
    END IF;
    computed := evalledger.brain_eval_decide_v1(NEW);
    NEW.aggregated_scores := computed -> 'aggregated_scores';
    NEW.hard_criteria_passed := (computed ->> 'hard_criteria_passed')::boolean;
    NEW.soft_criteria_passed_count := (computed ->> 'soft_criteria_passed_count')::int;
    NEW.decision := (computed ->> 'decision')::evalledger.eval_decision;
    NEW.decision_rationale := computed ->> 'decision_rationale';
    NEW.token_cost_usd := (computed ->> 'token_cost_usd')::numeric;
    RETURN NEW;
END;
$$;
