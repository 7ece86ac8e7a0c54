-- require_open_v1: a run is inserted in progress (completed_at NULL) and completed later, once;
-- raises naming the run kind ('run', 'takes-quality run') and what to insert before completing.
CREATE FUNCTION evalledger.require_open_v1(run_kind text, completed_at timestamptz, rows_first text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: a % is inserted in progress: completed_at must be NULL', run_kind
            USING ERRCODE = 'check_violation', COLUMN = 'completed_at',
                  HINT = format('insert its %s, then set completed_at', rows_first);
    END IF;
END;
$$;
