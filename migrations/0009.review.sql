-- The review app a person uses for hours (issue 23): a reviewer's comment has a limit the database checks; the reference answer of a catalog question (its expected findings and pass criteria) reads only once the reviewer's numbers are saved, recorded so that no rollback erases it; a reviewer reads no pass criteria any other way.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- =============================================================================================
-- A comment's limit
-- =============================================================================================
-- 4000 characters (docs/review-web.md): the web form and the terminal say so before anything is
-- sent. NOT VALID: a longer comment stored before this migration stays (the ledger is
-- append-only: it could never be shortened); every new or changed one is checked.
ALTER TABLE brain_eval_question_score
    ADD CONSTRAINT brain_eval_question_score_comment_length CHECK (char_length(reviewer_comments) <= 4000) NOT VALID;

-- =============================================================================================
-- The reference answer, after the blind score
-- =============================================================================================
-- When a reviewer was first shown a question's reference answer; written only by
-- brain_eval_show_reference_v1, readable through brain_eval_reference_v1 only in a transaction
-- after the one that wrote it. entries_before: the question's last trail entry then, so every
-- reviewer value entered after seeing the reference is an entry with a higher entry_id.
CREATE TABLE brain_eval_reference_shown (
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    shown_by         name        NOT NULL,
    shown_at         timestamptz NOT NULL DEFAULT now(),
    shown_txid       bigint      NOT NULL,
    entries_before   bigint      NOT NULL,
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_reference_shown_pkey PRIMARY KEY (eval_run_id, question_id),
    -- The one CASCADE: the row goes with its question row, inside the purge only (the guard).
    CONSTRAINT brain_eval_reference_shown_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id) ON DELETE CASCADE,
    CONSTRAINT brain_eval_reference_shown_reviewer_fkey FOREIGN KEY (reviewer_user_id)
        REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_reference_shown_entries_not_negative CHECK (entries_before >= 0)
);
CREATE INDEX brain_eval_reference_shown_reviewer_idx ON brain_eval_reference_shown (reviewer_user_id);
CREATE INDEX brain_eval_reference_shown_run_created_idx ON brain_eval_reference_shown (run_created_at);

\ir ../triggers/brain_eval/brain_eval_reference_shown_guard_v1.sql
\ir ../sql/brain_eval/brain_eval_show_reference_v1.sql
\ir ../sql/brain_eval/brain_eval_reference_v1.sql

CREATE TRIGGER brain_eval_reference_shown_00_append_only BEFORE UPDATE OR DELETE ON brain_eval_reference_shown
    FOR EACH ROW EXECUTE FUNCTION brain_eval_reference_shown_guard_v1();
CREATE TRIGGER brain_eval_reference_shown_00_no_truncate BEFORE TRUNCATE ON brain_eval_reference_shown
    FOR EACH STATEMENT EXECUTE FUNCTION brain_eval_reference_shown_guard_v1();

-- RLS enabled and FORCEd, every trigger ENABLE ALWAYS, the owner and code roles' policies, the owner
-- role's SELECT only (v2: no privilege that would let it LOCK the table against readers).
CALL seal_tables_v2();
-- Its journal triggers (migration 0006; docs/ledger.md): every ledger table's rows are journalled.
CALL journal_attach_v1();
-- Not even the owner role inserts into it: the show function alone does (the guard refuses the rest).
REVOKE INSERT ON brain_eval_reference_shown FROM evalledger_owner;

-- Who reads what was shown: the reviewer its own (hot tier), RevOps the hot tier, auditors everything.
CREATE POLICY brain_eval_reference_shown_reviewer ON brain_eval_reference_shown FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
CREATE POLICY brain_eval_reference_shown_revops ON brain_eval_reference_shown FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());
CREATE POLICY brain_eval_reference_shown_auditor ON brain_eval_reference_shown FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_reference_shown TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- A reviewer reads a catalog's questions, texts and sources, but not their pass criteria (the
-- expected findings among them) nor the catalog document that holds them too: those come through
-- brain_eval_reference_v1, after the blind score.
REVOKE SELECT ON brain_eval_catalog, brain_eval_catalog_question FROM evalledger_reviewer;
GRANT SELECT (catalog_version, document_sha256, question_count, source_file, loaded_at)
    ON brain_eval_catalog TO evalledger_reviewer;
GRANT SELECT (catalog_version, position, question_id, question_type, question_text, sources, uses_stale_fixture,
              created_at)
    ON brain_eval_catalog_question TO evalledger_reviewer;

REVOKE EXECUTE ON FUNCTION brain_eval_reference_shown_guard_v1(), brain_eval_show_reference_v1(uuid, text),
    brain_eval_reference_v1(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brain_eval_show_reference_v1(uuid, text), brain_eval_reference_v1(uuid, text)
    TO evalledger_reviewer;

RESET ROLE;
