-- replay_query_admit_v1: one replayed query of an open replay run the caller may read. For a ledger
-- window the captured fields are the database's: copied from the captured row (capture_id at
-- capture_created_at), which must be one the run planned: of its window, tool and callers, and
-- among the newest `planned` of them (newest first, as the runner asks them: created_at, then id),
-- so a run is decided on the rows the database counted, never on more or on older ones the runner
-- chose instead (migration 0165); supplied, the captured fields are refused. For a file the runner
-- supplies them as the file has them. The runner says what the adapter did (outcome); the database
-- decides the status and, of a replayed query, every measure (replay_query_measured_v1, with the
-- rubric's rbo_p), refused when supplied. The tier clock is the run's recording time. Outcome
-- capture_purged is the retention purge's alone (its marker, capture_purging_v1): a captured row of
-- an open run's plan the run has not replayed, recorded with its captured fields just before the
-- purge drops its month, so the run can still be completed and decided, never passing on it
-- (replay_decision_v1); a run completed meanwhile needs no such row (skipped). A runner's row whose
-- captured row the purge took while the runner waited for it is skipped when the purge recorded
-- that row already.
CREATE FUNCTION evalledger.replay_query_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.replay_run;
    cap evalledger.eval_candidates;
    purged boolean := NEW.outcome = 'capture_purged';
    readable boolean;
BEGIN
    -- FOR SHARE, as takes_quality_verdict_admit_v2: a completion waits for this row, or this row for
    -- the completion (and then sees it), so no query lands after the decision.
    SELECT * INTO run FROM evalledger.replay_run r WHERE r.replay_run_id = NEW.replay_run_id FOR SHARE;
    IF purged THEN
        IF NOT evalledger.capture_purging_v1() OR run.source IS DISTINCT FROM 'ledger' THEN
            RAISE EXCEPTION 'evalledger: only the retention purge records a captured row it takes (outcome capture_purged)'
                USING ERRCODE = 'insufficient_privilege', COLUMN = 'outcome';
        END IF;
        IF run.completed_at IS NOT NULL THEN
            RETURN NULL;  -- completed whole meanwhile: nothing of it is missing
        END IF;
    END IF;
    -- Whether the caller may read the run and (a ledger window's) captured row, asked once: what a
    -- caller reads of a clock it reads of every later one (a tier is a lower bound), so the older of
    -- the two answers for both; only when it does not is each asked again, for its own refusal.
    readable := purged OR evalledger.caller_reads_v1(
        least(run.created_at, CASE WHEN run.source = 'ledger' THEN NEW.capture_created_at END), NULL);
    IF run.replay_run_id IS NULL OR run.completed_at IS NOT NULL
       OR NOT (readable OR evalledger.caller_reads_v1(run.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no open replay run % takes replayed queries', NEW.replay_run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'replay_run_id';
    END IF;
    PERFORM evalledger.refuse_supplied_v1(
        'replay_query',
        jsonb_build_object('status', NEW.status, 'recall', NEW.recall, 'jaccard', NEW.jaccard, 'rbo', NEW.rbo,
                           'sources_gained', NEW.sources_gained, 'sources_lost', NEW.sources_lost,
                           'latency_ratio', NEW.latency_ratio));
    IF run.source = 'ledger' THEN
        PERFORM evalledger.refuse_supplied_v1(
            'replay_query',
            jsonb_build_object('tool_name', NEW.tool_name, 'captured_slugs', NEW.captured_slugs,
                               'captured_chunk_ids', NEW.captured_chunk_ids,
                               'captured_source_ids', NEW.captured_source_ids,
                               'captured_vector_enabled', NEW.captured_vector_enabled,
                               'captured_expand_enabled', NEW.captured_expand_enabled,
                               'captured_detail', NEW.captured_detail,
                               'captured_latency_ms', NEW.captured_latency_ms));
        SELECT * INTO cap FROM evalledger.eval_candidates c
         WHERE c.created_at = NEW.capture_created_at AND c.id = NEW.capture_id
           AND (run.since_at IS NULL OR c.created_at >= run.since_at) AND c.created_at < run.until_at
           AND (run.tool IS NULL OR c.tool_name = run.tool) AND (run.remote IS NULL OR c.remote = run.remote)
           AND (readable OR evalledger.caller_reads_v1(c.created_at, NULL));
        IF cap.id IS NULL THEN
            -- The purge took it while this insert waited for its lock, and recorded it for the run.
            IF EXISTS (SELECT 1 FROM evalledger.replay_query q
                        WHERE q.replay_run_id = NEW.replay_run_id AND q.capture_id = NEW.capture_id
                          AND q.status = 'capture_purged') THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION 'evalledger: captured row % (at %) is not one of replay run %''s window',
                    NEW.capture_id, NEW.capture_created_at, NEW.replay_run_id
                USING ERRCODE = 'foreign_key_violation', COLUMN = 'capture_id';
        END IF;
        -- One the run planned: fewer than `planned` rows of its window are newer. Every newer row is
        -- one the caller reads too (a tier is a lower bound), and no row is added to a window once it
        -- started (it ends at the export bound) nor taken from its newer end (the purge takes the
        -- oldest months), so this is the plan the run's start counted, whichever role asks.
        IF (SELECT count(*) FROM (
                SELECT 1 FROM evalledger.eval_candidates c
                 WHERE (c.created_at, c.id) > (cap.created_at, cap.id) AND c.created_at < run.until_at
                   AND (run.tool IS NULL OR c.tool_name = run.tool) AND (run.remote IS NULL OR c.remote = run.remote)
                 LIMIT run.planned) newer) >= run.planned THEN
            RAISE EXCEPTION 'evalledger: captured row % (at %) is not one replay run % planned: it replays the newest % '
                            'of its window', NEW.capture_id, NEW.capture_created_at, NEW.replay_run_id, run.planned
                USING ERRCODE = 'check_violation', COLUMN = 'capture_id', CONSTRAINT = 'replay_query_planned';
        END IF;
        NEW.tool_name := cap.tool_name;
        NEW.captured_slugs := cap.retrieved_slugs;
        NEW.captured_chunk_ids := cap.retrieved_chunk_ids;
        NEW.captured_source_ids := cap.source_ids;
        NEW.captured_vector_enabled := cap.vector_enabled;
        NEW.captured_expand_enabled := cap.expand_enabled;
        NEW.captured_detail := cap.detail;
        NEW.captured_latency_ms := cap.latency_ms;
    END IF;

    SELECT m.status, m.recall, m.jaccard, m.rbo, m.sources_gained, m.sources_lost, m.latency_ratio
      INTO NEW.status, NEW.recall, NEW.jaccard, NEW.rbo, NEW.sources_gained, NEW.sources_lost, NEW.latency_ratio
      FROM evalledger.replay_query_measured_v1(
               NEW, (SELECT (r.definition ->> 'rbo_p')::numeric FROM evalledger.rubric r
                      WHERE r.rubric_id = run.rubric_id)) m;
    IF NEW.outcome = 'answered' AND NEW.status = 'not_replayable' THEN
        NEW.error := coalesce(NEW.error, format('answered with vector_enabled %s, captured %s: another mode, not counted',
                                                NEW.vector_enabled::text, NEW.captured_vector_enabled::text));
    END IF;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

CREATE TRIGGER replay_query_10_admit BEFORE INSERT ON replay_query
    FOR EACH ROW EXECUTE FUNCTION replay_query_admit_v1();
