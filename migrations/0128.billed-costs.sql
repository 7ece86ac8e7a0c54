-- Costs as billed (issue 38, item 3). A model call's row stores the usage its reply reported in
-- every token class the providers bill differently: input_tokens (every prompt token, as before),
-- and of them cached_input_tokens read from the provider's prompt cache and cache_write_tokens
-- written to it (the runner adds Anthropic's cache reads and writes, which it reports beside its
-- input_tokens, into input_tokens; OpenAI counts cached tokens inside prompt_tokens already). The
-- row also stores the price it is billed at (USD per million tokens of each class, and the day the
-- price was taken), and with a price the database computes the row's cost from them
-- (call_cost_v1, stamped by call_cost_stamp_v1 before every other trigger of the row): the caller's
-- number no longer counts. Rows without a price (recorded replies, unpriced models, imports) keep
-- the cost they were given; the rows stored before keep theirs (their new columns read 0 and NULL).
-- The four call tables: takes-quality and work-quality verdicts, brain-eval judge suggestions, and
-- the brain's own analyses. Bounded: the cached and written tokens are within input_tokens, a price
-- is whole or absent, 0 to 1,000,000 USD per million tokens, finite, taken on or after 2020-01-01
-- and not after the day the row is written. The journal's canonical form of each table takes its
-- new columns (journal_attach_v2).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- call_cost_v1: what one model call costs as the provider bills it, in USD, exactly, from the usage
-- its reply reported and the price of each token class (USD per million tokens). input_tokens is
-- every prompt token (the runner counts Anthropic's cache reads and writes into it, which Anthropic
-- reports beside its input_tokens, as OpenAI counts cached tokens inside prompt_tokens): of them,
-- cached_input_tokens are billed at the cached rate, cache_write_tokens at the cache-write rate, the
-- rest at the input rate; the reply's tokens at the output rate. A batch call's row carries the
-- batch rates. No rounding: only a run's total is rounded, where the seed's column says so.
CREATE FUNCTION evalledger.call_cost_v1(input_tokens integer, cached_input_tokens integer, cache_write_tokens integer,
                                        output_tokens integer, price_input numeric,
                                        price_cached_input numeric, price_cache_write numeric,
                                        price_output numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT trim_scale((greatest(input_tokens::bigint - cached_input_tokens - cache_write_tokens, 0) * price_input
                       + cached_input_tokens::bigint * price_cached_input
                       + cache_write_tokens::bigint * price_cache_write
                       + output_tokens::bigint * price_output) * 0.000001)
$$;

-- Readers may price a call the way the ledger does (the BI and the auditor's checks).
GRANT EXECUTE ON FUNCTION call_cost_v1(integer, integer, integer, integer, numeric, numeric, numeric, numeric)
    TO evalledger_runner, evalledger_revops, evalledger_auditor;

ALTER TABLE eval_takes_quality_judge_verdicts
    ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN price_input numeric,
    ADD COLUMN price_cached_input numeric,
    ADD COLUMN price_cache_write numeric,
    ADD COLUMN price_output numeric,
    ADD COLUMN price_as_of date,
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_price_input_finite CHECK (finite_v1(price_input)),
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    ADD CONSTRAINT eval_takes_quality_judge_verdicts_price_output_finite CHECK (finite_v1(price_output));

GRANT INSERT (cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
              price_cache_write, price_output, price_as_of)
    ON eval_takes_quality_judge_verdicts TO evalledger_runner;

ALTER TABLE eval_work_quality_judge_verdicts
    ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN price_input numeric,
    ADD COLUMN price_cached_input numeric,
    ADD COLUMN price_cache_write numeric,
    ADD COLUMN price_output numeric,
    ADD COLUMN price_as_of date,
    ADD CONSTRAINT eval_work_quality_judge_verdicts_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    ADD CONSTRAINT eval_work_quality_judge_verdicts_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    ADD CONSTRAINT eval_work_quality_judge_verdicts_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    ADD CONSTRAINT eval_work_quality_judge_verdicts_price_input_finite CHECK (finite_v1(price_input)),
    ADD CONSTRAINT eval_work_quality_judge_verdicts_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    ADD CONSTRAINT eval_work_quality_judge_verdicts_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    ADD CONSTRAINT eval_work_quality_judge_verdicts_price_output_finite CHECK (finite_v1(price_output));

GRANT INSERT (cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
              price_cache_write, price_output, price_as_of)
    ON eval_work_quality_judge_verdicts TO evalledger_runner;

ALTER TABLE brain_eval_judge_suggestion
    ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN price_input numeric,
    ADD COLUMN price_cached_input numeric,
    ADD COLUMN price_cache_write numeric,
    ADD COLUMN price_output numeric,
    ADD COLUMN price_as_of date,
    ADD CONSTRAINT brain_eval_judge_suggestion_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    ADD CONSTRAINT brain_eval_judge_suggestion_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    ADD CONSTRAINT brain_eval_judge_suggestion_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    ADD CONSTRAINT brain_eval_judge_suggestion_price_input_finite CHECK (finite_v1(price_input)),
    ADD CONSTRAINT brain_eval_judge_suggestion_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    ADD CONSTRAINT brain_eval_judge_suggestion_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    ADD CONSTRAINT brain_eval_judge_suggestion_price_output_finite CHECK (finite_v1(price_output));

GRANT INSERT (cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
              price_cache_write, price_output, price_as_of)
    ON brain_eval_judge_suggestion TO evalledger_runner;

ALTER TABLE brain_analysis_log
    ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN price_input numeric,
    ADD COLUMN price_cached_input numeric,
    ADD COLUMN price_cache_write numeric,
    ADD COLUMN price_output numeric,
    ADD COLUMN price_as_of date,
    ADD CONSTRAINT brain_analysis_log_cache_tokens_within_input CHECK (
        cached_input_tokens >= 0 AND cache_write_tokens >= 0
        AND cached_input_tokens::bigint + cache_write_tokens <= input_tokens),
    ADD CONSTRAINT brain_analysis_log_price_whole CHECK (
        (price_input IS NULL) = (price_cached_input IS NULL)
        AND (price_input IS NULL) = (price_cache_write IS NULL)
        AND (price_input IS NULL) = (price_output IS NULL)
        AND (price_input IS NULL) = (price_as_of IS NULL)),
    ADD CONSTRAINT brain_analysis_log_price_bounded CHECK (
        price_input >= 0 AND price_input <= 1000000 AND price_cached_input BETWEEN 0 AND 1000000
        AND price_cache_write BETWEEN 0 AND 1000000 AND price_output BETWEEN 0 AND 1000000
        AND price_as_of >= DATE '2020-01-01'),
    ADD CONSTRAINT brain_analysis_log_price_input_finite CHECK (finite_v1(price_input)),
    ADD CONSTRAINT brain_analysis_log_price_cached_input_finite CHECK (finite_v1(price_cached_input)),
    ADD CONSTRAINT brain_analysis_log_price_cache_write_finite CHECK (finite_v1(price_cache_write)),
    ADD CONSTRAINT brain_analysis_log_price_output_finite CHECK (finite_v1(price_output));

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

ALTER TABLE brain_analysis_log ENABLE ALWAYS TRIGGER brain_analysis_log_03_cost;
ALTER TABLE brain_eval_judge_suggestion ENABLE ALWAYS TRIGGER brain_eval_judge_suggestion_03_cost;
ALTER TABLE eval_takes_quality_judge_verdicts ENABLE ALWAYS TRIGGER eval_takes_quality_judge_verdicts_03_cost;
ALTER TABLE eval_work_quality_judge_verdicts ENABLE ALWAYS TRIGGER eval_work_quality_judge_verdicts_03_cost;

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
