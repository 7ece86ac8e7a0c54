"""Test fixtures: one real PostgreSQL, a template database built from the migrations, a fresh clone per test.

The server is $DATABASE_URL when set (any PostgreSQL 14+). Otherwise it is an embedded server of
this session's own, in a temporary EVALLEDGER_HOME (never the user's ~/.evalledger): started only
when the first database test asks for it, with durability off, and stopped and deleted when the
session ends. Tests marked `shared_db` (they only check refusals) share one clone per module.
"""

from __future__ import annotations

pytest_plugins = ["tests.standin.fixtures"]

import contextlib
import itertools
import os
import queue
import select
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

if os.environ.get("FAKETIME") and os.environ.get("FAKETIME_DONT_FAKE_MONOTONIC") == "1":
    # Under `faketime --exclude-monotonic` (make test-dates), libfaketime 0.9.10 shifts the
    # CLOCK_MONOTONIC deadline of Python's time.sleep by the fake offset and the kernel refuses it
    # (EINVAL); select's relative timeout is left alone. (Faking the monotonic clock instead hangs
    # every timed lock wait: sem_clockwait is not intercepted.)
    def _sleep(seconds: float) -> None:
        select.select([], [], [], seconds)

    time.sleep = _sleep
    # libfaketime reads the C environment on clock reads in every thread, and glibc's setenv may
    # free the array such a read walks: an in-process CLI run's env (click's runner sets it in
    # os.environ) crashed a session with a segfault. Under faketime, env changes stay in
    # os.environ, where evalledger reads them; the processes tests start get theirs explicitly.
    os.putenv = lambda key, value: None
    os.unsetenv = lambda key: None


# A test cluster holds nothing worth keeping through a crash: skip the flushes that make a
# CREATE DATABASE per test slow on a disk that syncs.
DURABILITY_OFF = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
SERVER_HOME_PREFIX = "evalledger-test-server-"


