-- replay_query_admit_v1: one replayed query of an open replay run the caller may read. For a ledger
-- window the captured fields are the database's: copied from the captured row (capture_id at
-- capture_created_at), which must be one of the run's window, tool and callers; supplied, they are
-- refused. For a file the runner supplies them as the file has them. The runner says what the
-- adapter did (outcome); the database decides the status: an answer in the captured mode is
-- replayed (vector_enabled as captured: a row captured keyword-only is replayed keyword-only), an
-- answer in another mode or a decline is not replayable, and a failure is an adapter failure; a
-- replayed query's recall, jaccard, rbo (with the rubric's rbo_p), sources gained and lost and
-- latency ratio (NULL when the captured latency was 0) are computed here, unrounded, and refused
-- when supplied. The tier clock is the run's recording time. Outcome capture_purged is the
-- retention purge's alone (its marker, capture_purging_v1): a captured row of an open run's window
-- the run has not replayed, recorded with its captured fields just before the purge drops its
-- month, so the run can still be completed and decided, never passing on it (replay_decision_v1);
-- a run completed meanwhile needs no such row (skipped). A runner's row whose captured row the
-- purge took while the runner waited for it is skipped when the purge recorded that row already.
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
        NEW.tool_name := cap.tool_name;
        NEW.captured_slugs := cap.retrieved_slugs;
        NEW.captured_chunk_ids := cap.retrieved_chunk_ids;
        NEW.captured_source_ids := cap.source_ids;
        NEW.captured_vector_enabled := cap.vector_enabled;
        NEW.captured_expand_enabled := cap.expand_enabled;
        NEW.captured_detail := cap.detail;
        NEW.captured_latency_ms := cap.latency_ms;
    END IF;

    NEW.status := CASE WHEN purged THEN 'capture_purged'
                       WHEN NEW.outcome = 'adapter_failed' THEN 'adapter_failed'
                       WHEN NEW.outcome = 'answered' AND NEW.vector_enabled = NEW.captured_vector_enabled THEN 'replayed'
                       ELSE 'not_replayable' END;
    IF NEW.outcome = 'answered' AND NEW.status = 'not_replayable' THEN
        NEW.error := coalesce(NEW.error, format('answered with vector_enabled %s, captured %s: another mode, not counted',
                                                NEW.vector_enabled::text, NEW.captured_vector_enabled::text));
    END IF;
    IF NEW.status = 'replayed' THEN
        NEW.recall := evalledger.replay_recall_v1(NEW.captured_slugs, NEW.retrieved_slugs);
        NEW.jaccard := evalledger.replay_jaccard_v1(NEW.captured_slugs, NEW.retrieved_slugs);
        NEW.rbo := evalledger.replay_rbo_v1(NEW.captured_chunk_ids, NEW.retrieved_chunk_ids,
                                            (SELECT (r.definition ->> 'rbo_p')::numeric FROM evalledger.rubric r
                                              WHERE r.rubric_id = run.rubric_id));
        NEW.sources_gained := ARRAY(SELECT DISTINCT s COLLATE "C" FROM unnest(NEW.source_ids) s
                                     WHERE s <> ALL (NEW.captured_source_ids) ORDER BY 1);
        NEW.sources_lost := ARRAY(SELECT DISTINCT s COLLATE "C" FROM unnest(NEW.captured_source_ids) s
                                   WHERE s <> ALL (NEW.source_ids) ORDER BY 1);
        NEW.latency_ratio := CASE WHEN NEW.captured_latency_ms > 0
                                  THEN NEW.latency_ms::numeric / NEW.captured_latency_ms::numeric END;
    END IF;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;

CREATE TRIGGER replay_query_10_admit BEFORE INSERT ON replay_query
    FOR EACH ROW EXECUTE FUNCTION replay_query_admit_v1();
