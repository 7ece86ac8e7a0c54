"""Test fixtures: one real PostgreSQL, a template database built from the migrations, a fresh clone per test.

pytest-postgresql provisions the databases: `postgresql_noproc` stands for the session's server,
and its DatabaseJanitor builds the template (loaded by the migrations) and creates and drops every
clone. The server is $DATABASE_URL when set (any PostgreSQL 14+). Otherwise it is an embedded
server of this session's own, in a temporary EVALLEDGER_HOME (never the user's ~/.evalledger):
started only when the first database test asks for it, set for tests (tests/provisioning.py), and
stopped and deleted when the session ends. Tests marked `shared_db` (they only check refusals)
share one clone per module. Under pytest-xdist each worker is such a session, with a server and a
template of its own.
"""

from __future__ import annotations

pytest_plugins = ["tests.standin.fixtures", "tests.faults.seed"]

import os
import select
import shutil
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from pytest_postgresql import factories

from tests.provisioning import ClonePool, Server, embedded_test_server

if os.environ.get("FAKETIME") and os.environ.get("FAKETIME_DONT_FAKE_MONOTONIC") == "1":
    # Under `faketime --exclude-monotonic` (make test-dates), libfaketime 0.9.10 shifts the
    # CLOCK_MONOTONIC deadline of Python's time.sleep by the fake offset and the kernel refuses it
    # (EINVAL); select's relative timeout is left alone. (Faking the monotonic clock instead hangs
    # every timed lock wait: sem_clockwait is not intercepted.)
    def _sleep(seconds: float) -> None:
        select.select([], [], [], seconds)

    time.sleep = _sleep
    import pytest_postgresql.retry

    pytest_postgresql.retry.sleep = _sleep  # imported before this file, with the sleep it had
    # libfaketime reads the C environment on clock reads in every thread, and glibc's setenv may
    # free the array such a read walks: an in-process CLI run's env (click's runner sets it in
    # os.environ) crashed a session with a segfault. Under faketime, env changes stay in
    # os.environ, where evalledger reads them; the processes tests start get theirs explicitly.
    os.putenv = lambda key, value: None
    os.unsetenv = lambda key: None


