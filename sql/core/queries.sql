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

-- name: advisory_lock
-- Wait for the migration lock (released by the server if the process dies).
SELECT pg_advisory_lock(%(key)s);

-- name: advisory_unlock
-- Release the migration lock.
SELECT pg_advisory_unlock(%(key)s);

-- name: reset_session
-- Back to the login role and default search_path, where yoyo keeps its tables.
RESET ROLE; RESET search_path;

-- name: database_exists
-- Whether a database of this name exists on the server.
SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = %(name)s);

-- name: doctor_roles
-- The application roles and their dangerous attributes.
SELECT rolname, rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = ANY(%(roles)s);

-- name: doctor_triggers
-- Every user trigger on the ledger's tables and whether it is enabled always ('A').
SELECT c.relname, t.tgname, t.tgenabled
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT t.tgisinternal;

-- name: doctor_unforced_rls
-- Ledger tables whose row-level security is not both enabled and forced.
SELECT relname FROM pg_class
 WHERE relnamespace = 'evalledger'::regnamespace
   AND relkind IN ('r', 'p') AND NOT (relrowsecurity AND relforcerowsecurity);

-- name: doctor_event_triggers
-- The named event triggers and their enabled state.
SELECT evtname, evtenabled FROM pg_event_trigger WHERE evtname = ANY(%(names)s);

-- name: doctor_schema_exists
-- Whether the ledger's schema is installed.
SELECT to_regnamespace('evalledger') IS NOT NULL;

-- name: doctor_capture_installed
-- Whether the capture failures table exists (doctor stays quiet about capture when not).
SELECT to_regclass('evalledger.eval_capture_failures') IS NOT NULL;

-- name: doctor_capture_failures
-- Capture failures of the last 24 hours, counted per reason.
SELECT reason, count(*) FROM evalledger.eval_capture_failures
 WHERE occurred_at > now() - interval '24 hours'
 GROUP BY reason ORDER BY reason;

-- name: target_rows
-- Every registered target with its family and registration time, by id.
SELECT target_id, kind, display_name, model_family, created_at FROM evalledger.target ORDER BY target_id;

-- name: target_row
-- One registered target.
SELECT target_id, kind, display_name, model_family, created_at FROM evalledger.target WHERE target_id = %(target_id)s;

