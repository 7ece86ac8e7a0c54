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
