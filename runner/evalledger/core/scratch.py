"""Throwaway servers and databases, for benchmarks and the schema snapshot."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from .migrate import migrate


@contextlib.contextmanager
def server() -> Iterator[str]:
    """DATABASE_URL's server, else an embedded one in a temporary EVALLEDGER_HOME, removed after."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    from .embedded import EmbeddedServer

    home = Path(tempfile.mkdtemp(prefix="evalledger-scratch-"))
    embedded = EmbeddedServer(home)
    try:
        yield embedded.start()
    finally:
        embedded.stop()
        shutil.rmtree(embedded.base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def migrated_database(server_url: str, prefix: str = "evalledger_scratch") -> Iterator[str]:
    """A new database on the server, migrated; dropped afterwards. Yields its DSN."""
    name = f"{prefix}_{os.getpid()}"
    admin_url = make_conninfo(server_url, dbname=conninfo_to_dict(server_url).get("dbname") or "postgres")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        dsn = make_conninfo(server_url, dbname=name)
        migrate(dsn)
        yield dsn
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
