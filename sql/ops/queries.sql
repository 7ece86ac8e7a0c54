-- The database administration's named queries (runner/evalledger/ops/): doctor, legal holds and
-- retention, targets, dumps and loads, backups, archiving and replicas. Each starts with a
-- "-- name: <name>" line and a comment that says what it does (loaded by core/queries.py).

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
-- Capture failures of the last 24 hours, counted per reason (none dated after the statement: a row stored before
-- occurred_at was bounded may say 2099 or infinity, and is not recent for ever).
SELECT reason, count(*) FROM evalledger.eval_capture_failures
 WHERE occurred_at > statement_timestamp() - interval '24 hours' AND occurred_at <= statement_timestamp()
 GROUP BY reason ORDER BY reason;

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

-- ===============================================================================

-- Backups, restores, dumps and loads (core/backup.py, core/dump.py), and the replica's health
-- =============================================================================================

-- name: server_major
-- The server's major version (15, 18, ...).
SELECT current_setting('server_version_num')::int / 10000;

-- name: connectable_databases
-- Every database of the cluster one may connect to (template0 is not one).
SELECT datname FROM pg_database WHERE datallowconn ORDER BY datname;

-- name: holds_nothing
-- Whether this database holds nothing of a user's, nor the cluster a role but the installer: no
-- schema but the stock ones (every migration makes evalledger's), nothing in public but yoyo's
-- bookkeeping (which `doctor` makes, asking what is applied), no extension but plpgsql, no event trigger.
SELECT NOT EXISTS (SELECT FROM pg_namespace
                    WHERE nspname NOT IN ('public', 'information_schema') AND nspname NOT LIKE 'pg\_%')
   AND NOT EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'public' AND c.relname !~ '^_?yoyo_')
   AND NOT EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public')
   AND NOT EXISTS (SELECT FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                    WHERE n.nspname = 'public' AND (t.typtype IN ('d', 'e', 'r', 'm')
                                                    OR (t.typtype = 'b' AND t.typcategory <> 'A')))
   AND NOT EXISTS (SELECT FROM pg_extension WHERE extname <> 'plpgsql')
   AND NOT EXISTS (SELECT FROM pg_event_trigger)
   AND NOT EXISTS (SELECT FROM pg_roles WHERE rolname NOT LIKE 'pg\_%' AND rolname <> current_user);

-- name: is_superuser
-- Whether the logged-in user is a superuser.
SELECT rolsuper FROM pg_roles WHERE rolname = session_user;

-- name: database_clock
-- The database's own time, in UTC.
SELECT now() AT TIME ZONE 'UTC';

-- name: no_search_path
-- Names print schema-qualified for the rest of this transaction (as pg_dump and pg_restore print them).
SELECT pg_catalog.set_config('search_path', '', true);

-- name: export_snapshot
-- Name this transaction's snapshot, so that pg_dump reads exactly what this transaction reads.
SELECT pg_export_snapshot();

-- name: installer
-- The user who migrated: the owner of the event-trigger schema (NULL when the ledger is not installed).
SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'evalledger_guard';

-- name: dump_roles
-- The roles a ledger needs on any server it is loaded into: the application roles, every role its
-- owners, grants and policies name, the reviewers' logins, and every role that is (through others) a
-- member of one of these. Never a superuser (the loading server has its own) nor the installer (the
-- user who loads takes its place).
WITH RECURSIVE needed (oid) AS (
    SELECT d.refobjid FROM pg_shdepend d
     WHERE d.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND d.refclassid = 'pg_authid'::regclass
    UNION SELECT r.oid FROM pg_roles r WHERE r.rolname = ANY (%(named)s)
    UNION SELECT r.oid FROM pg_roles r JOIN evalledger.reviewer v ON v.role_name = r.rolname
    UNION SELECT m.member FROM pg_auth_members m JOIN needed n ON n.oid = m.roleid
)
SELECT r.rolname::text AS name, r.rolcanlogin AS login, r.rolinherit AS inherit, r.rolconnlimit AS connection_limit,
       r.rolvaliduntil AS valid_until
  FROM pg_roles r
 WHERE r.oid IN (SELECT oid FROM needed) AND NOT r.rolsuper AND r.rolname !~ '^pg_'
   AND r.oid IS DISTINCT FROM (SELECT nspowner FROM pg_namespace WHERE nspname = 'evalledger_guard')
 ORDER BY r.rolname;

