"""A normalised picture of the ledger's schema, object by object, to hold two databases equal: one
built from the current files (sql/schema.sql) and one built by every migration in order.

Each section is one catalog query returning text lines, and every line starts with the name of the
object it describes (a table's columns, constraints, policies and grants under the table's name, a
trigger under its table's), so a difference is reported by the object's kind and name. Function
and view bodies are compared whole (pg_get_functiondef, pg_get_viewdef), comments and grants (with
their grantor) exactly; the rows a build inserts (the seed rubrics, targets, the journal's BASELINE
entries) are compared without the columns a clock or a hash of one fills.

The picture is the same on every date: the monthly partitions of eval_candidates are named after the
months they hold, so each partition's name is printed as <parent>_pYYYYMM, the lines it yields are
listed once, and a "partitions" line checks instead how many there are, that each holds one whole
month (UTC) and that its name says which.
"""

from __future__ import annotations

import re
from collections import defaultdict

import psycopg

SCHEMAS = "('evalledger'::regnamespace, 'evalledger_guard'::regnamespace)"
_ACL = """(SELECT string_agg(format('%s:%s<-%s', CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END,
                                     a.privilege_type::text || CASE WHEN a.is_grantable THEN '*' ELSE '' END,
                                     pg_get_userbyid(a.grantor)), ' ' ORDER BY 1)
             FROM aclexplode({acl}) a)"""

