"""Connections: which server, which role, and database errors turned into sentences."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import psycopg
from psycopg import errors as pgerrors, sql

from .errors import DatabaseRefusal, EvalledgerError
from .versions import refuse_newer_ledger

SCHEMA = "evalledger"

# The application roles; the CLI acts as one of them with SET ROLE, so privileges and row-level
# security apply to the command exactly as they would to that role's own login.
ROLES = {
    "owner": "evalledger_owner",
    "runner": "evalledger_runner",
    "reviewer": "evalledger_reviewer",
    "revops": "evalledger_revops",
    "auditor": "evalledger_auditor",
    "agent": "evalledger_agent",
}

_explicit_url: str | None = None


def use_database_url(url: str | None) -> None:
    """Point every later connection at url (the CLI's --database-url)."""
    global _explicit_url
    _explicit_url = url


def database_url(start: bool = True) -> str:
    """--database-url, else DATABASE_URL, else the embedded server (started on demand)."""
    url = _explicit_url or os.environ.get("DATABASE_URL")
    if url:
        check_url(url)
        return url
    from .embedded import EmbeddedServer

    server = EmbeddedServer()
    return server.start() if start else server.dsn()


_explicit_read_url: str | None = None


def use_read_url(url: str | None) -> None:
    """Point every later reader at url (the CLI's --read-url)."""
    global _explicit_read_url
    _explicit_read_url = url


def read_url(start: bool = True) -> str:
    """Where commands that only read connect: --read-url, else --database-url, else DATABASE_READ_URL
    (a standby, say), else DATABASE_URL, else the embedded server. A flag beats the environment."""
    return _explicit_read_url or _explicit_url or os.environ.get("DATABASE_READ_URL") or database_url(start)


def read_only_refusal(url: str) -> EvalledgerError | None:
    """Why the server at url refused a write as read-only (SQLSTATE 25006), as an error that says what
    to do: it is a standby (naming its primary), or its sessions start read-only (naming who set
    default_transaction_read_only). None when neither holds, and the refusal speaks for itself."""
    from . import queries

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            standby, host, port = conn.execute(queries.get("standby_primary")).fetchone()
            starts_read_only = read_only_sessions(conn)
    except psycopg.Error:
        return None
    if standby:
        primary = f"the primary at {host}:{port}" if host else "its primary (which this user may not see)"
        return EvalledgerError(f"the database at {describe(url)} is a read-only standby replicating from {primary}: "
                               "commands that write go to the primary (DATABASE_URL or --database-url); point "
                               "only readers at a standby (DATABASE_READ_URL or --read-url)")
    if starts_read_only is None:
        return None
    return EvalledgerError(f"the database at {describe(url)} refused a write: {starts_read_only}")


def read_only_sessions(conn: psycopg.Connection) -> str | None:
    """When a new session like conn's starts read-only (default_transaction_read_only), who set it
    and what to do, in words; None when it starts read-write."""
    from . import queries

    read_only, source, role, database = conn.execute(queries.get("read_only_default")).fetchone()
    if not read_only:
        return None
    said = {"client": ("by this connection's options (PGOPTIONS, or options in the URL)", "leave it out of them"),
            "user": (f"for role {role} (ALTER ROLE ... SET)", "reset it for the role, or connect as another"),
            "database": (f"for database {database} (ALTER DATABASE ... SET)", "reset it for the database"),
            "database user": (f"for role {role} in database {database} (ALTER ROLE ... IN DATABASE ... SET)",
                              "reset it for the role there, or connect as another")}
    where, fix = said.get(source, (f"by the server ({source})", "set it off in the server's configuration"))
    return (f"its sessions start read-only, default_transaction_read_only = on {where}; commands that write need a "
            f"session that may write: {fix}")


def replayed(standby: psycopg.Connection, primary: psycopg.Connection, what: str, timeout: float = 120) -> None:
    """Wait until standby has replayed everything primary had written when called: what a reader of
    the standby then sees includes every transaction the primary had committed (what names the
    reader, for the error when the standby falls too far behind)."""
    import time

    from . import queries

    lsn = primary.execute(queries.get("wal_insert_lsn")).fetchone()[0]
    deadline = time.monotonic() + timeout
    while not standby.execute(queries.get("replayed_past"), {"lsn": lsn}).fetchone()[0]:
        if time.monotonic() > deadline:
            raise EvalledgerError(f"{what}: the standby had not replayed the primary's WAL up to {lsn} within "
                                  f"{timeout:.0f} s (see `evalledger doctor --database-url <standby>`)")
        time.sleep(0.05)


def describe(url: str) -> str:
    """The URL without its password, for messages."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    host = info.get("host") or "local socket"
    return f"{info.get('user', '')}@{host}:{info.get('port', 5432)}/{info.get('dbname', '')}"


def _source(url: str) -> str:
    """Where url came from, as a message names it: a reader's flag or variable, else the database's."""
    if url == _explicit_read_url:
        return "--read-url"
    if url == _explicit_url:
        return "--database-url"
    if url == os.environ.get("DATABASE_READ_URL") and url != os.environ.get("DATABASE_URL"):
        return "DATABASE_READ_URL"
    return "DATABASE_URL"


def check_url(url: str) -> None:
    """A connection string libpq can read, or a message naming where it came from."""
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        detail = " ".join(str(exc).split())
        raise EvalledgerError(f"{_source(url)}: not a PostgreSQL connection string ({detail}): expected "
                              "postgresql://USER@HOST:PORT/DBNAME or 'host=... dbname=...'") from None


def unreachable(url: str, exc: psycopg.OperationalError) -> EvalledgerError:
    """A failed connection as one line naming the server (never its password) and what to check."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    source = _source(url)
    if source in ("--read-url", "DATABASE_READ_URL"):
        hint = "check that it runs and that --read-url (or DATABASE_READ_URL) names it"
    elif _explicit_url or os.environ.get("DATABASE_URL"):
        hint = "check that it runs and that DATABASE_URL (or --database-url) names it"
    else:
        hint = "start it with `evalledger db up`"
    return EvalledgerError(f"cannot reach the database at {describe(url)}: "
                           f"{lines[0] if lines else type(exc).__name__}; {hint}")


# The roles that only read: every other connection may write, so it is refused on a ledger that a
# newer evalledger migrated (core/versions.py).
READING_ROLES = ("auditor", "revops")


def connect(url: str | None = None, *, role: str | None = None, autocommit: bool = False,
            writes: bool | None = None) -> psycopg.Connection:
    """Open a connection, acting as the named application role when one is given.

    A connection that may write (any but the auditor's and RevOps', unless writes=False) is
    refused when the ledger has migrations this package does not know."""
    url = url or database_url()
    check_url(url)
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise unreachable(url, exc) from None
    try:
        # The session as the ledger's functions expect it, whatever PGOPTIONS or the role's defaults
        # say: float8 in the shortest digits that read back the same value (what an export writes),
        # and transactions READ COMMITTED unless one asks for more (the ledger's decisions refuse a
        # snapshot older than the statement). One round trip.
        conn.execute(sql.SQL("SET search_path = {}, public; SET extra_float_digits = 1; "
                             "SET default_transaction_isolation = 'read committed'").format(sql.Identifier(SCHEMA)))
        if writes if writes is not None else role not in READING_ROLES:
            refuse_newer_ledger(conn)
        if role:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(ROLES[role])))
        if not autocommit:
            conn.commit()
    except BaseException as exc:
        conn.close()
        if not isinstance(exc, psycopg.Error):
            raise
        if isinstance(exc, pgerrors.InsufficientPrivilege | pgerrors.InvalidParameterValue):
            raise EvalledgerError(
                f"the database user cannot act as {ROLES[role]}: grant it that role "
                f"(GRANT {ROLES[role]} TO <user>), or run `evalledger db migrate` first"
            ) from None
        raise
    return conn


