-- Write costs independent of history (issue 20): a question row carries its run's reviewer, so the reviewer's policy compares the row's own columns instead of collecting every run of the reviewer per statement.

-- The reviewer's policy on question rows asked `eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM
-- brain_eval_log l))`: an InitPlan that, under brain_eval_log's reviewer policy, collects every hot
-- run of the reviewer, once for USING and once for WITH CHECK, in every statement, the one-row
-- UPDATE of a score among them (30 per run). At 1,000 runs of history that made the review step
-- 4.5 times slower than on an empty ledger. The row now carries its run's reviewer, stamped by the
-- write trigger at insert as it stamps the run's clock (run_created_at); the policy compares it with
-- the caller's reviewer id (an InitPlan of one value, as brain_eval_review_entry's and
-- brain_eval_run_review's policies do): one comparison per row whatever the history, and still no
-- lookup per row (tests/db/test_retention.py). What the policy admits is unchanged: a run's
-- reviewer_user_id never changes (complete_once_v1 lets only completed_at change), and the row's
-- copy never changes either (the write trigger lets only the reviewer's fields change).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

\ir ../triggers/brain_eval/brain_eval_question_score_write_v3.sql

ALTER TABLE brain_eval_question_score ADD COLUMN run_reviewer_user_id uuid;

-- The backfill: for this transaction (which holds the table's ACCESS EXCLUSIVE lock) the write and
-- trail triggers fire on INSERT and DELETE only, so the UPDATE below is neither refused as a change
-- to a completed run nor recorded as a reviewer's entry; the ALTER TABLE after it puts both back,
-- ENABLE ALWAYS, the write trigger as v3.
CREATE OR REPLACE TRIGGER brain_eval_question_score_10_write BEFORE INSERT ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v3();
CREATE OR REPLACE TRIGGER brain_eval_question_score_20_trail AFTER DELETE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_review_trail_v1();
UPDATE brain_eval_question_score q SET run_reviewer_user_id = l.reviewer_user_id
  FROM brain_eval_log l WHERE l.eval_run_id = q.eval_run_id;
CREATE OR REPLACE TRIGGER brain_eval_question_score_10_write BEFORE INSERT OR UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_question_score_write_v3();
CREATE OR REPLACE TRIGGER brain_eval_question_score_20_trail AFTER UPDATE ON brain_eval_question_score
    FOR EACH ROW EXECUTE FUNCTION brain_eval_review_trail_v1();
ALTER TABLE brain_eval_question_score
    ALTER COLUMN run_reviewer_user_id SET NOT NULL,
    ADD CONSTRAINT brain_eval_question_score_run_reviewer_fkey
        FOREIGN KEY (run_reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    ENABLE ALWAYS TRIGGER brain_eval_question_score_10_write,
    ENABLE ALWAYS TRIGGER brain_eval_question_score_20_trail;

ALTER POLICY brain_eval_question_score_reviewer ON brain_eval_question_score
    USING (run_created_at >= hot_tier_start_v1()
           AND run_reviewer_user_id = (SELECT reviewer_id_of_v1(current_user)))
    WITH CHECK (run_created_at >= hot_tier_start_v1()
                AND run_reviewer_user_id = (SELECT reviewer_id_of_v1(current_user)));

-- The question row has a new column: its canon-v1 form (migration 0006; docs/ledger.md) follows, and
-- every row it holds gets a BASELINE entry as it stands now.
CALL journal_attach_v1();

RESET ROLE;
