-- Which rubric a suite's runs are judged by when they name none: insert-only history that only a
-- migration writes (the owner role may register rubrics, never activate one), never "the newest".
CREATE TABLE rubric_activation (
    activation_id bigint      GENERATED ALWAYS AS IDENTITY,
    suite         text        NOT NULL,
    rubric_id     bigint      NOT NULL,
    reason        text        NOT NULL,
    activated_at  timestamptz NOT NULL DEFAULT now(),
    activated_by  name        NOT NULL DEFAULT session_user,
    CONSTRAINT rubric_activation_pkey PRIMARY KEY (activation_id),
    CONSTRAINT rubric_activation_rubric_fkey FOREIGN KEY (rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT rubric_activation_reason_not_blank CHECK (btrim(reason) <> '')
);

CREATE POLICY rubric_activation_read ON rubric_activation FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON rubric_activation TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