def set_local_role(conn: psycopg.Connection, role: str) -> None:
    """Act as the database role named role until the current transaction ends."""
    conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))


@contextlib.contextmanager
def transaction(role: str | None = None, url: str | None = None) -> Iterator[psycopg.Connection]:
    """A connection whose work commits on success and rolls back on any error."""
    conn = connect(url, role=role)
    try:
        with within(conn):
            yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def within(conn: psycopg.Connection, next_step: str | None = None) -> Iterator[psycopg.Connection]:
    """A transaction on an open connection: commits on success, rolls back on any error, and
    turns a database error into one a person reads (next_step: what a lost connection says to do)."""
    try:
        with conn.transaction():
            yield conn
    except psycopg.Error as exc:
        raise explain(exc, next_step) from None


@contextlib.contextmanager
def connected(url: str | None, role: str, conn: psycopg.Connection | None = None) -> Iterator[psycopg.Connection]:
    """conn, when the caller has one open (left open), else a new connection as role to url (closed after)."""
    if conn is not None:
        yield conn
        return
    with connect(url, role=role) as made:
        yield made


# The connection is gone: the server went away, was stopped, or the network dropped.
_LOST = ("57P01", "57P02", "57P03")
# A name the code asks for is missing: the database's schema is older than this evalledger.
_UNMIGRATED = ("42P01", "42703", "42883", "3F000")


def connection_lost(exc: psycopg.Error) -> bool:
    """True when exc says the connection itself is gone (not a statement the server refused)."""
    state = exc.diag.sqlstate
    if isinstance(exc, psycopg.OperationalError) and state is None:
        return True
    return state is not None and (state.startswith("08") or state in _LOST)


def explain(exc: psycopg.Error, next_step: str | None = None) -> DatabaseRefusal:
    """A database error as one line a person understands, with what to do next where there is
    something to do: a lost connection says how to carry on (next_step, when the command knows
    better), a schema older than the code says to migrate."""
    diag = exc.diag
    message = " ".join((diag.message_primary or str(exc)).split())
    if connection_lost(exc):
        return DatabaseRefusal(f"the database connection was lost ({message}): once it is back (`evalledger "
                               f"doctor` checks), {next_step or 'run the command again'}", diag.sqlstate)
    if diag.sqlstate in _UNMIGRATED and ("evalledger" in message or diag.schema_name == SCHEMA
                                         or diag.sqlstate != "42883"):
        return DatabaseRefusal(f"{message}: the database is not migrated, or its schema is older than this "
                               "evalledger: run `evalledger db migrate`", diag.sqlstate)
    where = []
    if diag.table_name:
        where.append(f"table {diag.table_name}")
    if diag.column_name:
        where.append(f"column {diag.column_name}")
    if diag.constraint_name:
        where.append(f"constraint {diag.constraint_name}")
    detail = f" ({', '.join(where)})" if where else ""
    hint = f"; {diag.message_hint}" if diag.message_hint else ""
    state = f" [SQLSTATE {diag.sqlstate}]" if diag.sqlstate else ""
    return DatabaseRefusal(f"{message}{detail}{hint}{state}", diag.sqlstate, diag.constraint_name)
