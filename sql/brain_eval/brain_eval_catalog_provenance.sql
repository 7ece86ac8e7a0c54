-- The captured rows (eval_candidates, by their key: created_at, id) a catalog question was drafted
-- from (`evalledger catalog draft --from-capture`), as its document's provenance lists them: one
-- row per listed capture, in the document's order. Read from the document, as the question rows
-- are (brain_eval_catalog_provenance_admit_v1), within the statement that loaded the catalog, and
-- never changed: a loaded catalog keeps the production traffic it came from.
CREATE TABLE brain_eval_catalog_provenance (
    catalog_version    varchar(32) NOT NULL,
    question_id        varchar(16) NOT NULL,
    position           integer     NOT NULL,
    capture_id         bigint      NOT NULL,
    capture_created_at timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_eval_catalog_provenance_pkey PRIMARY KEY (catalog_version, question_id, position),
    CONSTRAINT brain_eval_catalog_provenance_once UNIQUE (catalog_version, question_id, capture_id),
    CONSTRAINT brain_eval_catalog_provenance_question_fkey FOREIGN KEY (catalog_version, question_id)
        REFERENCES brain_eval_catalog_question (catalog_version, question_id),
    CONSTRAINT brain_eval_catalog_provenance_position_positive CHECK (position >= 1),
    CONSTRAINT brain_eval_catalog_provenance_capture_id_not_negative CHECK (capture_id >= 0),
    -- A document's capture time is one the project's readers can read back (readable_time_v1).
    CONSTRAINT brain_eval_catalog_provenance_capture_time_readable CHECK (
        capture_created_at >= '0001-01-02 00:00:00+00'::timestamptz
        AND capture_created_at <= '9999-12-30 00:00:00+00'::timestamptz)
);

-- Reference data, as the questions are: the runner, RevOps and auditors read it (an auditor
-- follows a question to the captured rows it came from, as far as their tier lets them read
-- those). A reviewer reads no captured traffic; brain agents and production users: nothing.
CREATE POLICY brain_eval_catalog_provenance_read ON brain_eval_catalog_provenance FOR SELECT
    TO evalledger_runner, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_catalog_provenance TO evalledger_runner, evalledger_revops, evalledger_auditor;
