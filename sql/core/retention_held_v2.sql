-- UTC windows, READ COMMITTED, holds by the prompt, no snapshot chain pins (issue 17).
-- retention_held_v2: true when a legal hold not yet released covers a row: its run, one of its
-- brains (`brains`: the row's label and every brain of its prompt, run_brains_v1: a hold on a brain
-- keeps what runs its prompt, whatever the label), or a date range that holds its tier clock. The
-- one home of "under hold" for the purge, its guard and the plan.
CREATE FUNCTION evalledger.retention_held_v2(clock timestamptz, brains text[], run uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (
        SELECT 1 FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
           AND (h.eval_run_id = run OR h.target_id = ANY (brains) OR clock BETWEEN h.held_from AND h.held_to))
$$;
