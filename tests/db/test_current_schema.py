"""The current files and the history build the same ledger: a database built from sql/schema.sql
(every current file of sql/ and triggers/, by psql in one transaction) and one built by every
migration in order are identical, object by object (tests/db/schema_objects.py), with the rows their
builds insert; and each installed object has its one file, named after it."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from evalledger.ops import pgtools
from evalledger.core.paths import database_root
from tests.db.schema_objects import differences, snapshot

SCHEMA = database_root() / "sql" / "schema.sql"


@contextlib.contextmanager
def empty_database(server_dsn: str, name: str) -> Iterator[str]:
    """A new, empty database on the server of server_dsn; dropped afterwards. Yields its DSN."""
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
    try:
        yield make_conninfo(server_dsn, dbname=name)
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def build_current(dsn: str) -> float:
    """Build sql/schema.sql into the database at dsn with the wheel's psql, in one transaction, as
    a person would; the seconds it took."""
    target, env = pgtools.libpq_args(dsn)
    started = time.monotonic()
    pgtools.run("psql", "--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1", "--single-transaction",
                "--file", str(SCHEMA), "--dbname", target, env=env, what="psql -f sql/schema.sql")
    return time.monotonic() - started


@pytest.fixture(scope="module")
def current(clone_pool) -> Iterator[str]:
    """A database built from the current files alone."""
    with clone_pool.clone() as scratch, empty_database(scratch, f"evalledger_current_{os.getpid()}") as dsn:
        build_current(dsn)
        yield dsn


@pytest.fixture(scope="module")
def current_picture(current) -> str:
    with psycopg.connect(current, autocommit=True) as conn:
        return snapshot(conn)


@pytest.fixture(scope="module")
def migrated_picture(module_dsn) -> str:
    """The template's picture: a database built by every migration in order."""
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        return snapshot(conn)


def test_the_current_files_build_what_the_migrations_built(current_picture, migrated_picture):
    assert differences(current_picture, migrated_picture) == []


def test_the_picture_covers_every_kind_of_object(migrated_picture):
    # Not vacuous: each section found objects (an empty section would compare equal anywhere).
    sections = re.findall(r"^## (.+)\n(?!## )", migrated_picture, re.MULTILINE)
    assert set(sections) >= {"schema", "type", "table", "column", "constraint", "index", "trigger", "policy",
                             "function", "view", "event trigger", "default privileges", "partitions", "rows"}


@pytest.fixture
def current_admin(current) -> Iterator[psycopg.Connection]:
    """A superuser connection on the current build, whose changes are rolled back after the test."""
    with psycopg.connect(current) as conn:
        # The guards refuse DDL on the ledger outside a migration; as the installer, turned off here
        # in the same transaction that is rolled back.
        conn.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 DISABLE")
        conn.execute("ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE")
        conn.execute("SET ROLE evalledger_code")
        yield conn
        conn.rollback()


def test_a_stale_missing_or_extra_current_file_is_named(current_admin, migrated_picture):
    conn = current_admin
    # Stale: a function whose current file says something else than its migration did.
    conn.execute("CREATE OR REPLACE FUNCTION evalledger.finite_v1(x numeric) RETURNS boolean "
                 "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT true $$")
    # Missing: a view no current file builds.
    conn.execute("DROP VIEW evalledger.cost_by_month_v1")
    # Extra: a current file for an object no migration installs.
    conn.execute("CREATE FUNCTION evalledger.capture_distinct_v1(text[]) RETURNS text[] LANGUAGE sql "
                 "AS $$ SELECT $1 $$")
    # A table's part: an index of a table.
    conn.execute("DROP INDEX evalledger.brain_eval_log_brain_late_idx")
    conn.execute("RESET ROLE")
    conn.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS")
    conn.execute("ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS")
    found = differences(snapshot(conn), migrated_picture)
    assert [line.split(":")[0] for line in found] == [
        "function capture_distinct_v1",
        "function finite_v1",
        "table brain_eval_log",
        "view cost_by_month_v1",
    ]
    assert "its current file is stale" in found[1]
    assert found[0].endswith("built by the current files, but no migration installs it")
    assert "brain_eval_log_brain_late_idx" in found[2]
    assert found[3].endswith("installed by the migrations, but no current file builds it")


