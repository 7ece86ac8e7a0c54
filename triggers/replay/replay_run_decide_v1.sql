-- replay_run_decide_v1: at completion (which complete_once_v1 admits first), every captured row the
-- run planned must have its replayed row; the database then writes what it decided from them and
-- the run's rubric (replay_decision_v1): the decision, its rationale and the summary it rests on.
-- One completion needs no whole run: one its caller cannot read (a run left open past the hot tier,
-- closed by the admission of a new run of the same request, replay_run_admit_v1: no runner could
-- ever finish it), which replay_decision_v1 decides inconclusive. Whoever can read a run (and so
-- resume it) completes it whole.
CREATE FUNCTION evalledger.replay_run_decide_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    asked bigint;
    decided jsonb;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('replay run');
    asked := (SELECT count(*) FROM evalledger.replay_query q WHERE q.replay_run_id = NEW.replay_run_id);
    IF asked < NEW.planned AND evalledger.caller_reads_v1(NEW.created_at, NULL) THEN
        RAISE EXCEPTION 'evalledger: replay run % is not whole: % of % captured rows replayed',
                NEW.replay_run_id, asked, NEW.planned
            USING ERRCODE = 'check_violation', CONSTRAINT = 'replay_run_complete_run_is_whole',
                  HINT = 'running the same replay again asks only the rows not replayed yet';
    END IF;
    decided := evalledger.replay_decision_v1(NEW);
    NEW.decision := decided ->> 'decision';
    NEW.rationale := decided ->> 'rationale';
    NEW.summary := decided;
    RETURN NEW;
END;
$$;

CREATE TRIGGER replay_run_20_decide BEFORE UPDATE ON replay_run
    FOR EACH ROW EXECUTE FUNCTION replay_run_decide_v1();
