"""Signed-in sessions of the review web app, in this process's memory only.

A session is an opaque random id (the only thing the browser's cookie holds) mapped to the
login's own database connection, the password it signed in with (to reconnect a dropped
connection; never written anywhere), and a CSRF token. Sessions idle longer than the timeout are
forgotten, their connection closed; signing out forgets one at once.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import make_conninfo

from evalledger.core import db

COOKIE = "evalledger_session"


@dataclass(eq=False)
class Session:
    """One signed-in login: its connection (used by one request at a time) and CSRF token."""

    login: str
    password: str = field(repr=False)
    url: str = field(repr=False)
    conn: psycopg.Connection = field(repr=False)
    kinds: frozenset = frozenset()
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    last_seen: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def connection(self) -> psycopg.Connection:
        """The login's connection, reopened (with the same credentials) if it was lost."""
        if self.conn.closed or self.conn.broken:
            self.conn = connect_as(self.url, self.login, self.password)
        return self.conn

    def close(self) -> None:
        """Close the connection and drop the password."""
        self.password = ""
        try:
            self.conn.close()
        except psycopg.Error:
            pass


def connect_as(url: str, login: str, password: str) -> psycopg.Connection:
    """A connection to url's database as login with password: PostgreSQL checks the password."""
    return db.connect(make_conninfo(url, user=login, password=password))


class Sessions:
    """The live sessions, by id; each forgotten after idle_seconds without a request."""

    def __init__(self, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()

    def add(self, session: Session) -> str:
        """Keep session under a new random id; return the id."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._by_id[sid] = session
        return sid

    def get(self, sid: str | None) -> Session | None:
        """The live session of sid (its idle clock restarted), or None; expired ones are forgotten."""
        now = time.monotonic()
        expired = []
        with self._lock:
            for key, session in list(self._by_id.items()):
                if now - session.last_seen > self.idle_seconds and not session.lock.locked():
                    expired.append(self._by_id.pop(key))
            found = self._by_id.get(sid) if sid else None
            if found is not None:
                found.last_seen = now
        for session in expired:
            session.close()
        return found

    def forget(self, sid: str | None) -> None:
        """Sign a session out: forget it and close its connection."""
        with self._lock:
            session = self._by_id.pop(sid, None) if sid else None
        if session is not None:
            session.close()

    def close_all(self) -> None:
        """Forget every session (the server is stopping)."""
        with self._lock:
            sessions, self._by_id = list(self._by_id.values()), {}
        for session in sessions:
            session.close()

    def __len__(self) -> int:
        return len(self._by_id)
