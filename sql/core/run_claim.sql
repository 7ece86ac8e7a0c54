-- A claim is an uncommitted row (run_claim_commit_refused_v1): a second runner of the same run
-- waits on the first's transaction and then finds what it recorded (or, for brain-eval, stops at
-- once), so no call is made twice. run_id is the run's id as text: a bigint of takes-quality and
-- work-quality, a uuid of brain-eval.
CREATE TABLE run_claim (
    suite       text    NOT NULL,
    run_id      text    NOT NULL,
    claimed_by  name    NOT NULL DEFAULT session_user,
    backend_pid integer NOT NULL DEFAULT pg_backend_pid(),
    CONSTRAINT run_claim_pkey PRIMARY KEY (suite, run_id),
    CONSTRAINT run_claim_suite_known CHECK (suite IN ('takes-quality', 'work-quality', 'brain-eval', 'replay'))
);

-- A run claim is the runner's (run_claim_commit_refused_v1 keeps it uncommitted).
CREATE POLICY run_claim_runner ON run_claim TO evalledger_runner USING (true) WITH CHECK (true);
GRANT INSERT (suite, run_id) ON run_claim TO evalledger_runner;
