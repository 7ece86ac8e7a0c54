"""Signed-in sessions of the review web app and the database connections they use, in this
process's memory only.

A session is an opaque random id (the only thing the browser's cookie holds) mapped to the login
it signed in as and a CSRF token. A session ends after `idle_seconds` without a request, after
`lifetime_seconds` whatever it does, or when it signs out. Every session of one login shares that
login's connections (its queries run as that login either way): at most `per_login` of them, and
at most `total` for the whole app, sign-in checks included, so no number of sign-ins exhausts the
server's connections. A connection left idle is closed to make room for another login's; a
session whose connection was closed or lost reconnects with the password it signed in with
(kept in memory, never written anywhere).

An ended session leaves a small record (its login and CSRF token, for `ended_seconds`) so that a
form it showed can still be proven genuine after the session is gone (site.py, review.py).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from evalledger.core.db import SCHEMA

COOKIE = "evalledger_session"
APPLICATION_NAME = "evalledger serve"  # how the app's connections read in pg_stat_activity
# Authentication methods that prove a password (libpq 16 and newer refuse any other before the
# connection is made; older ones are caught after it by used_password).
PASSWORD_METHODS = "scram-sha-256,md5,password"


class Unavailable(Exception):
    """The database cannot be reached just now, or the app holds all its connections: nothing was
    done, and the session stays signed in."""


class CredentialsRefused(Exception):
    """The server refused the login and password (or never asked for the password)."""


def connect_as(url: str, login: str, password: str) -> psycopg.Connection:
    """A connection to url's database as login, proven by password: CredentialsRefused when the
    server refuses them or authenticates without asking for the password (trust, peer), Unavailable
    when it cannot be reached. Never a password-less login, on any server."""
    options = f"{conninfo_to_dict(url).get('options') or ''} -c search_path={SCHEMA},public".strip()
    params = {"user": login, "password": password, "connect_timeout": 10, "options": options,
              "application_name": APPLICATION_NAME}
    if psycopg.pq.version() >= 160000:
        params["require_auth"] = PASSWORD_METHODS
    try:
        conn = psycopg.connect(make_conninfo(url, **params))
    except psycopg.OperationalError as exc:
        text = " ".join(str(exc).split())
        if any(sign in text for sign in _REFUSED) or _NO_ROLE.search(text):
            raise CredentialsRefused(text) from None
        raise Unavailable(text) from None
    if not conn.pgconn.used_password:
        conn.close()
        raise CredentialsRefused("the server did not ask for the password (trust or peer authentication)")
    return conn


# What libpq says when the server refused the credentials (rather than being out of reach).
_REFUSED = ("password authentication failed", "no pg_hba.conf entry", "is not permitted to log in",
            "authentication method requirement", "server did not complete authentication")
_NO_ROLE = re.compile(r'role "[^"]*" does not exist')


@dataclass(eq=False)
class _Login:
    """One login's shared connections: its idle ones (each with when it was last used), how many are
    lent out, and the password that reopens one."""

    password: str = field(repr=False)
    idle: list[tuple[psycopg.Connection, float]] = field(default_factory=list)
    lent: int = 0
    checking: int = 0
    signed: bool = False

    def held(self) -> int:
        return len(self.idle) + self.lent + self.checking


class Connections:
    """Every database connection the app holds: at most per_login for one login and total in all,
    sign-in checks included; a caller waits up to wait_seconds for one, then gets Unavailable."""

    def __init__(self, url: str, per_login: int = 2, total: int = 16, wait_seconds: float = 10) -> None:
        if per_login < 1 or total < 1:
            raise ValueError("per_login and total are at least 1")
        self.url = url
        self.per_login = per_login
        self.total = total
        self.wait_seconds = wait_seconds
        self._logins: dict[str, _Login] = {}
        self._open = 0
        self._cond = threading.Condition()

    def __len__(self) -> int:
        """How many connections are open (idle, lent out, or checking a sign-in)."""
        return self._open

    def held(self, login: str) -> int:
        """How many connections login holds (idle, lent out, or checking a sign-in)."""
        with self._cond:
            shared = self._logins.get(login)
            return shared.held() if shared else 0

    def _wait(self, deadline: float, full: str) -> None:
        """Wait (the lock held) for a connection to be given back; Unavailable saying `full` at deadline."""
        left = deadline - time.monotonic()
        if left <= 0 or not self._cond.wait(left):
            raise Unavailable(f"{full}: try again in a moment")

    def _reserve(self, deadline: float) -> None:
        """One more open connection counted (the lock held): an idle connection of any login is closed
        to make room, least recently used first; else wait until deadline, then Unavailable."""
        while self._open >= self.total:
            idle = [(used, name, conn) for name, login in self._logins.items() for conn, used in login.idle]
            if idle:
                _, name, conn = min(idle, key=lambda found: found[0])
                login = self._logins[name]
                login.idle = [(c, u) for c, u in login.idle if c is not conn]
                self._open -= 1
                _close(conn)
                continue
            self._wait(deadline, f"the app holds all {self.total} of its database connections")
        self._open += 1

    def _release(self, conn: psycopg.Connection | None = None) -> None:
        """A counted connection given up (the lock held), closed when given."""
        self._open -= 1
        if conn is not None:
            _close(conn)
        self._cond.notify_all()

    def check(self, login: str, password: str) -> psycopg.Connection:
        """A new connection as login with password (a sign-in), counted against login's share and
        the total: an idle connection of login's is closed to make room when it has its share. The
        caller hands it to keep() or gives it back with discard()."""
        deadline = time.monotonic() + self.wait_seconds
        with self._cond:
            shared = self._logins.setdefault(login, _Login(password))
            while shared.held() >= self.per_login:
                if shared.idle:
                    self._release(shared.idle.pop(0)[0])
                    continue
                try:
                    self._wait(deadline, f"{login} already uses its {self.per_login} database connections")
                except Unavailable:
                    self._forget_if_unused(login)
                    raise
            self._reserve(deadline)
            shared.checking += 1
        try:
            return connect_as(self.url, login, password)
        except BaseException:
            with self._cond:
                shared.checking -= 1
                self._release()
                self._forget_if_unused(login)
            raise

    def _forget_if_unused(self, login: str) -> None:
        """Forget a login that holds nothing and never signed in (the lock held)."""
        shared = self._logins.get(login)
        if shared is not None and not shared.held() and not shared.signed:
            del self._logins[login]

    def keep(self, login: str, password: str, conn: psycopg.Connection) -> None:
        """A checked connection joins login's shared ones; password is the one later connections of
        login use."""
        with self._cond:
            shared = self._logins.setdefault(login, _Login(password))
            shared.checking = max(0, shared.checking - 1)
            shared.password = password
            shared.signed = True
            shared.idle.append((conn, time.monotonic()))
            self._cond.notify_all()

    def discard(self, login: str, conn: psycopg.Connection) -> None:
        """A checked connection closed and no longer counted."""
        with self._cond:
            shared = self._logins.get(login)
            if shared is not None:
                shared.checking = max(0, shared.checking - 1)
            self._release(conn)
            self._forget_if_unused(login)

    @contextlib.contextmanager
    def borrow(self, login: str) -> Iterator[psycopg.Connection]:
        """One of login's connections for the duration of the block: an idle one, a new one while
        login has fewer than per_login, else the next one given back. A broken connection is
        closed on return; CredentialsRefused when login's password no longer opens one."""
        deadline = time.monotonic() + self.wait_seconds
        with self._cond:
            while True:
                shared = self._logins.get(login)
                if shared is None or not shared.signed:
                    raise CredentialsRefused(f"{login} is not signed in")
                if shared.idle:
                    conn = shared.idle.pop()[0]
                    break
                if shared.held() < self.per_login:
                    self._reserve(deadline)
                    conn = None
                    break
                self._wait(deadline, f"{login} already uses its {self.per_login} database connections")
            shared.lent += 1
            password = shared.password
        try:
            if conn is not None and (conn.closed or conn.broken):
                _close(conn)
                conn = None
            if conn is None:
                conn = connect_as(self.url, login, password)
        except BaseException:
            with self._cond:
                shared.lent -= 1
                self._release()
            raise
        try:
            yield conn
        finally:
            with self._cond:
                shared.lent -= 1
                if conn.closed or conn.broken or self._logins.get(login) is not shared:
                    self._release(conn)
                else:
                    shared.idle.append((conn, time.monotonic()))
                    self._cond.notify_all()

    def drop(self, login: str) -> None:
        """Forget login (its last session ended): its idle connections close now, lent ones on return."""
        with self._cond:
            shared = self._logins.pop(login, None)
            if shared is None:
                return
            shared.password = ""
            for conn, _ in shared.idle:
                self._release(conn)
            shared.idle = []

    def close_all(self) -> None:
        """Close every idle connection and forget every login (the server is stopping)."""
        for login in list(self._logins):
            self.drop(login)