-- name: dump_memberships
-- Who is a member of whom among the named roles, once per pair (PostgreSQL 16+ may record a pair per
-- grantor), with the options of the grant (INHERIT and SET are 16+; before, always true).
SELECT DISTINCT ON (1, 2) pg_get_userbyid(m.roleid) AS role, pg_get_userbyid(m.member) AS member, m.admin_option AS admin,
       coalesce((to_jsonb(m) ->> 'inherit_option')::boolean, true) AS inherit,
       coalesce((to_jsonb(m) ->> 'set_option')::boolean, true) AS "set"
  FROM pg_auth_members m
 WHERE pg_get_userbyid(m.roleid) = ANY (%(roles)s) AND pg_get_userbyid(m.member) = ANY (%(roles)s)
 ORDER BY 1, 2, m.admin_option DESC;

-- name: dump_installer_roles
-- The ledger roles the installer is a member of (a non-superuser installer acts through them).
SELECT pg_get_userbyid(m.roleid) FROM pg_auth_members m
 WHERE m.member = (SELECT nspowner FROM pg_namespace WHERE nspname = 'evalledger_guard')
   AND pg_get_userbyid(m.roleid) = ANY (%(roles)s)
 ORDER BY 1;

-- name: dump_role_passwords
-- The password verifiers (SCRAM or MD5 hashes, never the passwords) of the named roles: superusers only.
SELECT rolname::text, rolpassword FROM pg_authid WHERE rolname = ANY (%(roles)s) AND rolpassword IS NOT NULL;

-- name: dump_migrations
-- The migrations applied to this database, in order.
SELECT migration_id FROM public._yoyo_migration ORDER BY applied_at_utc, migration_id;