@pytest.fixture(scope="session")
def test_server() -> Iterator[Server]:
    """The session's server: $DATABASE_URL, else an embedded one of this session's own."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield Server.at(url)
        return
    with embedded_test_server() as url:
        yield Server.at(url, maintenance_dbname="postgres")


def migrate_template(**where) -> None:
    """pytest-postgresql's loader for the template: the migrations, as `evalledger db migrate` runs
    them, on the connection the janitor names (with DATABASE_URL's other parameters)."""
    from evalledger.core.migrate import migrate

    given = {key: value for key, value in where.items() if key != "autocommit" and value is not None}
    migrate(make_conninfo(os.environ.get("DATABASE_URL") or "", **given))


# Per process, so that two test sessions on one server never share a template or a clone.
_PREFIX = f"evalledger_test_{os.getpid()}"

# The server as pytest-postgresql sees it (replacing its default postgresql_noproc): its janitor
# creates the template (from template1, marked IS_TEMPLATE), loads it and drops it at the end.
# Under pytest-xdist the name gets the worker's id.
postgresql_noproc = factories.postgresql_noproc(dbname=_PREFIX, load=[migrate_template], depends_on="test_server")


@pytest.fixture(scope="session")
def server_url(test_server) -> str:
    """The server every database test uses: $DATABASE_URL, else this session's embedded one."""
    return test_server.url


@pytest.fixture(scope="session")
def template_db(request) -> str:
    """The name of a database built by the migrations, exactly as `evalledger db migrate` does; with
    EVALLEDGER_TEST_TEMPLATE, that database of the server as it is (a loaded dump, say: the tests
    then check what `db load` made), used and never dropped."""
    given = os.environ.get("EVALLEDGER_TEST_TEMPLATE")
    if given:
        return given
    return request.getfixturevalue("postgresql_noproc").template_dbname


@pytest.fixture(scope="session")
def clone_pool(test_server, template_db) -> Iterator[ClonePool]:
    """Fresh clones of the template, one per test (or per module for shared_db tests)."""
    pool = ClonePool(test_server, template_db, _PREFIX)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def module_dsn(clone_pool) -> Iterator[str]:
    """One clone shared by the module's `shared_db` tests: tests that only check refusals."""
    with clone_pool.clone() as dsn:
        yield dsn


@pytest.fixture
def dsn(request, clone_pool) -> Iterator[str]:
    """The connection string of this test's fresh, migrated database (the module's, when shared_db)."""
    if request.node.get_closest_marker("shared_db"):
        yield request.getfixturevalue("module_dsn")
        return
    with clone_pool.clone() as fresh:
        yield fresh


@pytest.fixture(scope="module")
def _built_in_module() -> dict:
    return {}


@pytest.fixture
def shared_rows(dsn, _built_in_module):
    """shared_rows(name, build): what build() returned, built once per database: once for all the
    module's `shared_db` tests (which only read it; building a large ledger per test was most of
    their time), once per test for any other test, whose database is its own."""
    def once(name: str, build):
        key = (dsn, name)
        if key not in _built_in_module:
            _built_in_module[key] = build()
        return _built_in_module[key]

    return once


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
    capture_make_partition_v2 unless it exists (writers only make this month's and later ones)."""
    admin.execute("SELECT evalledger.capture_make_partition_v2(%s)", (month,))


def capture_partition_ago(admin, ago: str) -> date:
    """The first day of the month, in UTC as the database partitions captures, of the database's
    now() - ago (an interval), with its eval_candidates partition made if missing. Read in the
    session's zone, that month is another one near a month's edge, far from UTC."""
    month = admin.execute("SELECT date_trunc('month', (now() AT TIME ZONE 'UTC') - %s::interval)::date",
                          (ago,)).fetchone()[0]
    make_capture_partition(admin, month)
    return month


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


def pytest_configure(config):
    """Refuse workers on $DATABASE_URL's server: its roles are the cluster's, shared by every
    session on it, and the tests make and change login roles by name. And let pytest-xdist hand
    out the groups in the order the workers collected them (_longest_groups_first), not by size."""
    if getattr(config.option, "dist", None) == "loadgroup":
        config.option.loadscopereorder = False
    if os.environ.get("DATABASE_URL") and getattr(config.option, "numprocesses", None) \
            and not os.environ.get("PYTEST_XDIST_WORKER"):
        raise pytest.UsageError("DATABASE_URL is set: its tests run in one process, leave out -n (or give -n 0); "
                                "without DATABASE_URL every worker gets an embedded server of its own")


SERVER_FIXTURES = {"test_server", "server_url", "postgresql_noproc", "template_db", "clone_pool"}


# Module-scoped fixtures that cost nothing to build twice (shared_rows' dict; the database of
# shared_db tests is grouped by their mark).
CHEAP_MODULE_FIXTURES = {"_built_in_module"}


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Mark every test that uses the database `db`, so `-m "not db"` runs the rest without a server.

    And keep together what a module builds once for its tests: under `--dist loadgroup` each test
    not in a group goes to whichever worker is free, so a module's `shared_db` database and its
    shared_rows, or a module-scoped fixture (a released ledger upgraded, a cluster), were built on
    both workers, and again each time a worker came back to the module. Such tests get an
    xdist_group of their module (a test already in a group keeps it)."""
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.db)
        if item.get_closest_marker("xdist_group") is None and _shares_a_module_build(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    result = yield  # pytest-xdist's worker names each test's group here
    _groups_hold_under_pytest_9(config, items)
    _longest_groups_first(config, items)
    return result


def _longest_groups_first(config, items) -> None:
    """Under `--dist loadgroup`, the groups that start clusters of their own (marked slow: minutes
    each, mostly waiting on the servers and the test runs they start) go first, one to each worker
    while the other tests fill the gaps; then the other groups, the largest first (pytest-xdist's
    own order), then every other test as collected. pytest-xdist hands out groups in the order the
    workers collected them (pytest_configure turns its reordering by size off): ordered by size
    alone, the dump tests' group started a minute or two into the session and ended last, with the
    other worker idle."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and config.getoption("loadgroup", False)):
        return
    groups = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        if marker is not None:
            name = marker.args[0] if marker.args else marker.kwargs.get("name", "default")
            groups.setdefault(name, []).append(item)

    def rank(entry):
        name, members = entry
        return (not any(item.get_closest_marker("slow") for item in members), -len(members))

    first = [item for _, members in sorted(groups.items(), key=rank) for item in members]
    grouped = {id(item) for item in first}
    items[:] = first + [item for item in items if id(item) not in grouped]


def _groups_hold_under_pytest_9(config, items) -> None:
    """pytest-xdist's worker puts a test in its group by suffixing the test's id (`...::test@group`,
    which `--dist loadgroup` schedules by) in the attribute pytest 8 kept the id in; pytest 9 keeps
    it elsewhere, so no group held: each grouped test went to whichever worker was free. Here the
    suffixed id becomes the test's id again (under pytest 8 there is nothing to do)."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and config.getoption("loadgroup", False)):
        return
    for item in items:
        suffixed = getattr(item, "_nodeid", None)
        if isinstance(suffixed, str) and suffixed != item.nodeid and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(suffixed)


def _shares_a_module_build(item) -> bool:
    if item.get_closest_marker("shared_db"):
        return True
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        definition.scope in ("module", "package", "class") and name not in CHEAP_MODULE_FIXTURES
        for name, definitions in info.name2fixturedefs.items() for definition in definitions)


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
