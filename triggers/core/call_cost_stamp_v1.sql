-- call_cost_stamp_v1: a model call's cost is the database's, whenever the row carries the price it
-- is billed at: computed from the row's usage and price (call_cost_v1), whatever cost the caller
-- sent. A row without a price (a recorded reply, a model pricing.json does not price, an import)
-- keeps the cost it was given. A price taken after the day the row is written (in UTC, with a day's
-- margin for the writer's time zone) is refused: a price is one a provider published.
CREATE FUNCTION evalledger.call_cost_stamp_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    cost numeric;
BEGIN
    IF NEW.price_input IS NULL OR NEW.price_cached_input IS NULL OR NEW.price_cache_write IS NULL
       OR NEW.price_output IS NULL OR NEW.price_as_of IS NULL THEN
        RETURN NEW;  -- no price (or part of one, which the row's CHECK refuses)
    END IF;
    IF NOT (evalledger.finite_v1(NEW.price_input) AND evalledger.finite_v1(NEW.price_cached_input)
            AND evalledger.finite_v1(NEW.price_cache_write) AND evalledger.finite_v1(NEW.price_output)) THEN
        RETURN NEW;  -- the row's CHECKs refuse it, naming the price
    END IF;
    IF NEW.price_as_of > (statement_timestamp() AT TIME ZONE 'UTC')::date + 1 THEN
        RAISE EXCEPTION 'evalledger: price_as_of % is after today: a price is one a provider published', NEW.price_as_of
            USING ERRCODE = 'check_violation', COLUMN = 'price_as_of', CONSTRAINT = TG_TABLE_NAME || '_price_taken';
    END IF;
    cost := evalledger.call_cost_v1(NEW.input_tokens, NEW.cached_input_tokens, NEW.cache_write_tokens,
                                    NEW.output_tokens, NEW.price_input, NEW.price_cached_input,
                                    NEW.price_cache_write, NEW.price_output);
    IF TG_TABLE_NAME = 'brain_analysis_log' THEN
        NEW.token_cost_usd := cost;
    ELSE
        NEW.cost_usd := cost;
    END IF;
    RETURN NEW;
END;
$$;

-- Before every other trigger of the row: what they read of its cost is the database's.
CREATE TRIGGER brain_analysis_log_03_cost BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION call_cost_stamp_v1();

CREATE TRIGGER brain_eval_judge_suggestion_03_cost BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION call_cost_stamp_v1();

CREATE TRIGGER eval_takes_quality_judge_verdicts_03_cost BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION call_cost_stamp_v1();

CREATE TRIGGER eval_work_quality_judge_verdicts_03_cost BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION call_cost_stamp_v1();
