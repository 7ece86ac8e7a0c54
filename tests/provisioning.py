"""What pytest-postgresql lacks, kept thin: the embedded server a session starts (and the reaping of
those whose session died), and clones of the template made ahead in the background.

pytest-postgresql does the rest (tests/conftest.py): `postgresql_noproc` stands for the server and
its DatabaseJanitor builds the template and creates and drops every clone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import queue
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from pytest_postgresql.janitor import DatabaseJanitor

# Named after the session's process, so a later session can tell a dead session's leftovers.
SERVER_HOME_PREFIX = "evalledger-test-server-"
# Databases and the files they are made of, on a tmpfs when the machine has one.
MEMORY = Path("/dev/shm")
TABLESPACE = "evalledger_test_memory"
# A clone is about 10 MB and a session holds a dozen at a time; tests make some of their own.
MEMORY_NEEDED = 1 << 30

TEST_SERVER_SETTINGS = {
    # A test cluster holds nothing worth keeping through a crash: skip the flushes.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    # Every test login signs in with its password (scram-sha-256, as on any embedded server); the
    # 4096 rounds that make a stolen verifier slow to attack only make ALTER ROLE ... PASSWORD and
    # each sign-in cost a test tens of milliseconds here.
    "scram_iterations": "1",
}


@dataclass(frozen=True)
class Server:
    """Where the session's server listens, in the fields postgresql_noproc reads from the fixture
    it depends on (template_dbname None: the template is built from the server's template1)."""

    url: str
    host: str | None
    port: int
    user: str | None
    password: str | None
    maintenance_dbname: str
    options: str = ""
    template_dbname: None = None

    @classmethod
    def at(cls, url: str, maintenance_dbname: str | None = None) -> Server:
        info = conninfo_to_dict(url)
        return cls(url=url, host=info.get("host"), port=int(info.get("port") or os.environ.get("PGPORT") or 5432),
                   user=info.get("user"), password=info.get("password"),
                   maintenance_dbname=maintenance_dbname or info.get("dbname") or "postgres")

    def dsn(self, dbname: str) -> str:
        """The server's URL with dbname in place of its own (every other parameter kept)."""
        return make_conninfo(self.url, dbname=dbname)

    def janitor(self, dbname: str, template: str, file_copy: bool = False) -> DatabaseJanitor:
        """pytest-postgresql's janitor for a clone of template named dbname (copied file by file with
        file_copy, which needs PostgreSQL 15 or newer)."""
        janitor = CloneJanitor if file_copy else DatabaseJanitor
        return janitor(user=self.user, host=self.host, port=self.port, password=self.password,
                       dbname=dbname, template_dbname=template, maintenance_dbname=self.maintenance_dbname)

    def copies_files(self) -> bool:
        """Whether CREATE DATABASE takes STRATEGY FILE_COPY here (PostgreSQL 15 and newer)."""
        with psycopg.connect(self.dsn(self.maintenance_dbname), autocommit=True) as conn:
            return conn.info.server_version >= 150000


class CloneJanitor(DatabaseJanitor):
    """The janitor, cloning by copying the template's files. The default strategy since PostgreSQL 15
    (WAL_LOG) writes every block of a clone through the WAL and shared buffers, from which dropping
    the clone must then evict them; a test clone needs neither. Measured on this template (about 700
    relations, 12 MB) on a busy 2-core machine: a clone made, connected to and dropped in 0.21 s
    against 0.35 s (the medians of 60 each, the two strategies taking turns)."""

    def _build_create_database_sql(self) -> sql.Composed:
        return super()._build_create_database_sql() + sql.SQL(" STRATEGY FILE_COPY")


# -- the embedded server a session starts ------------------------------------------------------


@contextlib.contextmanager
def embedded_test_server() -> Iterator[str]:
    """An embedded server of this session's own in a temporary EVALLEDGER_HOME (never the user's
    ~/.evalledger), set for tests, stopped and deleted afterwards. Yields its URL."""
    from evalledger.core.embedded import EmbeddedServer

    reap_servers_of_dead_sessions()
    home = Path(tempfile.mkdtemp(prefix=f"{SERVER_HOME_PREFIX}{os.getpid()}-"))
    server = EmbeddedServer(home)
    memory = None
    try:
        url = server.start()
        with psycopg.connect(url, autocommit=True) as conn:
            for name, value in TEST_SERVER_SETTINGS.items():
                conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
            conn.execute("SELECT pg_reload_conf()")
            memory = _databases_in_memory(conn, server)
        yield url
    finally:
        try:
            server.stop()
        finally:  # a postmaster whose data folder is gone shuts itself down within a minute
            if server.as_root:
                shutil.rmtree(server.base, ignore_errors=True)
            shutil.rmtree(home, ignore_errors=True)
            if memory is not None:
                shutil.rmtree(memory, ignore_errors=True)


def _databases_in_memory(conn: psycopg.Connection, server) -> Path | None:
    """Put template1, and so every database made from it later, in a tablespace on tmpfs.

    Creating a database creates a file for each of its relations (about a thousand), and on a
    file system without a journal ext4 looks through every recently deleted inode before it
    hands out a new one: after a few hundred clones were dropped, a CREATE DATABASE took 0.4 s of
    kernel time there, against 0.04 s on tmpfs.
    """
    if not (MEMORY.is_dir() and os.access(MEMORY, os.W_OK)):
        return None
    free = os.statvfs(MEMORY)
    if free.f_bavail * free.f_frsize < MEMORY_NEEDED:  # a container's 64 MB /dev/shm, say
        return None
    folder = Path(tempfile.mkdtemp(prefix=f"{SERVER_HOME_PREFIX}{os.getpid()}-", dir=MEMORY))
    if server.as_root:  # the server runs as its own system user, which must own the folder
        from evalledger.core.embedded import SERVICE_USER

        entry = pwd.getpwnam(SERVICE_USER)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    conn.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(sql.Identifier(TABLESPACE),
                                                                    sql.Literal(str(folder))))
    conn.execute(sql.SQL("ALTER DATABASE template1 SET TABLESPACE {}").format(sql.Identifier(TABLESPACE)))
    return folder


