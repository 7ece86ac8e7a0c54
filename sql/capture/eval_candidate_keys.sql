-- Every capture_key ever written (with its row's created_at, for the purge): the UNIQUE key that
-- eval_candidates, being partitioned by time, cannot carry itself.
CREATE TABLE eval_candidate_keys (
    capture_key uuid        NOT NULL,
    created_at  timestamptz NOT NULL,
    CONSTRAINT eval_candidate_keys_pkey PRIMARY KEY (capture_key)
);

-- The purge walks keys by age.
CREATE INDEX eval_candidate_keys_created_idx ON eval_candidate_keys (created_at);