-- name: ledger_fingerprint
-- What decides who may do what to the ledger, one row per fact (kind, name, detail), with no oid
-- and the installer named "(installer)": every object's owner and grants (column grants and
-- PUBLIC's defaults included), row-level security, triggers and their ENABLE state, policies,
-- constraints, functions (definer, settings, body), views, event triggers and sequences (the rows
-- each table holds are counted apart: ledger_tables). A load compares the loaded database's with the
-- dump's before it commits. Kinds ending
-- in "definition" hash deparsed SQL, which differs between major versions. (No percent sign: the
-- text also runs inside the load's check, where nothing unescapes one.)
WITH installer AS (
    SELECT coalesce((SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'evalledger_guard'), 0::oid) AS oid
), spaces AS (
    SELECT n.oid, quote_ident(n.nspname) AS qname FROM pg_namespace n
     WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
), who (oid, name) AS (
    SELECT r.oid, CASE WHEN r.oid = (SELECT oid FROM installer) THEN '(installer)' ELSE r.rolname::text END
      FROM pg_roles r
    UNION ALL SELECT 0::oid, 'PUBLIC'
), relations AS (
    SELECT c.*, s.qname || '.' || quote_ident(c.relname) AS qname
      FROM pg_class c JOIN spaces s ON s.oid = c.relnamespace
), objects (kind, name, owner, acl) AS (
    SELECT 'schema', s.qname, n.nspowner, coalesce(n.nspacl, acldefault('n', n.nspowner))
      FROM pg_namespace n JOIN spaces s ON s.oid = n.oid
    UNION ALL
    SELECT CASE c.relkind WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' ELSE 'table' END, c.qname, c.relowner,
           coalesce(c.relacl, acldefault(CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner))
      FROM relations c WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
    UNION ALL
    SELECT 'column', c.qname || '.' || quote_ident(a.attname), c.relowner, a.attacl
      FROM pg_attribute a JOIN relations c ON c.oid = a.attrelid
     WHERE a.attacl IS NOT NULL AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, p.oid::regprocedure::text, p.proowner,
           coalesce(p.proacl, acldefault('f', p.proowner))
      FROM pg_proc p JOIN spaces s ON s.oid = p.pronamespace
    UNION ALL
    SELECT 'type', t.oid::regtype::text, t.typowner, coalesce(t.typacl, acldefault('T', t.typowner))
      FROM pg_type t JOIN spaces s ON s.oid = t.typnamespace
     WHERE t.typtype IN ('e', 'd', 'r')
        OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')
    UNION ALL
    SELECT 'default privileges', 'for ' || (SELECT w.name FROM who w WHERE w.oid = d.defaclrole) || ' in '
                                 || coalesce(d.defaclnamespace::regnamespace::text, 'every schema') || ' on '
                                 || d.defaclobjtype::text,
           d.defaclrole, d.defaclacl
      FROM pg_default_acl d
)
SELECT kind, name, detail FROM (
    SELECT o.kind, o.name, 'owner ' || (SELECT w.name FROM who w WHERE w.oid = o.owner) AS detail
      FROM objects o WHERE o.kind NOT IN ('column', 'default privileges')
    UNION ALL
    -- The owner's own privileges are left out: 17+ gives owners MAINTAIN too.
    SELECT o.kind, o.name, 'grant ' || a.privilege_type || ' to ' || (SELECT w.name FROM who w WHERE w.oid = a.grantee)
                           || CASE WHEN a.is_grantable THEN ' with grant option' ELSE '' END
      FROM objects o, aclexplode(o.acl) a
     WHERE a.grantee <> o.owner AND a.privilege_type <> 'MAINTAIN'
    UNION ALL
    SELECT 'table', c.qname, 'row level security ' || c.relrowsecurity || ', forced ' || c.relforcerowsecurity
                             || ', persistence ' || c.relpersistence::text || ', options '
                             || coalesce(array_to_string(c.reloptions, ','), '')
      FROM relations c WHERE c.relkind IN ('r', 'p', 'v')
    UNION ALL
    SELECT 'trigger', c.qname || '.' || quote_ident(t.tgname),
           'enabled ' || t.tgenabled::text || ', type ' || t.tgtype::text || ', runs ' || t.tgfoid::regprocedure::text
      FROM pg_trigger t JOIN relations c ON c.oid = t.tgrelid
     WHERE NOT t.tgisinternal
    UNION ALL
    SELECT 'policy', c.qname || '.' || quote_ident(p.polname),
           CASE WHEN p.polpermissive THEN 'permissive ' ELSE 'restrictive ' END || p.polcmd::text || ' to '
           || (SELECT string_agg(w.name, ',' ORDER BY w.name) FROM who w WHERE w.oid = ANY (p.polroles))
           || ' using ' || md5(coalesce(pg_get_expr(p.polqual, p.polrelid), ''))
           || ' check ' || md5(coalesce(pg_get_expr(p.polwithcheck, p.polrelid), ''))
      FROM pg_policy p JOIN relations c ON c.oid = p.polrelid
    UNION ALL
    SELECT 'constraint', c.qname || '.' || quote_ident(k.conname),
           'type ' || k.contype::text || ', validated ' || k.convalidated
      FROM pg_constraint k JOIN relations c ON c.oid = k.conrelid
     WHERE k.contype <> 'n'
    UNION ALL
    -- Without casts, parentheses and spaces: a restore deparses an IN list of varchar with its casts elsewhere.
    SELECT 'constraint definition', c.qname || '.' || quote_ident(k.conname),
           md5(regexp_replace(pg_get_constraintdef(k.oid), '::[a-z_. "]+(\[\])?|[()[:space:]]', '', 'g'))
      FROM pg_constraint k JOIN relations c ON c.oid = k.conrelid
     WHERE k.contype <> 'n'
    UNION ALL
    SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, p.oid::regprocedure::text,
           'security definer ' || p.prosecdef || ', volatility ' || p.provolatile::text || ', settings '
           || coalesce(array_to_string(p.proconfig, ';'), '') || ', body ' || md5(p.prosrc)
      FROM pg_proc p JOIN spaces s ON s.oid = p.pronamespace
    UNION ALL
    SELECT 'view definition', c.qname, md5(pg_get_viewdef(c.oid))
      FROM relations c WHERE c.relkind = 'v'
    UNION ALL
    SELECT 'event trigger', quote_ident(e.evtname),
           'on ' || e.evtevent || ', enabled ' || e.evtenabled::text || ', runs ' || e.evtfoid::regprocedure::text
           || ', owner ' || (SELECT w.name FROM who w WHERE w.oid = e.evtowner)
           || ', tags ' || coalesce(array_to_string(e.evttags, ','), 'all')
      FROM pg_event_trigger e
    UNION ALL
    SELECT 'sequence value', quote_ident(q.schemaname) || '.' || quote_ident(q.sequencename),
           coalesce(q.last_value::text, 'unused')
      FROM pg_sequences q
     WHERE q.schemaname !~ '^pg_' AND q.schemaname <> 'information_schema'
) f
ORDER BY kind, name, detail;

-- name: ledger_tables
-- Every table (partitions included, partitioned parents not) of the database's own schemas, quoted,
-- with the table its rows are read through: a partition's root (a partition has no policy of its
-- own, so a member of the code role reads it through its parent's), else itself.
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), coalesce(pg_partition_root(c.oid), c.oid)::regclass::text
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
 ORDER BY 1;

-- name: count_rows
-- The rows of one table of ledger_tables, read through {root}.
SELECT count(*) FROM {root} WHERE tableoid = {table}::regclass;

