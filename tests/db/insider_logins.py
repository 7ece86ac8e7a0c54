"""What the guard tests that sign in as each role share: a real login in every role, crafted time
zones, refusals checked whole (SQLSTATE, constraint, message) with every ledger row counted before
and after.

Import the fixtures into a test module (`from tests.db.insider_logins import logins`); pytest then
offers them there.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from datetime import datetime, timezone

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from tests.builders import load_catalog
from tests.conftest import REVIEWER_ROLE, TEST_PASSWORD, ensure_login_role

# One login per application role (the reviewer's is the reviewers fixture's own login role).
LOGINS = {
    "runner": ("evalledger_test17_runner", "evalledger_runner"),
    "revops": ("evalledger_test17_revops", "evalledger_revops"),
    "auditor": ("evalledger_test17_auditor", "evalledger_auditor"),
    "owner": ("evalledger_test17_owner", "evalledger_owner"),
    "agent": ("evalledger_test17_agent", "evalledger_agent"),
    "retention": ("evalledger_test17_retention", "evalledger_retention"),
}


class Logins:
    """Connections that log in as each role's own login, with its password (never a SET ROLE)."""

    def __init__(self, dsn: str):
        self.dsn = dsn
        self.opened: list[psycopg.Connection] = []

    def __call__(self, role: str, *, autocommit: bool = True, options: str | None = None) -> psycopg.Connection:
        user = REVIEWER_ROLE if role == "reviewer" else LOGINS[role][0]
        extra = {"options": options} if options else {}
        conn = psycopg.connect(make_conninfo(self.dsn, user=user, password=TEST_PASSWORD, **extra),
                               autocommit=autocommit)
        conn.execute("SET search_path = evalledger, public")
        self.opened.append(conn)
        return conn

    def close(self) -> None:
        for conn in self.opened:
            with contextlib.suppress(Exception):
                conn.close()


@pytest.fixture
def logins(admin, dsn, reviewers):
    """login(role) -> a new connection of that role's own login; every login exists and has its password."""
    for name, group in LOGINS.values():
        ensure_login_role(admin, name, group)
    load_catalog(admin)
    made = Logins(dsn)
    yield made
    made.close()


# -- refusals checked whole ---------------------------------------------------------------------------

LEDGER_TABLES_SQL = ("SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace "
                     "AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1")


def row_counts(admin) -> dict[str, int]:
    """How many rows every ledger table holds, as the superuser sees them (past every policy)."""
    tables = [r[0] for r in admin.execute(LEDGER_TABLES_SQL)]
    return {t: admin.execute(sql.SQL("SELECT count(*) FROM evalledger.{}").format(sql.Identifier(t))).fetchone()[0]
            for t in tables}


@contextlib.contextmanager
def refused(admin, error, message: str, constraint: str | None = None):
    """The block is refused with error (its SQLSTATE class), a primary message matching `message`
    whole (a regex), diag.constraint_name `constraint`, and no ledger table's row count changes."""
    before = row_counts(admin)
    with pytest.raises(error) as caught:
        yield caught
    diag = caught.value.diag
    assert re.fullmatch(message, diag.message_primary or ""), diag.message_primary
    assert diag.constraint_name == constraint, diag.constraint_name
    assert row_counts(admin) == before, "a refused statement changed rows"


def refusal_of(conn, statement, params=None) -> tuple[str, str]:
    """(SQLSTATE, primary message) of a statement that must fail, its transaction rolled back."""
    try:
        conn.execute(statement, params)
    except psycopg.Error as exc:
        if not conn.autocommit:
            conn.rollback()
        return exc.sqlstate, exc.diag.message_primary
    raise AssertionError(f"not refused: {statement}")


# -- time zones any login may set -----------------------------------------------------------------------

_STD_DST = [("AAA-100", "BBB+20"), ("AAA+20", "BBB-100"), ("AAA+144", "BBB-23"), ("AAA-23", "BBB+144"),
            ("AAA0", "BBB-144"), ("AAA-144", "BBB0")]


def crafted_zones(conn) -> list[str]:
    """POSIX zones (std and DST offsets of days, a transition on every day of the year) and real
    ones: what a session's TimeZone may be set to by any login."""
    zones = [f"{std}{dst},{day}/0,{(day + 150) % 365}/0" for std, dst in _STD_DST for day in range(365)]
    return zones + ["XXX-100", "XXX+100", "Pacific/Kiritimati", "Pacific/Niue", "America/St_Johns", "Asia/Kathmandu"]


_MOVES: dict[tuple[str, str], dict[bool, tuple[str, float]]] = {}


def zone_that_moves(conn, span: str, *, earlier: bool | None = None) -> tuple[str, float]:
    """The time zone in which `now() - interval span` lands furthest from the same step counted in
    UTC, and by how many hours (positive: earlier, a window stretched back; negative: later). With
    `earlier` given, the furthest in that direction only (0 hours where none moves it so today).
    Searched on today's date, so a test built on it tries the worst a login could do today."""
    key = (span, str(conn.execute("SELECT current_date").fetchone()[0]))
    if key not in _MOVES:
        best = {True: ("UTC", 0.0), False: ("UTC", 0.0)}
        for zone in crafted_zones(conn):
            conn.execute("SELECT set_config('TimeZone', %s, false)", (zone,))
            moved = float(conn.execute(
                "SELECT extract(epoch FROM timezone('UTC', timezone('UTC', now()) - %s::interval) - (now() - %s::interval))",
                (span, span)).fetchone()[0]) / 3600
            if abs(moved) > abs(best[moved > 0][1]):
                best[moved > 0] = (zone, moved)
        conn.execute("RESET TimeZone")
        _MOVES[key] = best
    best = _MOVES[key]
    if earlier is not None:
        return best[earlier]
    return max(best.values(), key=lambda found: abs(found[1]))


def set_zone(conn, zone: str) -> None:
    conn.execute("SELECT set_config('TimeZone', %s, false)", (zone,))


# -- two sessions ---------------------------------------------------------------------------------------

def in_thread(work) -> tuple[threading.Thread, dict]:
    """Run work() in a thread; its result or error lands in the returned dict."""
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = work()
        except Exception as exc:  # reported by the test that waits for it
            outcome["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def wait_until_waiting(admin, user: str, timeout: float = 20.0) -> None:
    """Until a backend of `user` waits on a lock (pg_stat_activity), or fail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if admin.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND wait_event_type = 'Lock'",
                         (user,)).fetchone()[0]:
            return
        time.sleep(0.05)
    raise AssertionError(f"{user} never waited on a lock")


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
