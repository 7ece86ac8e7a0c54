-- prompt_drift_v1: per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.
CREATE VIEW evalledger.prompt_drift_v1 AS
    SELECT * FROM evalledger.prompt_drift_rows_v1();
COMMENT ON VIEW evalledger.prompt_drift_v1 IS
    'Per brain, the prompt hash production used most recently vs the hash of the last passing eval; prompt_drift when they differ.';