-- name: load_occupied
-- What a database holds besides what every new database has (NULL when it is empty): a load goes
-- only into an empty database.
SELECT nullif(concat_ws(', ',
    (SELECT 'schema ' || string_agg(nspname, ', schema ' ORDER BY nspname) FROM pg_namespace
      WHERE nspname !~ '^pg_' AND nspname NOT IN ('information_schema', 'public')),
    (SELECT count(*) || ' relations in schema public' FROM pg_class
      WHERE relnamespace = 'public'::regnamespace HAVING count(*) > 0),
    (SELECT count(*) || ' functions in schema public' FROM pg_proc
      WHERE pronamespace = 'public'::regnamespace HAVING count(*) > 0),
    (SELECT 'event trigger ' || string_agg(evtname, ', event trigger ' ORDER BY evtname) FROM pg_event_trigger)), '');

-- name: load_create_role
-- A role of the dump the server lacks: never superuser, BYPASSRLS, CREATEROLE, CREATEDB or REPLICATION.
CREATE ROLE {role} WITH {login} {inherit} NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION
    CONNECTION LIMIT {limit} VALID UNTIL {until} PASSWORD {password};

-- name: load_grant_membership_16
-- A membership of the dump, with its options (PostgreSQL 16+).
GRANT {role} TO {member} WITH ADMIN {admin}, INHERIT {inherit}, SET {set};

-- name: load_grant_membership
-- A membership of the dump (before 16: INHERIT is the member's attribute).
GRANT {role} TO {member};

-- name: load_grant_membership_admin
-- A membership of the dump that may grant the role on (before 16).
GRANT {role} TO {member} WITH ADMIN OPTION;

-- name: load_memberships_present
-- The memberships in the named roles this server already has.
SELECT pg_get_userbyid(roleid), pg_get_userbyid(member) FROM pg_auth_members
 WHERE pg_get_userbyid(roleid) = ANY (%(roles)s);

-- name: load_other_members
-- This server's roles that are members of the named ones but not of the dump (nor superusers).
SELECT DISTINCT pg_get_userbyid(m.roleid), r.rolname::text
  FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member
 WHERE pg_get_userbyid(m.roleid) = ANY (%(roles)s) AND NOT (r.rolname = ANY (%(known)s))
   AND NOT r.rolsuper AND r.rolname !~ '^pg_'
 ORDER BY 1, 2;

-- name: load_check
-- The last statement of a load: fail its transaction unless the loaded database's fingerprint is the
-- dump's ({expected}: [kind, name, detail] rows; "definition" kinds left out across major versions)
-- and every table holds the rows the dump counted ({rows}). Names print as with an empty search_path,
-- as in the dump; rows are counted under row-level security (pg_restore turns it off, which makes a
-- forced policy an error for anyone but a superuser), through the code role's policies.
SELECT pg_catalog.set_config('search_path', '', false), pg_catalog.set_config('row_security', 'on', false);
DO $check$
DECLARE
    differs text;
    counted bigint;
    entry record;
BEGIN
    WITH actual AS ({fingerprint}),
    compared AS (SELECT kind, name, detail FROM actual WHERE NOT ({skip_definitions} AND right(kind, 10) = 'definition')),
    wanted AS (SELECT e ->> 0 AS kind, e ->> 1 AS name, e ->> 2 AS detail FROM jsonb_array_elements({expected}::jsonb) e),
    differences AS (
        SELECT 'missing ' || kind || ' ' || name || ' (' || detail || ')' AS d
          FROM (SELECT * FROM wanted EXCEPT ALL SELECT * FROM compared) m
        UNION ALL
        SELECT 'unexpected ' || kind || ' ' || name || ' (' || detail || ')'
          FROM (SELECT * FROM compared EXCEPT ALL SELECT * FROM wanted) x
    )
    SELECT string_agg(d, '; ' ORDER BY d) INTO differs FROM (SELECT d FROM differences ORDER BY d LIMIT 12) l;
    FOR entry IN SELECT key, value::bigint AS n, to_regclass(key) AS rel FROM jsonb_each_text({rows}::jsonb) ORDER BY key LOOP
        IF entry.rel IS NULL THEN
            differs := concat_ws('; ', differs, 'missing table ' || entry.key);
            CONTINUE;
        END IF;
        EXECUTE 'SELECT count(*) FROM ' || coalesce(pg_partition_root(entry.rel), entry.rel)::regclass::text || ' WHERE tableoid = $1'
            INTO counted USING entry.rel;
        IF counted <> entry.n THEN
            differs := concat_ws('; ', differs, entry.key || ' holds ' || counted || ' rows, the dump ' || entry.n);
        END IF;
    END LOOP;
    IF differs IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: the loaded ledger is not the one dumped: %', differs
            USING HINT = 'nothing was loaded; the dump''s manifest.json lists what it expects';
    END IF;
END
$check$;

-- name: may_read_control
-- Whether the logged-in user may read the cluster's control data (superusers and pg_monitor may).
SELECT has_function_privilege('pg_control_system()', 'EXECUTE');

-- name: system_identifier
-- The cluster's system identifier: a base backup, its WAL and its standbys share it.
SELECT system_identifier FROM pg_control_system();

-- name: alter_system
-- Set one server setting in postgresql.auto.conf (applied by a reload, or a restart for some).
ALTER SYSTEM SET {name} = {value};

-- name: reload_configuration
-- Make the server read its configuration again.
SELECT pg_reload_conf();

-- name: archive_mode
-- Whether the running server archives WAL (changing it needs a restart).
SELECT current_setting('archive_mode');

-- name: switch_wal
-- Close the current WAL segment, so that archiving copies it now.
SELECT pg_switch_wal();

-- name: drop_slot_if_exists
-- Drop the named replication slot (of a replica whose creation failed), if it exists.
SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %(slot)s;

-- name: doctor_standby
-- On a standby: its WAL receiver (NULL columns to users without pg_read_all_stats), how far replay is
-- behind the primary's last report, and how long ago the primary last spoke and a commit was replayed.
SELECT r.status, r.sender_host, r.sender_port,
       pg_wal_lsn_diff(r.latest_end_lsn, pg_last_wal_replay_lsn()) AS behind_bytes,
       extract(epoch FROM now() - r.last_msg_receipt_time) AS primary_silent_s,
       extract(epoch FROM now() - pg_last_xact_replay_timestamp()) AS since_replayed_commit_s,
       r.pid IS NOT NULL AS receiving
  FROM (SELECT 1) one LEFT JOIN pg_stat_wal_receiver r ON true;

-- name: doctor_standbys
-- On a primary: the standbys streaming from it, with their replay lag.
SELECT coalesce(client_addr::text, 'local socket'), application_name, state,
       extract(epoch FROM replay_lag), pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)
  FROM pg_stat_replication ORDER BY application_name;

