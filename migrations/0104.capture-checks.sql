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

\ir ../sql/capture/capture_all_distinct_v1.sql
GRANT EXECUTE ON FUNCTION capture_all_distinct_v1(text[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;

-- The constraints swapped under their names, in one ALTER TABLE per table.
\ir steps/drop_guard_off.sql
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
\ir steps/drop_guard_on.sql
