-- The capture table's two "deduplicated" CHECKs (seed 001: retrieved_slugs and source_ids hold no
-- element twice) cost a captured row a quarter of its server time (issue 20, item 4): each counted
-- the distinct elements capture_distinct_v1 returned, a SQL function with an aggregate, which is
-- never inlined. The same CHECKs, under the same names, now ask capture_all_distinct_v1, which
-- says the same of every array (a test holds it to Python's set) for about a quarter of the cost;
-- so does a harness run's CHECK of its question ids, the one other caller, and v1 goes. Adding
-- them re-checks every captured row of every partition, with captures waiting meanwhile (see the
-- CHANGELOG for how long). Granted as v1 was: no role may do or read anything it could not before.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- capture_all_distinct_v1: whether no element of a text array occurs twice, for the "deduplicated"
-- CHECKs of seed 001 (retrieved_slugs, source_ids; their CHECKs refuse a NULL element apart).
-- Elements are compared with text's =, as DISTINCT compares them. It replaces counting the
-- elements capture_distinct_v1 gave back: a SQL function with an aggregate is never inlined, and
-- running it took a quarter of a captured row's server time (bench/capture.py). Short arrays, the
-- usual ones, compare each pair in a loop; a longer one counts its distinct elements once.
-- search_path pinned, so no operator of a session's own schema takes the place of text's =.
CREATE FUNCTION evalledger.capture_all_distinct_v1(items text[]) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n integer := cardinality(items);
BEGIN
    IF n > 32 THEN
        RETURN n = (SELECT count(DISTINCT i) FROM unnest(items) AS i);
    END IF;
    FOR i IN 2 .. n LOOP
        FOR j IN 1 .. i - 1 LOOP
            IF items[i] = items[j] THEN
                RETURN false;
            END IF;
        END LOOP;
    END LOOP;
    RETURN true;
END;
$$;

GRANT EXECUTE ON FUNCTION capture_all_distinct_v1(text[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- The constraints swapped under their names, in one ALTER TABLE per table.
-- For a migration that drops a function, trigger or constraint of the ledger, which the drop guard
-- refuses: its owner, the superuser who installed it, turns it off here, inside the migration's
-- transaction (where no superuser installed there is no drop guard), and drop_guard_on.sql turns
-- it back on before the migration ends. The session acts as the code role after this.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE eval_candidates
    DROP CONSTRAINT eval_candidates_slugs_distinct,
    DROP CONSTRAINT eval_candidates_source_ids_distinct,
    ADD CONSTRAINT eval_candidates_slugs_distinct CHECK (
        array_position(retrieved_slugs, NULL) IS NULL AND evalledger.capture_all_distinct_v1(retrieved_slugs)),
    ADD CONSTRAINT eval_candidates_source_ids_distinct CHECK (
        array_position(source_ids, NULL) IS NULL AND evalledger.capture_all_distinct_v1(source_ids));
ALTER TABLE brain_eval_harness_run
    DROP CONSTRAINT brain_eval_harness_run_questions_distinct,
    ADD CONSTRAINT brain_eval_harness_run_questions_distinct CHECK (
        array_position(question_ids, NULL) IS NULL AND cardinality(question_ids) > 0
        AND evalledger.capture_all_distinct_v1(question_ids));
DROP FUNCTION capture_distinct_v1(text[]);
-- The drop guard back on, after the drops drop_guard_off.sql let through (see it).
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