def _close(conn: psycopg.Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        conn.close()


@dataclass(eq=False)
class Session:
    """One signed-in browser: its login, what kind of ledger user that is, its CSRF token, and forms
    it holds for the reviewer (typed before a sign-in, offered back on their question)."""

    login: str
    kinds: frozenset = frozenset()
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    started: float = field(default_factory=time.monotonic)
    last_seen: float = field(default_factory=time.monotonic)
    offered: dict = field(default_factory=dict, repr=False)
    # The last question page shown, to show it again with what was typed when the database is away.
    shown: dict = field(default_factory=dict, repr=False)
    busy: int = 0


@dataclass(frozen=True)
class Ended:
    """What is kept of a session that ended on its own (idle or too old): its login and CSRF token,
    so a form it showed can be told from a forged one."""

    login: str
    csrf: str = field(repr=False)
    at: float


class Sessions:
    """The live sessions, by id, and the connections they share. A session ends idle_seconds after
    its last request or lifetime_seconds after it signed in; at most per_login sessions per login
    (the least recently seen one ends first)."""

    def __init__(self, connections: Connections, idle_seconds: float, lifetime_seconds: float = 12 * 3600,
                 per_login: int = 100, ended_seconds: float = 12 * 3600, ended_max: int = 10000) -> None:
        self.connections = connections
        self.idle_seconds = idle_seconds
        self.lifetime_seconds = lifetime_seconds
        self.per_login = per_login
        self.ended_seconds = ended_seconds
        self.ended_max = ended_max
        self._by_id: dict[str, Session] = {}
        self._ended: OrderedDict[str, Ended] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session: Session) -> str:
        """Keep session under a new random id; return the id. The login's oldest session ends
        when it has per_login already."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            same = sorted((s.last_seen, key) for key, s in self._by_id.items() if s.login == session.login)
            for _, key in same[:max(0, len(same) - self.per_login + 1)]:
                self._by_id.pop(key)
            self._by_id[sid] = session
        return sid

    def _over(self, session: Session, now: float) -> bool:
        return now - session.last_seen > self.idle_seconds or now - session.started > self.lifetime_seconds

    def get(self, sid: str | None) -> Session | None:
        """The live session of sid (its idle clock restarted), or None; ended ones are forgotten,
        and a login none of whose sessions is left gives up its connections."""
        now = time.monotonic()
        gone = []
        with self._lock:
            for key, session in list(self._by_id.items()):
                if self._over(session, now) and not session.busy:
                    self._by_id.pop(key)
                    self._ended[key] = Ended(session.login, session.csrf, now)
                    gone.append(session.login)
            while self._ended and (len(self._ended) > self.ended_max
                                   or now - next(iter(self._ended.values())).at > self.ended_seconds):
                self._ended.popitem(last=False)
            found = self._by_id.get(sid) if sid else None
            if found is not None:
                found.last_seen = now
            left = {s.login for s in self._by_id.values()}
        for login in set(gone) - left:
            self.connections.drop(login)
        return found

    def ended(self, sid: str | None) -> Ended | None:
        """What is kept of sid's session when it ended on its own (not signed out), or None."""
        with self._lock:
            return self._ended.get(sid) if sid else None

    def forget(self, sid: str | None) -> None:
        """Sign a session out: forget it (no record kept); its login's connections close when it was
        that login's last session."""
        with self._lock:
            session = self._by_id.pop(sid, None) if sid else None
            self._ended.pop(sid, None) if sid else None
            left = session is not None and any(s.login == session.login for s in self._by_id.values())
        if session is not None and not left:
            self.connections.drop(session.login)

    def forget_login(self, login: str) -> None:
        """Sign every session of login out (its password no longer opens a connection)."""
        with self._lock:
            for key in [k for k, s in self._by_id.items() if s.login == login]:
                self._by_id.pop(key)
        self.connections.drop(login)

    def close_all(self) -> None:
        """Forget every session and close every connection (the server is stopping)."""
        with self._lock:
            self._by_id = {}
            self._ended.clear()
        self.connections.close_all()

    def __len__(self) -> int:
        return len(self._by_id)
