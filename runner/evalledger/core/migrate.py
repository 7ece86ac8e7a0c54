"""Schema migrations: yoyo's bookkeeping with three of its gaps closed.

- A migration and its applied-mark commit in one transaction: a crash leaves neither.
- SQL without parameters is sent as it is, so a ``%`` in a migration is just a ``%``.
- The lock is a table lock on yoyo's own lock table, held by a second connection's open
  transaction: the server releases it if the process dies, so a killed ``migrate`` never leaves a
  stale lock row behind, and two at once simply queue. Unlike an advisory key, which any login
  may take and hold to stall every migration, the table is the installer's: no application role
  holds a privilege on it, so none can lock it.

A migration is history: one self-contained file, a released one frozen. Every migration of the
checkout is written so (tests/unit/test_released_migrations.py); an ``\\ir path`` line (which
``psql -f`` reads the same way) is still expanded here, for a migration someone writes with one,
and ``make release-checksums`` expands it in place at the release.
"""

from __future__ import annotations

import contextlib
import re
import types
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.sql import SQL, Identifier
from yoyo import internalmigrations
from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
from yoyo.connections import parse_uri
from yoyo.migrations import Migration, MigrationList, StepCollector
from yoyo.utils import change_param_style

from . import queries
from .db import read_only_refusal, unreachable
from .errors import EvalledgerError
from .paths import migrations_dir
from .versions import refuse_pre_release_ledger

_INCLUDE = re.compile(r"^\\ir\s+(\S+)\s*$", re.MULTILINE)


def expand_includes(path: Path, seen: tuple[Path, ...] = ()) -> str:
    """The file's SQL with each `\\ir relative/path` line replaced by that file's text."""
    if path in seen:
        raise EvalledgerError(f"{path.name}: \\ir includes itself")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalledgerError(f"{seen[-1].name if seen else path}: missing include {path}") from None

    def include(match: re.Match) -> str:
        return expand_includes((path.parent / match.group(1)).resolve(), (*seen, path))

    return _INCLUDE.sub(include, text)


class LedgerMigration(Migration):
    """A .sql migration run as one multi-statement step, with its includes expanded."""

    def load(self) -> None:
        if self.loaded:
            return
        self.source = expand_includes(Path(self.path))
        self.module = types.ModuleType(self.path)
        self.module.__doc__ = self.source.split("\n", 1)[0].lstrip("- ")
        self._depends = set()
        self.use_transactions = True
        collector = StepCollector(migration=self)
        collector.add_step(self.source)
        self.steps = collector.create_steps(True)


class LedgerBackend(PostgresqlPsycopgBackend):
    """yoyo's psycopg 3 backend on a connection we open ourselves."""

    dsn = ""

    def connect(self, dburi):
        try:
            return psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise unreachable(self.dsn, exc) from None

    def copy(self):
        raise AssertionError("every step runs on the one connection that also marks it applied")

    def execute(self, sql, params=None):
        cursor = self.cursor()
        if params:
            sql, params = change_param_style(self.driver.paramstyle, sql, params)
            cursor.execute(sql, params)
        else:
            cursor.execute(sql)
        return cursor

    @contextlib.contextmanager
    def lock(self, timeout=None):
        if self._is_locked:
            yield
            return
        # yoyo's own row-based lock is not used, only its table. The holder's transaction stays
        # open for as long as the migrations run on the main connection.
        self.create_lock_table()
        owner = self.connection.execute(queries.get("migration_lock_owner"), {"table": self.lock_table}).fetchone()
        if owner and not owner[1]:
            raise EvalledgerError(f"migrate: the lock table {self.lock_table} belongs to {owner[0]}, who may then hold "
                                  "every migration up: drop it as the installer and run migrate again")
        try:
            holder = psycopg.connect(self.dsn, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise unreachable(self.dsn, exc) from None
        with holder:
            holder.execute(SQL(queries.get("migration_lock")).format(lock_table=Identifier(self.lock_table)))
            self._is_locked = True
            try:
                yield
            finally:
                self._is_locked = False
                holder.rollback()

    def apply_one(self, migration, force=False, mark=True):
        self.ensure_internal_schema_updated()
        with self.transaction():
            # What a migration's backfill reads and stores does not follow the installer's session:
            # READ COMMITTED, float8 in the shortest exact digits.
            self.execute(queries.get("pin_migration_session"))
            migration.process_steps(self, "apply", force=force)
            # A migration may SET LOCAL its role and search_path; yoyo's tables are in the default.
            self.execute(queries.get("reset_session"))
            self.log_migration(migration, "apply")
            if mark:
                self.mark_one(migration, log=False)


def read_migrations(directory: Path | None = None) -> MigrationList:
    """The migrations in id order; finding none is an error, never "up to date"."""
    directory = directory or migrations_dir()
    paths = sorted(p for p in directory.glob("*.sql") if not p.name.endswith(".rollback.sql"))
    if not paths:
        raise EvalledgerError(f"no migrations found in {directory}: the installation is incomplete")
    return MigrationList(LedgerMigration(p.stem, str(p), str(directory)) for p in paths)


def backend_for(dsn: str) -> LedgerBackend:
    """A yoyo backend bound to dsn."""
    backend_class = type("BoundLedgerBackend", (LedgerBackend,), {"dsn": dsn})
    return backend_class(parse_uri("postgresql+psycopg://evalledger/evalledger"), "_yoyo_migration")


@dataclass(frozen=True)
class Status:
    """Which migrations a database has, and which it lacks."""

    applied: list[str]
    pending: list[str]


def status(dsn: str, directory: Path | None = None) -> Status:
    """Applied and pending migrations of the database at dsn."""
    migrations = read_migrations(directory)
    # No lock: reading needs none (a migration commits with its mark, so no half-applied one is
    # seen), and the lock is the installer's: a reader's login, or a standby, may take none.
    with backend_for(dsn) as backend:
        pending = {m.id for m in backend.to_apply(migrations)}
    ids = [m.id for m in migrations]
    return Status([i for i in ids if i not in pending], [i for i in ids if i in pending])


def pending_without_writing(backend: LedgerBackend, migrations: MigrationList) -> list:
    """The migrations the database lacks, read without a lock or a write: all of them where yoyo's
    own tables are missing or older than it (it would take the lock to make them first)."""
    if internalmigrations.needs_upgrading(backend):
        return list(migrations)
    return backend.to_apply(migrations)


def migrate(dsn: str, directory: Path | None = None) -> list[str]:
    """Apply every pending migration under the lock; return the ids applied."""
    migrations = read_migrations(directory)
    with backend_for(dsn) as backend:
        if backend.connection.execute(queries.get("session_read_only")).fetchone()[0]:
            # yoyo would fail making its lock table, naming the table and not why.
            if not pending_without_writing(backend, migrations):
                return []
            raise read_only_refusal(dsn) or EvalledgerError("migrate: the database refused to write: this "
                                                            "session's transactions are read-only")
        with backend.lock():
            # A pre-release's ledger would otherwise be "up to date", or take a migration written for
            # the release's schema on top of another.
            refuse_pre_release_ledger(backend.connection, [m.id for m in migrations])
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
    return [m.id for m in pending]