# Section (the kind of object its lines describe) -> query. Each line: "<object name> <what it is>".
SECTIONS = {
    "schema": f"""
        SELECT format('%s owner=%s acl=%s comment=%s', n.nspname, pg_get_userbyid(n.nspowner),
                      {_ACL.format(acl='n.nspacl')}, obj_description(n.oid, 'pg_namespace'))
          FROM pg_namespace n WHERE n.oid IN {SCHEMAS}""",
    "type": f"""
        SELECT format('%s owner=%s labels=%s comment=%s', t.typname, pg_get_userbyid(t.typowner),  -- a composite's columns: see column
                      (SELECT string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
                      obj_description(t.oid, 'pg_type'))
          FROM pg_type t LEFT JOIN pg_class r ON r.oid = t.typrelid
         WHERE t.typnamespace IN {SCHEMAS} AND (t.typtype = 'e' OR r.relkind = 'c')""",
    "table": f"""
        SELECT format('%s kind=%s rls=%s forced=%s options=%s owner=%s partitioned_by=%s acl=%s comment=%s',
                      c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity, c.reloptions,
                      pg_get_userbyid(c.relowner), pg_get_partkeydef(c.oid), {_ACL.format(acl='c.relacl')},
                      obj_description(c.oid, 'pg_class'))
          FROM pg_class c WHERE c.relnamespace IN {SCHEMAS} AND c.relkind IN ('r', 'p')""",
    # Position among the live columns: column order is a contract of the seed tables.
    "column": f"""
        SELECT format('%s #%s %s %s%s%s%s%s acl=%s comment=%s', c.relname,
                      row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum), a.attname,
                      format_type(a.atttypid, a.atttypmod), CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                      coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''),
                      CASE a.attidentity WHEN '' THEN '' ELSE ' identity ' || a.attidentity::text END,
                      CASE a.attgenerated WHEN '' THEN '' ELSE ' generated ' || a.attgenerated::text END,
                      {_ACL.format(acl='a.attacl')}, col_description(c.oid, a.attnum))
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE c.relnamespace IN {SCHEMAS} AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'c')""",
    "constraint": f"""
        SELECT format('%s %s %s comment=%s', c.relname, k.conname, pg_get_constraintdef(k.oid),
                      obj_description(k.oid, 'pg_constraint'))
          FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
         WHERE c.relnamespace IN {SCHEMAS}
           AND k.contype <> 'n'  -- NOT NULL is a constraint row only from PostgreSQL 18; see column""",
    "index": f"""
        SELECT format('%s %s comment=%s', c.relname, pg_get_indexdef(i.indexrelid), obj_description(x.oid, 'pg_class'))
          FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class x ON x.oid = i.indexrelid
         WHERE c.relnamespace IN {SCHEMAS}""",
    "trigger": f"""
        SELECT format('%s.%s %s enabled=%s comment=%s', c.relname, t.tgname, pg_get_triggerdef(t.oid), t.tgenabled,
                      obj_description(t.oid, 'pg_trigger'))
          FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         WHERE c.relnamespace IN {SCHEMAS} AND NOT t.tgisinternal""",
    "policy": f"""
        SELECT format('%s %s cmd=%s permissive=%s to=%s using=%s check=%s', c.relname, p.polname, p.polcmd,
                      p.polpermissive, (SELECT string_agg(CASE r WHEN 0 THEN 'PUBLIC' ELSE pg_get_userbyid(r) END, ',' ORDER BY 1)
                                          FROM unnest(p.polroles) r),
                      pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
          FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace IN {SCHEMAS}""",
    # The whole definition: a body, a SET, a volatility or a SECURITY DEFINER that differs is stale.
    "function": f"""
        SELECT format('%s(%s) owner=%s acl=%s comment=%s definition_md5=%s', p.proname,
                      pg_get_function_identity_arguments(p.oid), pg_get_userbyid(p.proowner),
                      {_ACL.format(acl='p.proacl')}, obj_description(p.oid, 'pg_proc'),
                      md5(pg_get_functiondef(p.oid)))
          FROM pg_proc p WHERE p.pronamespace IN {SCHEMAS} AND p.prokind IN ('f', 'p', 'w')""",
    "view": f"""
        SELECT format('%s options=%s owner=%s acl=%s comment=%s definition_md5=%s', c.relname, c.reloptions,
                      pg_get_userbyid(c.relowner), {_ACL.format(acl='c.relacl')}, obj_description(c.oid, 'pg_class'),
                      md5(pg_get_viewdef(c.oid)))
          FROM pg_class c WHERE c.relnamespace IN {SCHEMAS} AND c.relkind IN ('v', 'm')""",
    "event trigger": """
        SELECT format('%s on=%s tags=%s enabled=%s function=%s owner=%s', e.evtname, e.evtevent, e.evttags,
                      e.evtenabled, e.evtfoid::regproc, pg_get_userbyid(e.evtowner))
          FROM pg_event_trigger e WHERE e.evtname LIKE 'evalledger\\_%'""",
    "default privileges": f"""
        SELECT format('%s in=%s on=%s acl=%s', pg_get_userbyid(d.defaclrole), d.defaclnamespace::regnamespace,
                      d.defaclobjtype, {_ACL.format(acl='d.defaclacl')})
          FROM pg_default_acl d WHERE pg_get_userbyid(d.defaclrole) LIKE 'evalledger\\_%'""",
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
# The rows a build inserts, without what a clock, a transaction id, a random id or a hash of those
# fills (the journal's roots and fingerprints hash the rows' times).
TABLES_WITH_ROWS = """
    SELECT c.relname, array_agg(a.attname::text ORDER BY a.attnum) FILTER (
               WHERE a.atttypid IN ('timestamptz'::regtype, 'bytea'::regtype, 'uuid'::regtype, 'int[]'::regtype)
                  OR a.attname = 'txid')
      FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind = 'r' AND NOT c.relispartition
     GROUP BY c.relname"""


def snapshot(conn: psycopg.Connection, *, rows: bool = True) -> str:
    """The schema (and, with rows, the rows its build inserted) as sorted lines under one heading per
    section."""
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
        if rows:
            out.append("## rows")
            for table, volatile in conn.execute(TABLES_WITH_ROWS).fetchall():
                found = conn.execute(f"SELECT (to_jsonb(t) - %s::text[])::text FROM evalledger.{table} t",
                                     (volatile or [],)).fetchall()
                out.extend(sorted(f"{table} {row}" for (row,) in found))
    finally:
        conn.execute(f"SET search_path = {saved}")
    return "\n".join(out) + "\n"


def _by_object(picture: str) -> dict[tuple[str, str], set[str]]:
    lines: list[tuple[str, str, str]] = []
    section = ""
    for line in picture.splitlines():
        if line.startswith("## "):
            section = line[3:]
        else:
            lines.append((section, re.split(r"[ (]", line, maxsplit=1)[0], line))
    # A table's parts are told apart by the table's name (its columns, constraints, indexes and
    # policies are what its file holds); a view's or a composite type's columns by theirs.
    owner_kind = {name: section for section, name, _ in lines if section in ("view", "type")}
    objects: dict[tuple[str, str], set[str]] = defaultdict(set)
    for section, name, line in lines:
        kind = section
        if section in ("column", "constraint", "index", "policy"):
            kind = owner_kind.get(name, "table")
        objects[(kind, name)].add(f"{section}: {line}")
    return objects


def differences(current: str, migrated: str) -> list[str]:
    """One sentence per object that differs between a picture of the current files' build and one of
    the migrations' build: missing (the migrations install it, no current file builds it), extra (a
    current file builds what the migrations do not install) or stale (built differently)."""
    built, installed = _by_object(current), _by_object(migrated)
    found = []
    for kind, name in sorted(built.keys() | installed.keys()):
        have, want = built.get((kind, name), set()), installed.get((kind, name), set())
        if have == want:
            continue
        if not have:
            found.append(f"{kind} {name}: installed by the migrations, but no current file builds it")
        elif not want:
            found.append(f"{kind} {name}: built by the current files, but no migration installs it")
        else:
            lines = [f"  migrations: {line}" for line in sorted(want - have)]
            lines += [f"  current:    {line}" for line in sorted(have - want)]
            found.append(f"{kind} {name}: its current file is stale\n" + "\n".join(lines))
    return found
