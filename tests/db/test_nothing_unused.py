"""No function or view is installed that nothing uses: a superseded version is dropped, not kept.

A function or view of the ledger's schemas is used when something installed or shipped reaches
it: a trigger (or event trigger) runs it, a policy, CHECK constraint or column default calls it, a
migration or sql/schema.sql CALLs it (the build's own steps), a named query in sql/*/queries.sql names it, or
the docs name it as an entry point (ENTRY_POINTS below, each with the page that names it). From
those, whatever a used function's body or a used view's definition names is used too.
"""

import re
from pathlib import Path

import psycopg
import pytest

from evalledger.core.paths import database_root

# What a person or a program calls directly, and the page that tells them to.
ENTRY_POINTS = {
    "retention_purge_v2": "docs/guards.md",  # the one purge, as the retention role
    "work_quality_history_v1": "docs/work-quality.md",  # a view BI tools read
    "prompt_drift_v1": "docs/brain-eval.md",  # one of seed 002's panels, read by BI tools
    "brain_eval_by_month_recount_v1": "docs/bi.md",  # an auditor's check of the panel tables
    # 0.1.0's view function, which SQL clients may call by name; the view reads v3 since 0101.
    "prompt_drift_rows_v2": "docs/bi.md",
    # 0.1.0's trend function, which SQL clients may call by name; the dashboards read v2 (with each run's
    # error bars) since 0164.
    "brain_trend_rows_v1": "docs/bi.md",
    # The statistics a person or a BI tool calls by name (issue 36), each formula on the page.
    "paired_difference_v1": "docs/statistics.md",
    "min_detectable_effect_v1": "docs/statistics.md",
    "sample_size_v1": "docs/statistics.md",
}

OBJECTS = """
    SELECT p.oid, p.proname::text AS name, 'function' AS kind, p.prosrc AS body
      FROM pg_proc p WHERE p.pronamespace IN ('evalledger'::regnamespace, 'evalledger_guard'::regnamespace)
    UNION ALL
    SELECT c.oid, c.relname::text, 'view', pg_get_viewdef(c.oid)
      FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('v', 'm')"""
# The text of everything that calls into the ledger's functions from outside one.
CALLERS = """
    SELECT 'trigger ' || t.tgname, p.proname::text FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
      JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT t.tgisinternal
    UNION ALL
    SELECT 'event trigger ' || e.evtname, p.proname::text FROM pg_event_trigger e JOIN pg_proc p ON p.oid = e.evtfoid
     WHERE e.evtname LIKE 'evalledger\\_%'
    UNION ALL
    SELECT 'policy ' || pol.polname, concat_ws(' ', pg_get_expr(pol.polqual, pol.polrelid),
                                                 pg_get_expr(pol.polwithcheck, pol.polrelid))
      FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid WHERE c.relnamespace = 'evalledger'::regnamespace
    UNION ALL
    SELECT 'constraint ' || k.conname, pg_get_constraintdef(k.oid)
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid WHERE c.relnamespace = 'evalledger'::regnamespace
    UNION ALL
    SELECT 'default ' || c.relname || '.' || a.attname, pg_get_expr(d.adbin, d.adrelid)
      FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
      JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
     WHERE c.relnamespace = 'evalledger'::regnamespace"""


def named_queries() -> str:
    """Every named query's SQL, comments left out (a comment naming a function is not a use)."""
    files = sorted((database_root() / "sql").glob("*/queries.sql"))
    assert files, "no sql/*/queries.sql found"
    return "\n".join(re.sub(r"--[^\n]*", "", f.read_text()) for f in files)


def migration_calls() -> str:
    """The procedures the build CALLs (its own steps): in the migrations, and in the current files
    that sql/schema.sql builds the same schema from."""
    root = database_root()
    paths = [*root.glob("migrations/*.sql"), *root.glob("sql/**/*.sql"), *root.glob("triggers/**/*.sql")]
    text = "\n".join(p.read_text() for p in sorted(paths) if p.name != "queries.sql")
    return "\n".join(re.findall(r"^\s*CALL\s+([\w.]+)\s*\(", text, re.MULTILINE | re.IGNORECASE))


