-- Rows every ledger starts with: the brains of seed 002, registered targets.
INSERT INTO target (target_id, kind, display_name, model_family) VALUES
    ('AGT-901', 'brain', 'Pipeline brain (diagnosis)', 'anthropic'),
    ('AGT-902', 'brain', 'Action brain (diagnosis and proposed levers)', 'anthropic');
