-- The reference answer's window on the database's clock (issue 17, class 1): a reviewer's reveal and read of a question's reference answer count the hot tier from the statement's start, as every read policy does since 0005.

-- brain_eval_show_reference_v1 and brain_eval_reference_v1 (migration 0009, folded into the
-- baseline) counted the hot tier from the transaction's start: a reviewer holding a transaction
-- open across the 24-month boundary could still reveal and read the reference answer of a run
-- that had just gone cold. Their v2s ask hot_tier_start_v1() (utc_ago_v1: UTC, the statement's
-- start), and the reveal asks a question's needs as completion does (question_needs_v2, by the
-- prompt's brains). The reviewer keeps EXECUTE on the v2s only.
SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

\ir ../sql/brain_eval/brain_eval_show_reference_v2.sql
\ir ../sql/brain_eval/brain_eval_reference_v2.sql

REVOKE EXECUTE ON FUNCTION brain_eval_show_reference_v2(uuid, text), brain_eval_reference_v2(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brain_eval_show_reference_v2(uuid, text), brain_eval_reference_v2(uuid, text)
    TO evalledger_reviewer;
REVOKE EXECUTE ON FUNCTION brain_eval_show_reference_v1(uuid, text), brain_eval_reference_v1(uuid, text)
    FROM evalledger_reviewer;

RESET ROLE;
