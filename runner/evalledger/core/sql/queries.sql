-- The core's named queries: the registries every suite shares. Each starts with a
-- "-- name: <name>" line and a comment that says what it does (loaded by core/queries.py).

-- name: add_target
-- Register something under test.
INSERT INTO evalledger.target (target_id, kind, display_name, model_family)
VALUES (%(target_id)s, %(kind)s, %(display_name)s, %(model_family)s);