def test_a_changed_seed_row_is_named(migrated_picture):
    assert "AGT-901" in migrated_picture
    changed = migrated_picture.replace("Pipeline brain (diagnosis)", "renamed")
    found = differences(changed, migrated_picture)
    assert [line.split(":")[0] for line in found] == ["rows target"]
    assert "renamed" in found[0]


# -- one file per installed object ----------------------------------------------------------------

def current_files() -> dict[str, Path]:
    """Each file of sql/<suite>/ and triggers/<suite>/ by its name (queries.sql are named queries,
    schema.sql the build order: neither installs an object)."""
    root = database_root()
    found: dict[str, Path] = {}
    for path in sorted([*root.glob("sql/*/*.sql"), *root.glob("triggers/*/*.sql")]):
        if path.name in ("queries.sql", "schema.sql"):
            continue
        assert path.stem not in found, f"{path} and {found[path.stem]}: two files of one name"
        found[path.stem] = path
    return found


INSTALLED = """
    SELECT 'table', c.relname::text FROM pg_class c
     WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    UNION SELECT 'view', c.relname FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind = 'v'
    UNION SELECT 'type', t.typname FROM pg_type t WHERE t.typnamespace = 'evalledger'::regnamespace
       AND (t.typtype = 'e' OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
    UNION SELECT CASE WHEN p.prorettype IN ('trigger'::regtype, 'event_trigger'::regtype) THEN 'trigger function'
                      ELSE 'function' END, p.proname
      FROM pg_proc p WHERE p.pronamespace IN ('evalledger'::regnamespace, 'evalledger_guard'::regnamespace)"""
# What the build's steps make from a file's procedure, not from a file of their own: the journal's
# per-table key, parts and fingerprints functions (journal_attach_v2.sql).
MADE_BY_A_PROCEDURE = {"journal_key_v1", "journal_parts_v1", "journal_fingerprints_v1"}
# Files that install no object of their own: the roles and schemas (core), the large-object
# privileges PUBLIC loses, and the rows every ledger starts with.
NOT_AN_OBJECT = {"roles", "evalledger", "evalledger_guard", "large_objects", "brain_eval_targets",
                 "brain_eval_rubric_v1", "takes_quality_rubric_v1_0", "takes_quality_rubric_v1_1",
                 "work_quality_rubric_v1", "replay_rubric_v1"}


def test_every_installed_object_has_its_one_file_and_every_file_an_object(migrated_picture, module_dsn):
    with psycopg.connect(module_dsn) as conn:
        installed = {name: kind for kind, name in conn.execute(INSTALLED)}
    files = current_files()
    without_file = sorted(f"{kind} {name}" for name, kind in installed.items()
                          if name not in files and name not in MADE_BY_A_PROCEDURE)
    assert without_file == [], "an installed object without a file named after it in sql/<suite>/ or triggers/<suite>/"
    without_object = sorted(str(p.relative_to(database_root())) for name, p in files.items()
                            if name not in installed and name not in NOT_AN_OBJECT)
    assert without_object == [], "a current file for an object that is not installed"
    misplaced = sorted(str(files[name].relative_to(database_root())) for name, kind in installed.items()
                       if name in files and (kind == "trigger function") != (files[name].parts[-3] == "triggers"))
    assert misplaced == [], "a function that runs as a trigger goes in triggers/, anything else in sql/"
    assert set(NOT_AN_OBJECT) <= set(files)


def test_schema_sql_builds_every_current_file_once():
    included = re.findall(r"^\\ir\s+(\S+)\s*$", SCHEMA.read_text(), re.MULTILINE)
    resolved = [(SCHEMA.parent / target).resolve() for target in included]
    assert len(resolved) == len(set(resolved)), "a file included twice"
    assert sorted(map(str, resolved)) == sorted(str(p.resolve()) for p in current_files().values())
