-- takes_quality_receipt_v3: the seed-000 receipt (schema_version 1) of a run, built from the run
-- row and each judge's current row per cycle (takes_quality_current_v1): the last cycle decides.
-- Over takes_quality_receipt_v1 it tells the story of calls that were retried: `errors` lists every
-- row that did not contribute, a retried one marked "retried", and every call that started and
-- got no reply; `cost_usd` is exact (never rounded) and counts what each call cost plus, for a
-- call that started and was never answered, the runner's estimate of it. A run whose current rows
-- still hold a failure outside the judges' content (a provider error, a call the budget did not
-- allow, a call with no reply) is not final: the receipt says so (`final`: false, and the message
-- says how to retry), and takes_quality_run_decide_v2 refuses to complete it. Optional fields
-- (additive at schema_version 1): run_id, seed, judges (live or recorded), final, rerun. Over
-- takes_quality_receipt_v2 (the caller-checked v1) it asks caller_reads_v1 the same way: a run the
-- caller may not read reads as one that does not exist. With repeats (--repeats K), each judge's
-- repeats count once in successes_per_cycle (a judge contributes when any repeat does), an error
-- line names its repeat when it is not the first, and the optional field repeats says K (K > 1). Built
-- by takes_quality_receipt_built_v3 once the caller may read the run; the completion's decision
-- builds its receipt there itself, whatever the run's age (issue 37, item 2).
CREATE FUNCTION evalledger.takes_quality_receipt_v3(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r
                    WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN evalledger.takes_quality_receipt_built_v3(p_run_id);
END;
$$;

-- Readers read a run's current verdicts and receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v3(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v3(bigint) TO evalledger_owner;
