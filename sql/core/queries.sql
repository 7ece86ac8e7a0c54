-- The core's named queries: the registries every suite shares. Each starts with a
-- "-- name: <name>" line and a comment that says what it does (loaded by core/queries.py).

-- name: add_target
-- Register something under test.
INSERT INTO evalledger.target (target_id, kind, display_name, model_family)
VALUES (%(target_id)s, %(kind)s, %(display_name)s, %(model_family)s);

-- name: list_targets
-- Every registered target, by id.
SELECT target_id, kind, display_name FROM evalledger.target ORDER BY target_id;

-- name: rubric
-- A suite's rubric row: the named version, else the active one (its latest activation), never merely the newest.
SELECT r.rubric_id, r.version, r.fingerprint, r.definition
  FROM evalledger.rubric r
 WHERE r.suite = %(suite)s
   AND CASE WHEN %(version)s::text IS NULL
            THEN r.rubric_id = (SELECT a.rubric_id FROM evalledger.rubric_activation a
                                 WHERE a.suite = %(suite)s ORDER BY a.activation_id DESC LIMIT 1)
            ELSE r.version = %(version)s END;

-- name: migration_lock_owner
-- Who owns the migration lock table, and whether that is the installer (the login migrating, or a superuser): anyone else could lock it.
SELECT r.rolname, r.rolname = current_user OR r.rolsuper
  FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
 WHERE c.oid = to_regclass(quote_ident(%(table)s));

-- name: migration_lock
-- Wait for the migration lock, held until this transaction ends (by the server if the process dies). EXCLUSIVE conflicts with every lock a privilege grants but ACCESS SHARE, so readers of the table never hold a migration up.
LOCK TABLE {lock_table} IN EXCLUSIVE MODE;

-- name: pin_migration_session
-- For the migration's transaction, whatever the installer's session said (PGOPTIONS, the role's or the database's defaults): READ COMMITTED, so that a backfill's statement after its LOCK sees every row committed before the lock was granted, which a snapshot taken earlier in the transaction (REPEATABLE READ, SERIALIZABLE) would not; and float8 turned into text or jsonb in the shortest digits that read back the same value.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
SET LOCAL extra_float_digits = 1;

-- name: reset_session
-- Back to the login role and default search_path, where yoyo keeps its tables.
RESET ROLE; RESET search_path;

-- name: database_exists
-- Whether a database of this name exists on the server.
SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = %(name)s);

-- name: in_recovery
-- Whether this server is a standby (or a restore still replaying its WAL).
SELECT pg_is_in_recovery();

-- name: standby_primary
-- Whether this server is a standby, and the primary it streams from (NULL to users who may not see it).
SELECT pg_is_in_recovery(), (SELECT sender_host FROM pg_stat_wal_receiver), (SELECT sender_port FROM pg_stat_wal_receiver);

-- name: read_only_default
-- Whether a new session here starts read-only (default_transaction_read_only), who said so (pg_settings' source: client, user, database, database user, configuration file, ...), and the role and database it was said for.
SELECT setting = 'on', source, session_user, current_database() FROM pg_settings WHERE name = 'default_transaction_read_only';

-- name: session_read_only
-- Whether this session's transactions are read-only (a standby's, or default_transaction_read_only).
SELECT current_setting('transaction_read_only') = 'on';

-- name: wal_insert_lsn
-- On a primary: where its WAL ends now, past the commit of every transaction committed so far.
SELECT pg_current_wal_insert_lsn();

-- name: replayed_past
-- On a standby: whether it has replayed the primary's WAL up to %(lsn)s.
SELECT pg_last_wal_replay_lsn() >= %(lsn)s::pg_lsn;

-- name: claim_briefly
-- A run claim waits at most a moment first, so the runner can say it waits for another.
SET LOCAL lock_timeout = '200ms';

-- name: claim_patiently
-- Then a run claim waits as long as the other runner judges (a claim lasts no longer than its runner).
SET LOCAL lock_timeout = 0;

-- name: claim_session
-- A claim's connection idles in its transaction while the run is judged: no server timeout may end it early.
SET idle_in_transaction_session_timeout = 0;

-- name: claim_named
-- A claim's connection says whose claim it holds and since when (the database's clock, in seconds): another runner finds it in pg_stat_activity, where every role reads application_name. Set inside the claim's transaction, so its rollback clears it.
SELECT pg_catalog.set_config('application_name',
       %(suite)s::text || ' run ' || %(run_id)s::text || ' ' || floor(extract(epoch FROM pg_catalog.now()))::bigint, false);

-- name: claim_holder_since
-- Since when another runner holds a run's claim, as its connection says (claim_named), in UTC; none when no session says so.
SELECT to_char(to_timestamp(max(substring(a.application_name FROM ' ([0-9]+)$')::bigint)) AT TIME ZONE 'UTC',
               'YYYY-MM-DD HH24:MI:SS') || ' UTC'
  FROM pg_catalog.pg_stat_activity a
 WHERE a.application_name LIKE %(suite)s::text || ' run ' || %(run_id)s::text || ' %%';

-- name: migrations_readable
-- Whether yoyo's record of applied migrations exists and the connecting user may read it.
SELECT coalesce(has_table_privilege(to_regclass('_yoyo_migration'), 'SELECT'), false);

-- name: applied_migrations
-- The ids of the migrations the ledger has applied, in id order (yoyo's record).
SELECT migration_id FROM _yoyo_migration ORDER BY migration_id;

-- name: capture_window_lock_timeout
-- A capture writer holding the capture window lock for longer than this is stuck, not busy (export, run replay and catalog draft wait this long for the bound).
SET lock_timeout = '60s';

-- name: capture_window_bound
-- The exclusive end of a window over captured rows, as export, run replay and catalog draft take it (in its own statement, read in later ones).
SELECT evalledger.capture_export_bound_v2();