-- name: panel_description
-- What a dashboard view shows, from its COMMENT (the BI contract's own words).
SELECT obj_description(to_regclass('evalledger.' || %(panel)s), 'pg_class');

-- name: add_target_once
-- Register something under test once; returns a row only when it is new.
INSERT INTO evalledger.target (target_id, kind, display_name, model_family)
VALUES (%(target_id)s, %(kind)s, %(display_name)s, %(model_family)s)
ON CONFLICT ON CONSTRAINT target_pkey DO NOTHING
RETURNING target_id;

-- name: list_holds
-- Legal holds newest first: what each keeps (a run and its brain, a brain, or a range of the tier
-- clock), why, who placed it, and its release; --active leaves out released ones.
SELECT h.hold_id,
       CASE WHEN h.eval_run_id IS NOT NULL THEN 'run' WHEN h.target_id IS NOT NULL THEN 'brain' ELSE 'range' END AS scope,
       h.eval_run_id, coalesce(h.target_id, l.brain_under_test) AS brain, h.held_from, h.held_to, h.reason,
       h.placed_by, h.placed_at, coalesce(h.released_at, x.released_at) AS released_at, x.released_by,
       x.reason AS release_reason
  FROM evalledger.legal_hold h
  LEFT JOIN evalledger.brain_eval_log l ON l.eval_run_id = h.eval_run_id
  LEFT JOIN evalledger.legal_hold_release x ON x.hold_id = h.hold_id
 WHERE NOT %(active)s OR (h.released_at IS NULL AND x.hold_id IS NULL)
 ORDER BY h.placed_at DESC, h.hold_id DESC;

-- name: add_hold
-- A legal hold on a run, a brain or a range of the tier clock (exactly one); the database stamps
-- who placed it and when.
INSERT INTO evalledger.legal_hold (eval_run_id, target_id, held_from, held_to, reason)
VALUES (%(eval_run_id)s, %(target_id)s, %(held_from)s, %(held_to)s, %(reason)s)
RETURNING hold_id, placed_at;

-- name: release_hold
-- The release of a hold: a row of its own, stamped with who and when; a hold is never edited.
INSERT INTO evalledger.legal_hold_release (hold_id, reason)
VALUES (%(hold_id)s, %(reason)s)
RETURNING released_at, released_by;

-- name: retention_plan
-- Per aging table: rows hot, cold, due for purge and held past the horizon, and the holds keeping them.
SELECT p.table_name, p.hot, p.cold, p.due, p.held, p.held_by FROM evalledger.retention_plan_v2() p;

-- name: retention_may_purge
-- Whether the logged-in user may act as the retention role (a superuser always may).
SELECT r.rolsuper OR pg_has_role(session_user, 'evalledger_retention', 'MEMBER')
  FROM pg_roles r WHERE r.rolname = session_user;

-- name: retention_apply
-- Purge what is due (as evalledger_retention): what went, per table and run or capture partition.
SELECT p.purged_table AS table_name, p.purged_rows AS row_count, p.purged_run AS eval_run_id,
       p.purged_partition AS partition_name
  FROM evalledger.retention_purge_v2() p;

-- name: doctor_session_user
-- The user this connection logged in as.
SELECT session_user::text;

-- name: doctor_memberships
-- The named roles the logged-in user may not SET ROLE to (PostgreSQL 16+: the SET option; before: membership).
SELECT r FROM unnest(%(roles)s::text[]) AS r
 WHERE to_regrole(r) IS NOT NULL
   AND NOT pg_has_role(session_user, to_regrole(r),
                       CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'SET' ELSE 'MEMBER' END)
 ORDER BY r;
-- name: doctor_code_role
-- The code role's attributes and the logins that are its members (directly or through other roles).
SELECT r.rolcanlogin, r.rolsuper OR r.rolbypassrls,
       ARRAY(SELECT m.rolname FROM pg_roles m
              WHERE m.rolcanlogin AND NOT m.rolsuper AND m.oid <> r.oid AND pg_has_role(m.oid, r.oid, 'MEMBER')
              ORDER BY m.rolname)
  FROM pg_roles r WHERE r.rolname = 'evalledger_code';

-- name: doctor_not_owned_by_code
-- Ledger objects (schema, relations, functions, types) whose owner is not the code role that owns the schema.
SELECT kind || ' ' || name || ' (' || owner || ')' FROM (
    SELECT 'schema' AS kind, n.nspname::text AS name, pg_get_userbyid(n.nspowner) AS owner, n.nspowner AS owner_oid
      FROM pg_namespace n WHERE n.nspname = 'evalledger'
    UNION ALL
    SELECT 'relation', c.relname::text, pg_get_userbyid(c.relowner), c.relowner
      FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace
    UNION ALL
    SELECT 'function', p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.proowner
      FROM pg_proc p WHERE p.pronamespace = 'evalledger'::regnamespace
    UNION ALL
    SELECT 'type', t.typname::text, pg_get_userbyid(t.typowner), t.typowner
      FROM pg_type t WHERE t.typnamespace = 'evalledger'::regnamespace
) o
 WHERE o.owner_oid <> 'evalledger_code'::regrole ORDER BY 1;

-- name: doctor_schema_creators
-- Roles other than the code role that may create objects in the ledger's schema.
SELECT r.rolname FROM pg_roles r
 WHERE has_schema_privilege(r.oid, 'evalledger', 'CREATE') AND NOT r.rolsuper
   AND r.oid <> 'evalledger_code'::regrole AND NOT pg_has_role(r.oid, 'evalledger_code'::regrole, 'MEMBER')
 ORDER BY 1;

-- name: doctor_unsafe_definers
-- SECURITY DEFINER functions of the database that do not run with search_path = pg_catalog, pg_temp.
SELECT p.oid::regprocedure::text FROM pg_proc p
 WHERE p.prosecdef AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
   AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
                    AND cardinality(ARRAY(SELECT c FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%')) = 1, false)
 ORDER BY 1;

-- name: claim_briefly
-- A run claim waits at most a moment first, so the runner can say it waits for another.
SET LOCAL lock_timeout = '200ms';

-- name: claim_patiently
-- Then a run claim waits as long as the other runner judges (a claim lasts no longer than its runner).
SET LOCAL lock_timeout = 0;

-- name: claim_session
-- A claim's connection idles in its transaction while the run is judged: no server timeout may end it early.
SET idle_in_transaction_session_timeout = 0;

-- name: doctor_hours_ago
-- The database's time this many hours ago (doctor's windows are the database's clock's).
SELECT now() - make_interval(hours => %(hours)s);

-- name: doctor_search_path
-- The ledger's schema first again, as every connection has it.
SET search_path = evalledger, public;

-- name: doctor_large_object_creation
-- The large-object creating functions PUBLIC may still execute (migration 0005 revokes them where a superuser installs).
SELECT f FROM unnest(ARRAY['pg_catalog.lo_create(oid)', 'pg_catalog.lo_creat(integer)',
                           'pg_catalog.lo_from_bytea(oid, bytea)']) AS f
 WHERE has_function_privilege('public', f::regprocedure, 'EXECUTE')
 ORDER BY 1;
