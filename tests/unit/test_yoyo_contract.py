"""What core/migrate.py relies on below yoyo's public API, pinned: if a yoyo release renames,
re-signs or stops setting any of it, this fails before a migration runs wrong."""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import tomllib
from pathlib import Path

import pytest
from yoyo.backends.base import DatabaseBackend
from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
from yoyo.connections import parse_uri
from yoyo.migrations import Migration, MigrationList, StepCollector
from yoyo.utils import change_param_style

from evalledger.core.migrate import LedgerBackend, LedgerMigration

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _params(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_the_installed_yoyo_is_in_the_pinned_range():
    deps = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]["dependencies"]
    [spec] = [d for d in deps if d.startswith("yoyo-migrations")]
    bounds = dict(re.findall(r"(>=|<)\s*([\d.]+)", spec))
    assert set(bounds) == {">=", "<"}, f"pin yoyo-migrations to a range with an upper bound, got {spec!r}"
    installed = _version(importlib.metadata.version("yoyo-migrations"))
    assert _version(bounds[">="]) <= installed < _version(bounds["<"])


@pytest.mark.parametrize("name, params", [
    ("connect", ["self", "dburi"]),
    ("copy", ["self"]),
    ("execute", ["self", "sql", "params"]),
    ("lock", ["self", "timeout"]),
    ("apply_one", ["self", "migration", "force", "mark"]),
])
def test_the_backend_methods_we_override_keep_their_signatures(name, params):
    theirs = getattr(PostgresqlPsycopgBackend, name)
    assert _params(theirs) == params
    assert _params(getattr(LedgerBackend, name)) == params
    if name == "apply_one":  # yoyo calls it with these defaults
        defaults = {k: p.default for k, p in inspect.signature(theirs).parameters.items()}
        assert (defaults["force"], defaults["mark"]) == (False, True)


@pytest.mark.parametrize("name, params", [
    ("__init__", ["self", "dburi", "migration_table"]),
    ("cursor", ["self"]),
    ("ensure_internal_schema_updated", ["self"]),
    ("transaction", ["self", "rollback_on_exit"]),
    ("log_migration", ["self", "migration", "operation"]),
    ("mark_one", ["self", "migration", "log"]),
    ("to_apply", ["self", "migrations"]),
    ("apply_migrations", ["self", "migrations", "force"]),
])
def test_the_backend_methods_we_call_keep_their_signatures(name, params):
    assert _params(getattr(PostgresqlPsycopgBackend, name)) == params


def test_the_backend_state_we_use_is_still_there():
    assert PostgresqlPsycopgBackend._is_locked is False  # lock() is re-entrant through it
    assert isinstance(inspect.getattr_static(DatabaseBackend, "connection"), property)
    assert isinstance(inspect.getattr_static(DatabaseBackend, "driver"), property)
    assert PostgresqlPsycopgBackend.driver_module == "psycopg"  # our connect() opens psycopg 3
    # backend_for() builds one from this URI; the scheme must still name the psycopg 3 backend.
    assert parse_uri("postgresql+psycopg://evalledger/evalledger").scheme == "postgresql+psycopg"


def test_the_migration_and_step_api_we_use_keeps_its_signatures():
    assert _params(Migration.__init__) == ["self", "id", "path", "source_dir"]
    assert _params(Migration.load) == ["self"]
    assert _params(Migration.process_steps) == ["self", "backend", "direction", "force"]
    assert isinstance(inspect.getattr_static(Migration, "loaded"), property)
    assert _params(StepCollector.__init__) == ["self", "migration"]
    assert _params(StepCollector.add_step)[:2] == ["self", "apply"]
    assert _params(StepCollector.create_steps) == ["self", "use_transactions"]
    assert _params(change_param_style) == ["target_style", "sql", "bind_parameters"]
    assert _params(MigrationList.__init__)[:2] == ["self", "items"]


def test_our_load_sets_what_yoyos_load_sets(tmp_path):
    path = tmp_path / "0001.x.sql"
    path.write_text("-- a migration\nCREATE TABLE x (a int);\n", encoding="utf-8")
    theirs = Migration("0001.x", str(path), str(tmp_path))
    ours = LedgerMigration("0001.x", str(path), str(tmp_path))
    before = set(vars(ours))
    theirs.load()
    ours.load()
    assert set(vars(ours)) == set(vars(theirs)) and before <= set(vars(ours))
    assert ours.loaded and theirs.loaded
    assert ours.use_transactions is True and ours._depends == set() == theirs._depends
    assert [type(s) for s in ours.steps] == [type(s) for s in theirs.steps]
    assert ours.module.__doc__ == "a migration"


def test_change_param_style_still_converts_named_parameters():
    sql, params = change_param_style("format", "SELECT :a, :b", {"a": 1, "b": 2})
    assert (sql, params) == ("SELECT %s, %s", (1, 2))
