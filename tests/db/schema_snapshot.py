"""A deterministic text picture of the evalledger schema, to compare a migrated database with
the checked-in tests/db/schema.current.txt (run `make schema` to refresh it after a new migration).

The picture is the same on every date: the monthly partitions of eval_candidates are named after
the months they hold, so each partition's name is printed as <parent>_pYYYYMM, the lines it
yields are listed once, and a "partitions" section checks instead how many there are, that each
holds one whole month (UTC) and that its name says which."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

SNAPSHOT_FILE = Path(__file__).with_name("schema.current.txt")

# Each section is one catalog query returning text lines; together they cover tables, columns,
# constraints, indexes, triggers, functions, views, policies, grants, types and event triggers.
SECTIONS = {
    "tables": """
        SELECT format('%s kind=%s rls=%s forced=%s', c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity)
          FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')""",
    "columns": """
        SELECT format('%s.%s %s%s%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                      CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                      coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''))
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE c.relnamespace = 'evalledger'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
           AND c.relkind IN ('r', 'p', 'v')""",
    "constraints": """
        SELECT format('%s %s %s', c.relname, k.conname, pg_get_constraintdef(k.oid))
          FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
         WHERE c.relnamespace = 'evalledger'::regnamespace
           AND k.contype <> 'n'  -- NOT NULL is a constraint row only from PostgreSQL 18; see columns""",
    "indexes": """
        SELECT indexdef FROM pg_indexes WHERE schemaname = 'evalledger'""",
    "triggers": """
        SELECT format('%s enabled=%s', pg_get_triggerdef(t.oid), t.tgenabled)
          FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT t.tgisinternal""",
    "functions": """
        SELECT format('%s.%s(%s) returns %s security_definer=%s config=%s owned_by_owner_role=%s body_md5=%s',
                      p.pronamespace::regnamespace, p.proname,
                      pg_get_function_identity_arguments(p.oid), pg_get_function_result(p.oid),
                      p.prosecdef, p.proconfig, pg_get_userbyid(p.proowner) = 'evalledger_owner', md5(p.prosrc))
          FROM pg_proc p WHERE p.pronamespace IN ('evalledger'::regnamespace, 'evalledger_guard'::regnamespace)""",
    # A view's deparsed text differs between PostgreSQL versions; its columns are listed above and
    # the dashboards keep their logic in functions, whose source is compared byte for byte.
    "views": """
        SELECT format('%s options=%s', c.relname, c.reloptions)
          FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind = 'v'""",
    "policies": """
        SELECT format('%s %s %s to=%s using=%s check=%s', tablename, policyname, cmd, roles, qual, with_check)
          FROM pg_policies WHERE schemaname = 'evalledger'""",
    "table grants": """
        SELECT format('%s %s %s', grantee, table_name, privilege_type)
          FROM information_schema.role_table_grants
         WHERE table_schema = 'evalledger' AND grantee LIKE 'evalledger\\_%' AND grantee <> 'evalledger_owner'""",
    "column grants": """
        SELECT format('%s %s.%s %s', grantee, table_name, column_name, privilege_type)
          FROM information_schema.column_privileges
         WHERE table_schema = 'evalledger' AND grantee LIKE 'evalledger\\_%' AND grantee <> 'evalledger_owner'
           AND (grantee, table_name, privilege_type) NOT IN (
               SELECT grantee, table_name, privilege_type FROM information_schema.role_table_grants
                WHERE table_schema = 'evalledger')""",
    "function grants": """
        SELECT format('%s %s', r.rolname, p.proname)
          FROM pg_proc p CROSS JOIN pg_roles r
         WHERE p.pronamespace = 'evalledger'::regnamespace
           AND r.rolname IN ('evalledger_runner', 'evalledger_reviewer', 'evalledger_revops',
                             'evalledger_auditor', 'evalledger_agent')
           AND has_function_privilege(r.oid, p.oid, 'EXECUTE')""",
    "types": """
        SELECT format('%s: %s', t.typname, string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder))
          FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
         WHERE t.typnamespace = 'evalledger'::regnamespace GROUP BY t.typname""",
    "event triggers": """
        SELECT format('%s on %s tags=%s enabled=%s', evtname, evtevent, evttags, evtenabled)
          FROM pg_event_trigger WHERE evtname LIKE 'evalledger\\_%'""",
    "partitions": """
        SELECT format('%s partitions=%s each_one_utc_month_named_pYYYYMM=%s', p.relname, count(*),
                      bool_and(b.lo = date_trunc('month', b.lo) AND b.hi = b.lo + interval '1 month'
                               AND c.relname = p.relname || '_p' || to_char(b.lo, 'YYYYMM')))
          FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent JOIN pg_class c ON c.oid = i.inhrelid
         CROSS JOIN LATERAL (
               SELECT substring(pg_get_expr(c.relpartbound, c.oid) FROM $$FROM \\('([^']+)'\\)$$)::timestamptz
                          AT TIME ZONE 'UTC' AS lo,
                      substring(pg_get_expr(c.relpartbound, c.oid) FROM $$TO \\('([^']+)'\\)$$)::timestamptz
                          AT TIME ZONE 'UTC' AS hi) b
         WHERE p.relnamespace = 'evalledger'::regnamespace AND p.relkind = 'p'
         GROUP BY p.relname""",
}
PARTITIONS = """
    SELECT c.relname, p.relname FROM pg_inherits i
      JOIN pg_class p ON p.oid = i.inhparent JOIN pg_class c ON c.oid = i.inhrelid
     WHERE p.relnamespace = 'evalledger'::regnamespace AND p.relkind = 'p'"""


def snapshot(conn: psycopg.Connection) -> str:
    """The schema as sorted text lines under one heading per section."""
    # Names print schema-qualified only off the search_path: fix it so the text never varies.
    saved = conn.execute("SHOW search_path").fetchone()[0]
    conn.execute("SET search_path = pg_catalog")
    try:
        # A partition's name (and the names derived from it) carries its month: print it undated.
        undated = {name: f"{parent}_pYYYYMM" for name, parent in conn.execute(PARTITIONS)}
        pattern = re.compile("|".join(sorted(map(re.escape, undated), key=len, reverse=True)) or "(?!)")
        out = []
        for title, query in SECTIONS.items():
            out.append(f"## {title}")
            out.extend(sorted({pattern.sub(lambda m: undated[m.group(0)], row[0]) for row in conn.execute(query)}))
    finally:
        conn.execute(f"SET search_path = {saved}")
    return "\n".join(out) + "\n"


def fresh_snapshot(server_url: str) -> str:
    """Migrate a new scratch database on the server, snapshot it, drop it."""
    from evalledger.core.scratch import migrated_database

    with migrated_database(server_url, "evalledger_schema") as dsn, psycopg.connect(dsn) as conn:
        return snapshot(conn)


def main() -> None:
    """Write the snapshot of a freshly migrated database to tests/db/schema.current.txt."""
    from evalledger.core import db

    SNAPSHOT_FILE.write_text(fresh_snapshot(db.database_url()))
    print(f"wrote {SNAPSHOT_FILE.name}")


if __name__ == "__main__":
    main()