def _reap_servers_of_dead_sessions() -> None:
    """Stop and delete the servers of test sessions that died before their teardown (killed, or
    crashed): their home is named after the session's process, and that process is gone."""
    from evalledger.core.embedded import EmbeddedServer

    for home in Path(tempfile.gettempdir()).glob(f"{SERVER_HOME_PREFIX}*-*"):
        pid = home.name[len(SERVER_HOME_PREFIX):].split("-")[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        server = EmbeddedServer(home)
        with contextlib.suppress(Exception):
            server.stop()
        if server.as_root:
            shutil.rmtree(server.base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        pass
    return True


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """The server every database test uses: $DATABASE_URL, else this session's embedded one."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    from evalledger.core.embedded import EmbeddedServer

    _reap_servers_of_dead_sessions()
    home = Path(tempfile.mkdtemp(prefix=f"{SERVER_HOME_PREFIX}{os.getpid()}-"))
    server = EmbeddedServer(home)
    try:
        url = server.start()
        with psycopg.connect(url, autocommit=True) as conn:
            for name, value in DURABILITY_OFF.items():
                conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
            conn.execute("SELECT pg_reload_conf()")
        yield url
    finally:
        try:
            server.stop()
        finally:  # a postmaster whose data folder is gone shuts itself down within a minute
            if server.as_root:
                shutil.rmtree(server.base, ignore_errors=True)
            shutil.rmtree(home, ignore_errors=True)


# Per process, so that two test sessions on one server never share a template or a clone.
_PREFIX = f"evalledger_test_{os.getpid()}"
_clone_numbers = itertools.count(1)


def _dsn_of(server_url: str, dbname: str) -> str:
    return make_conninfo(server_url, dbname=dbname)


def _drop(admin: psycopg.Connection, name: str) -> None:
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def template_db(server_url) -> Iterator[str]:
    """The name of a database built by the migrations, exactly as `evalledger db migrate` does; with
    EVALLEDGER_TEST_TEMPLATE, that database of the server as it is (a loaded dump, say: the tests
    then check what `db load` made), used and never dropped."""
    from evalledger.core.migrate import migrate

    given = os.environ.get("EVALLEDGER_TEST_TEMPLATE")
    if given:
        yield given
        return

    name = f"{_PREFIX}_template"
    with psycopg.connect(server_url, autocommit=True) as admin:
        _drop(admin, name)
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            migrate(_dsn_of(server_url, name))
            yield name
        finally:
            _drop(admin, name)


class ClonePool:
    """Clones of the template made ahead, and used ones dropped, by background threads.

    CREATE DATABASE and DROP DATABASE cost a tenth of a second or more each, mostly waiting on
    the server; done while earlier tests run, two makers at a time, they cost a test almost
    nothing.
    """

    def __init__(self, server_url: str, template: str, ahead: int = 4, makers: int = 2) -> None:
        self.server_url = server_url
        self.template = template
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
            with psycopg.connect(self.server_url, autocommit=True) as conn:
                while not self.stopping.is_set():
                    name = f"{_PREFIX}_{next(_clone_numbers)}"
                    conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                        sql.Identifier(name), sql.Identifier(self.template)))
                    self.ready.put(name)
        except BaseException as exc:  # every later take() raises it, in the tests that wait
            self.failure = exc
            self.ready.put(exc)

    def _drop_used(self) -> None:
        try:
            with psycopg.connect(self.server_url, autocommit=True) as conn:
                while (name := self.used.get()) is not None:
                    _drop(conn, name)
        except BaseException as exc:  # close() raises it at the end of the session
            self.failure = self.failure or exc

    def take(self) -> str:
        """The connection string of a fresh clone, all the test's own."""
        if self.failure is not None:
            raise self.failure
        name = self.ready.get(timeout=120)
        if isinstance(name, BaseException):
            raise name
        return _dsn_of(self.server_url, name)

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


@pytest.fixture(scope="session")
def clone_pool(server_url, template_db) -> Iterator[ClonePool]:
    """Fresh clones of the template, one per test (or per module for shared_db tests)."""
    pool = ClonePool(server_url, template_db)
    try:
        yield pool
    finally:
        pool.close()


@contextlib.contextmanager
def _clone(pool: ClonePool) -> Iterator[str]:
    dsn = pool.take()
    try:
        yield dsn
    finally:
        pool.give_back(dsn)


@pytest.fixture(scope="module")
def module_dsn(clone_pool) -> Iterator[str]:
    """One clone shared by the module's `shared_db` tests: tests that only check refusals."""
    with _clone(clone_pool) as dsn:
        yield dsn


@pytest.fixture
def dsn(request, clone_pool) -> Iterator[str]:
    """The connection string of this test's fresh, migrated database (the module's, when shared_db)."""
    if request.node.get_closest_marker("shared_db"):
        yield request.getfixturevalue("module_dsn")
        return
    with _clone(clone_pool) as fresh:
        yield fresh


@pytest.fixture
def admin(dsn):
    """An autocommit superuser (or migrating user) connection on the test database."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path = evalledger, public")
        yield conn


@pytest.fixture
def connect_as(dsn):
    """Open autocommit connections acting as a role (SET ROLE), closed after the test."""
    opened = []

    def connect(role: str) -> psycopg.Connection:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute("SET search_path = evalledger, public")
        conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(role)))
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


# Every login role a test makes signs in with this password: the embedded server checks passwords
# (scram-sha-256) for every login but the installer's.
TEST_PASSWORD = "evalledger-test-password"


def ensure_login_role(admin, name: str, member_of: str) -> None:
    """Create a cluster-wide login role once (roles outlive the per-test databases), with TEST_PASSWORD."""
    admin.execute(
        psycopg.sql.SQL(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {name}) THEN "
            "CREATE ROLE {ident} LOGIN; END IF; END $$"
        ).format(name=psycopg.sql.Literal(name), ident=psycopg.sql.Identifier(name))
    )
    admin.execute(psycopg.sql.SQL("ALTER ROLE {} PASSWORD {}").format(
        psycopg.sql.Identifier(name), psycopg.sql.Literal(TEST_PASSWORD)))
    admin.execute(psycopg.sql.SQL("GRANT {} TO {}").format(
        psycopg.sql.Identifier(member_of), psycopg.sql.Identifier(name)))


def make_capture_partition(admin, month: date) -> None:
    """The eval_candidates partition of month (its first day), made by the database's own
    capture_make_partition_v1 unless it exists (writers only make this month's and later ones)."""
    admin.execute("SELECT evalledger.capture_make_partition_v1(%s)", (month,))


def capture_times_since(admin, hours: int) -> datetime:
    """The start of the hour `hours` hours ago (UTC), with a capture partition for every month
    from then to now: tests write rows at times relative to now, never at a date that must fall
    into this month, and still pass in the first hour of a month."""
    since = (datetime.now(timezone.utc) - timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0)
    month = since.date().replace(day=1)
    while month <= datetime.now(timezone.utc).date():
        make_capture_partition(admin, month)
        month = (month + timedelta(days=32)).replace(day=1)
    return since


REVIEWER_ROLE = "evalledger_test_reviewer_a"
OTHER_REVIEWER_ROLE = "evalledger_test_reviewer_b"


@pytest.fixture
def reviewers(admin):
    """Two reviewers, each a login role in evalledger_reviewer: {role_name: reviewer_user_id}."""
    from evalledger.suites.brain_eval.store import add_reviewer

    found = {}
    for role in (REVIEWER_ROLE, OTHER_REVIEWER_ROLE):
        ensure_login_role(admin, role, "evalledger_reviewer")
        found[role] = add_reviewer(admin, role, role.rsplit("_", 1)[-1].upper())
    return found


@pytest.fixture
def reviewer_id(reviewers):
    """The first reviewer's reviewer_user_id."""
    return reviewers[REVIEWER_ROLE]


def pytest_collection_modifyitems(items):
    """Mark every test that uses the database `db`, so `-m "not db"` runs the rest without a server."""
    for item in items:
        if "server_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.db)


def pytest_sessionfinish(session):
    """Remove the CLI's default EVALLEDGER_HOME, and any server a command started in it."""
    from tests.cli import DEFAULT_HOME

    if (DEFAULT_HOME / "pg").exists() or os.geteuid() == 0:
        from evalledger.core.embedded import EmbeddedServer

        server = EmbeddedServer(DEFAULT_HOME)
        if (server.pgdata / "PG_VERSION").exists():
            server.stop()
            shutil.rmtree(server.base, ignore_errors=True)
    shutil.rmtree(DEFAULT_HOME, ignore_errors=True)
