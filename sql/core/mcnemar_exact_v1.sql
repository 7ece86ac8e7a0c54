-- mcnemar_exact_v1: McNemar's exact test for paired pass/fail, its two-sided p-value from the
-- discordant pairs alone (b: passed in A, failed in B; c: the reverse). Under no change each
-- discordant pair goes either way with probability 1/2:
--   p = min(1, 2 * P(X <= min(b, c))),  X ~ Binomial(b + c, 1/2)
-- (statsmodels' mcnemar(exact=True)); 1 when there is no discordant pair. The binomial terms are
-- summed in logarithms, so thousands of pairs do not overflow (a p-value below e^-745 is 0). NULL for a negative
-- count. docs/statistics.md, "Paired".
CREATE FUNCTION evalledger.mcnemar_exact_v1(b bigint, c bigint) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n bigint := b + c;
    m bigint := least(b, c);
    log_term double precision := 0;   -- ln C(n, k), from k = 0
    logs double precision[] := ARRAY[0::double precision];
    top double precision;
    total double precision := 0;
    k bigint;
BEGIN
    IF b < 0 OR c < 0 THEN
        RETURN NULL;
    END IF;
    IF n = 0 THEN
        RETURN 1;
    END IF;
    FOR k IN 1 .. m LOOP
        log_term := log_term + ln((n - k + 1)::double precision) - ln(k::double precision);
        logs := logs || log_term;
    END LOOP;
    -- C(n, k) grows with k up to n / 2, and m <= n / 2: the last term is the largest.
    top := logs[m + 1];
    FOR k IN 0 .. m LOOP
        IF logs[k + 1] - top > -745 THEN
            total := total + exp(logs[k + 1] - top);
        END IF;
    END LOOP;
    -- Below e^-745 a double is 0 (PostgreSQL's exp() refuses to underflow).
    RETURN CASE WHEN top - n * ln(2.0::double precision) + ln(total) < -745 THEN 0
                ELSE least(1.0, 2 * exp(top - n * ln(2.0::double precision) + ln(total))) END;
END;
$$;
GRANT EXECUTE ON FUNCTION mcnemar_exact_v1(bigint, bigint)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
