-- A question's pass thresholds out of the reviewer's reach (issue 17, class 8), and the ledger's recompute deciding by the versions the triggers decide by (issue 18).

-- The reviewer's UPDATE of a question row ran the whole write trigger with its own rights, so the
-- reviewer held EXECUTE on what the trigger read: brain_eval_question_policy_v2, which hands back a
-- harness question's numeric thresholds (max hallucinations, minimum citation rate, coherence...),
-- and question_passes_v2, which answers whether numbers of the caller's choosing pass. Either told a
-- reviewer, before scoring and unrecorded, where each line lies. The write trigger (v4) now checks
-- only who may change what; a second BEFORE UPDATE trigger, SECURITY DEFINER, judges the row
-- (brain_eval_question_score_judge_v1), and no application role keeps EXECUTE on the helpers.
-- A reviewer still reads the verdict of its own row once saved (question_passed): each score it
-- saves is an entry of the review trail, so probing the thresholds by rescoring is on the record.
--
-- The recompute behind `ledger verify --recompute` named brain_eval_decide_v1 and question_passes_v1,
-- which 0005 replaced in the triggers (a criterion or the lever rule applied by the prompt's brains,
-- not the label alone): a run of a prompt registered under another brain was re-derived by a rule
-- that no longer decides. ledger_recompute_v3 calls what the triggers call.
SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

\ir ../sql/brain_eval/brain_eval_question_verdict_v1.sql
\ir ../triggers/brain_eval/brain_eval_question_score_write_v4.sql
\ir ../triggers/brain_eval/brain_eval_question_score_judge_v1.sql
\ir ../sql/core/ledger_recompute_brain_eval_v2.sql
\ir ../sql/core/ledger_recompute_v3.sql

REVOKE EXECUTE ON FUNCTION brain_eval_question_verdict_v1(brain_eval_question_score),
    brain_eval_question_score_write_v4(), brain_eval_question_score_judge_v1(),
    ledger_recompute_brain_eval_v2(brain_eval_log), ledger_recompute_v3() FROM PUBLIC;

CREATE OR REPLACE TRIGGER brain_eval_question_score_10_write BEFORE INSERT OR UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v4();
CREATE TRIGGER brain_eval_question_score_15_judge BEFORE UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_judge_v1();
ALTER TABLE brain_eval_question_score
    ENABLE ALWAYS TRIGGER brain_eval_question_score_10_write,
    ENABLE ALWAYS TRIGGER brain_eval_question_score_15_judge;

REVOKE EXECUTE ON FUNCTION brain_eval_question_policy_v2(uuid, text),
    question_passes_v2(brain_eval_question_score, jsonb, text[], jsonb)
    FROM evalledger_runner, evalledger_reviewer, evalledger_owner;

GRANT EXECUTE ON FUNCTION ledger_recompute_v3() TO evalledger_owner, evalledger_auditor;
REVOKE EXECUTE ON FUNCTION ledger_recompute_v2() FROM evalledger_owner, evalledger_auditor;

RESET ROLE;
