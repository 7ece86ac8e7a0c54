-- A catalog drafted from production traffic keeps its provenance (issue 40, item 2): `evalledger
-- catalog draft --from-capture` writes each question's captured rows into its document
-- (provenance.captures), and loading the catalog now stores them as rows of
-- brain_eval_catalog_provenance, read from the document as the question rows are, append-only and
-- journalled like the other catalog tables. A catalog without provenance loads as before; nothing
-- any role could do or read before changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

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

-- brain_eval_catalog_question_provenance_v1: a loaded question's provenance becomes provenance rows,
-- one per capture its document entry lists (provenance.captures), in that order, within the
-- statement that loaded the catalog. A question without provenance (written by hand) has none.
CREATE FUNCTION evalledger.brain_eval_catalog_question_provenance_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    captures jsonb;
BEGIN
    SELECT c.document -> 'questions' -> (NEW.position - 1) -> 'provenance' -> 'captures' INTO captures
      FROM evalledger.brain_eval_catalog c WHERE c.catalog_version = NEW.catalog_version;
    IF captures IS NULL OR jsonb_typeof(captures) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(captures) <> 'array' OR jsonb_array_length(captures) = 0 THEN
        RAISE EXCEPTION 'evalledger: question % of catalog %: provenance.captures is a non-empty array',
                NEW.question_id, NEW.catalog_version
            USING ERRCODE = 'check_violation', COLUMN = 'provenance';
    END IF;
    INSERT INTO evalledger.brain_eval_catalog_provenance (catalog_version, question_id, position)
    SELECT NEW.catalog_version, NEW.question_id, n::integer
      FROM generate_series(1, jsonb_array_length(captures)) AS n;
    RETURN NULL;
END;
$$;

CREATE TRIGGER brain_eval_catalog_question_20_provenance AFTER INSERT ON brain_eval_catalog_question
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_question_provenance_v1();

-- brain_eval_catalog_provenance_admit_v1: a provenance row is its question's document entry's
-- capture at its position and nothing else: the capture id and time are read from the document
-- (provenance.captures[position - 1]: {"id": ..., "created_at": ...}), so no capture can be added
-- to, or changed in, a loaded question's provenance (a position taken twice is a duplicate key).
CREATE FUNCTION evalledger.brain_eval_catalog_provenance_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    capture jsonb;
BEGIN
    SELECT c.document -> 'questions' -> (q.position - 1) -> 'provenance' -> 'captures' -> (NEW.position - 1)
      INTO capture
      FROM evalledger.brain_eval_catalog_question q
      JOIN evalledger.brain_eval_catalog c ON c.catalog_version = q.catalog_version
     WHERE q.catalog_version = NEW.catalog_version AND q.question_id = NEW.question_id;
    IF capture IS NULL OR jsonb_typeof(capture) <> 'object' OR jsonb_typeof(capture -> 'id') <> 'number'
       OR jsonb_typeof(capture -> 'created_at') <> 'string' THEN
        RAISE EXCEPTION 'evalledger: question % of catalog % lists no capture {"id", "created_at"} at position %',
                NEW.question_id, NEW.catalog_version, NEW.position
            USING ERRCODE = 'check_violation', COLUMN = 'position';
    END IF;
    NEW.capture_id := (capture ->> 'id')::bigint;
    NEW.capture_created_at := (capture ->> 'created_at')::timestamptz;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_catalog_provenance_10_admit BEFORE INSERT ON brain_eval_catalog_provenance
    FOR EACH ROW EXECUTE FUNCTION brain_eval_catalog_provenance_admit_v1();

-- Append-only: no UPDATE, no DELETE (retention knows no clock of the catalog's, so never), no
-- TRUNCATE (refuse_change_v3).
CALL guard_append_only_v1(ARRAY['brain_eval_catalog_provenance:UPDATE OR DELETE:refuse_change_v3']);

-- Row-level security, the owner's and code's policies and ENABLE ALWAYS on the new table; the
-- journal covers it.
CALL seal_tables_v2();
CALL journal_attach_v2();