def code_of(body: str) -> str:
    """A body without its comments and without the words of its messages: a RAISE that names a
    function (a HINT pointing a person to it) is no call of it; a format() argument still is."""
    body = re.sub(r"--[^\n]*", "", body)
    return re.sub(r"\bRAISE\b[^;]*;", lambda m: re.sub(r"'(?:[^']|'')*'", "''", m.group(0)), body,
                  flags=re.IGNORECASE)


def names_in(text: str, names) -> set[str]:
    """The names that text holds as whole words (what `\\bname\\b` finds): one pass over its words,
    not one regular expression per name (there are hundreds, for each of thousands of texts)."""
    words = set(re.findall(r"\w+", text))
    return words.intersection(names) | {n for n in names if not n.isidentifier()
                                        and re.search(rf"\b{re.escape(n)}\b", text)}


def bodies_of(objects) -> dict[str, str]:
    """Each function's and view's code by name (every overload's body together)."""
    bodies: dict[str, str] = {}
    for _, name, _, body in objects:
        bodies[name] = bodies.get(name, "") + "\n" + code_of(body or "")
    return bodies


def reached_from(bodies: dict[str, str], start: set[str]) -> set[str]:
    """start and whatever their bodies name, and what those name, to the end."""
    reached, frontier = set(start), set(start)
    while frontier:
        found = set().union(*(names_in(bodies[name], bodies.keys() - {name}) for name in frontier))
        frontier = found - reached
        reached |= frontier
    return reached


def unused(conn: psycopg.Connection) -> list[str]:
    """The functions and views of the ledger that nothing reaches, as 'kind name'."""
    objects = conn.execute(OBJECTS).fetchall()
    names = {name for _, name, _, _ in objects}
    called = set(ENTRY_POINTS) & names
    for _, text in conn.execute(CALLERS):
        called |= names_in(text or "", names)
    called |= names_in(named_queries(), names) | names_in(migration_calls(), names)
    reached = reached_from(bodies_of(objects), called)
    return sorted(f"{kind} {name}" for _, name, kind, _ in objects if name not in reached)


# Superseded versions still installed, each until the fold that drops it: none since the 0.1.0
# fold (issue 24), which folded 0002-0012 into the baseline. Exact: a function that becomes unused
# without being listed here fails, and so does one listed that is gone or used.
FOLD_PENDING: set[str] = set()


def test_every_function_and_view_is_used(admin):
    assert unused(admin) == sorted(f"function {name}" for name in FOLD_PENDING)


# What the folds dropped: refuse_change_v1 (the append-only guard refuse_change_v3 replaced),
# capture_purge_v1 (the old purge entry point), and
# seal_tables_v1 (the seal seal_tables_v2 replaced, used by nothing but the migrations' CALLs).
SUPERSEDED = {
    "refuse_change_v1": "RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'append-only'; END $$",
    "capture_purge_v1": "RETURNS bigint LANGUAGE sql AS $$ SELECT 0::bigint $$",
    "seal_tables_v1": "RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$",
}


@pytest.mark.parametrize("name", SUPERSEDED)
def test_a_superseded_function_left_installed_is_found(admin, name):
    with pytest.raises(psycopg.errors.QueryCanceled):
        with admin.transaction():
            admin.execute("SET LOCAL ROLE evalledger_code")
            admin.execute(f"CREATE FUNCTION evalledger.{name}() {SUPERSEDED[name]}")
            admin.execute("RESET ROLE")
            assert unused(admin) == sorted(f"function {n}" for n in {*FOLD_PENDING, name})
            raise psycopg.errors.QueryCanceled("rolled back")


def test_each_entry_point_is_named_by_its_page():
    root = Path(__file__).resolve().parents[2]
    for name, page in ENTRY_POINTS.items():
        assert name in (root / page).read_text(), f"{page} does not name {name}"