def reap_servers_of_dead_sessions() -> None:
    """Stop and delete the servers of test sessions that died before their teardown (killed, or
    crashed): their home is named after the session's process, and that process is gone."""
    from evalledger.core.embedded import EmbeddedServer

    for home in Path(tempfile.gettempdir()).glob(f"{SERVER_HOME_PREFIX}*-*"):
        if not _of_dead_session(home):
            continue
        server = EmbeddedServer(home)
        with contextlib.suppress(Exception):
            server.stop()
        if server.as_root:
            shutil.rmtree(server.base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    for folder in MEMORY.glob(f"{SERVER_HOME_PREFIX}*-*") if MEMORY.is_dir() else ():
        if _of_dead_session(folder):
            shutil.rmtree(folder, ignore_errors=True)


def _of_dead_session(path: Path) -> bool:
    pid = path.name[len(SERVER_HOME_PREFIX):].split("-")[0]
    return pid.isdigit() and not _alive(int(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        pass
    return True


# -- clones made ahead --------------------------------------------------------------------------


class ClonePool:
    """Clones of the template made ahead, and used ones dropped, by background threads, each
    through pytest-postgresql's DatabaseJanitor.

    A clone costs tens of milliseconds to create and to drop, mostly waiting on the server; done
    while earlier tests run, two makers at a time, it costs a test almost nothing.
    """

    def __init__(self, server: Server, template: str, prefix: str, ahead: int = 4, makers: int = 2) -> None:
        self.server = server
        self.template = template
        self.file_copy = server.copies_files()
        self.names = (f"{prefix}_{n}" for n in itertools.count(1))
        self.naming = threading.Lock()
        self.ready: queue.Queue = queue.Queue(maxsize=ahead)
        self.used: queue.Queue = queue.Queue()
        self.stopping = threading.Event()
        self.failure: BaseException | None = None
        self.makers = [threading.Thread(target=self._make, daemon=True, name=f"clone-maker-{n}")
                       for n in range(makers)]
        self.dropper = threading.Thread(target=self._drop_used, daemon=True, name="clone-dropper")
        for thread in [*self.makers, self.dropper]:
            thread.start()

    def _make(self) -> None:
        try:
            while not self.stopping.is_set():
                with self.naming:
                    name = next(self.names)
                self.server.janitor(name, self.template, self.file_copy).init()
                self.ready.put(name)
        except BaseException as exc:  # every later take() raises it, in the tests that wait
            self.failure = exc
            self.ready.put(exc)

    def _drop_used(self) -> None:
        try:
            while (name := self.used.get()) is not None:
                self.server.janitor(name, self.template, self.file_copy).drop()
        except BaseException as exc:  # close() raises it at the end of the session
            self.failure = self.failure or exc

    def take(self) -> str:
        """The connection string of a fresh clone, all the test's own."""
        if self.failure is not None:
            raise self.failure
        name = self.ready.get(timeout=120)
        if isinstance(name, BaseException):
            raise name
        return self.server.dsn(name)

    def give_back(self, dsn: str) -> None:
        """Drop the clone behind dsn, in the background."""
        self.used.put(conninfo_to_dict(dsn)["dbname"])

    def close(self) -> None:
        """Stop making clones; drop every clone left; wait until all are gone."""
        self.stopping.set()
        while any(maker.is_alive() for maker in self.makers):  # each may hand over one more clone
            with contextlib.suppress(queue.Empty):
                self._discard(self.ready.get(timeout=0.1))
        while not self.ready.empty():
            self._discard(self.ready.get_nowait())
        self.used.put(None)
        self.dropper.join(timeout=120)
        if self.failure is not None:
            raise self.failure

    def _discard(self, item) -> None:
        if isinstance(item, str):
            self.used.put(item)

    @contextlib.contextmanager
    def clone(self) -> Iterator[str]:
        """A fresh clone's connection string for the block, dropped after it."""
        dsn = self.take()
        try:
            yield dsn
        finally:
            self.give_back(dsn)
