-- Rows every ledger starts with: the takes-quality v1.1 rubric, v1.0 with seed 000's panel (three
-- models, two or more families), admitted under today's rules (rubric_admit_v2) and active in
-- v1.0's stead (issue 17).
INSERT INTO rubric (suite, version, definition)
SELECT 'takes-quality', 'v1.1',
       r.definition || jsonb_build_object('version', 'v1.1', 'panel', jsonb_build_object('min_models', 3, 'min_families', 2))
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.0');
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'issue 17: a panel of at least three models from at least two families (seed 000, cross-family)'
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.1');