-- name: doctor_idle_slots
-- Replication slots nobody streams from, and the WAL each keeps on this server's disk.
SELECT slot_name, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)
  FROM pg_replication_slots WHERE NOT active AND restart_lsn IS NOT NULL ORDER BY slot_name;

-- name: doctor_archiver
-- Whether WAL is archived, and the last success and failure.
SELECT current_setting('archive_mode'), last_archived_wal, extract(epoch FROM now() - last_archived_time),
       last_failed_wal, last_failed_time > coalesce(last_archived_time, '-infinity') AS failing
  FROM pg_stat_archiver;

-- name: alter_system_reset
-- Remove one setting from postgresql.auto.conf (a recovery's, once it is over).
ALTER SYSTEM RESET {name};

-- name: doctor_hours_ago
-- The database's time this many hours ago (doctor's windows are the database's clock's).
SELECT now() - make_interval(hours => %(hours)s);

-- name: doctor_search_path
-- The ledger's schema first again, as every connection has it.
SET search_path = evalledger, public;

-- name: doctor_large_object_creation
-- The large-object creating functions PUBLIC may still execute (the baseline revokes them where a superuser installs).
SELECT f FROM unnest(ARRAY['pg_catalog.lo_create(oid)', 'pg_catalog.lo_creat(integer)',
                           'pg_catalog.lo_from_bytea(oid, bytea)']) AS f
 WHERE has_function_privilege('public', f::regprocedure, 'EXECUTE')
 ORDER BY 1;

-- name: target_rows
-- Every registered target with its family and registration time, by id.
SELECT target_id, kind, display_name, model_family, created_at FROM evalledger.target ORDER BY target_id;

-- name: target_row
-- One registered target.
SELECT target_id, kind, display_name, model_family, created_at FROM evalledger.target WHERE target_id = %(target_id)s;

-- name: add_target_once
-- Register something under test once; returns a row only when it is new.
INSERT INTO evalledger.target (target_id, kind, display_name, model_family)
VALUES (%(target_id)s, %(kind)s, %(display_name)s, %(model_family)s)
ON CONFLICT ON CONSTRAINT target_pkey DO NOTHING
RETURNING target_id;

-- name: doctor_undetectable_thresholds
-- The suites' measures whose latest runs cannot detect the suite's own regression threshold at 80 per cent power (plan_v1 over the last 20 runs of each subject).
SELECT suite, subject, measure, n, mde, threshold
  FROM evalledger.plan_v1()
 WHERE NOT detectable;
