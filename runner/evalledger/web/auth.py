"""Signing in and out: a browser signs in as its own database login, proven by its password.

Refused, on any server: a login the server let in without asking for its password (trust or peer
authentication, as the embedded server's installer is), and a login that is or may become a
superuser, a role that bypasses row-level security or creates roles, or the ledger's code or owner
role. Failed sign-ins are logged (login and address, never a password) and throttled: past a few
failures for one login, one address, or the two together, each next attempt waits twice as long,
up to 15 minutes, and is refused unread until then.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from .sessions import COOKIE, CredentialsRefused, Session, Unavailable
from .site import QUERIES, SIGN_IN_COOKIE, Site, local_path, one, unavailable_message

log = logging.getLogger("evalledger.web")


class Throttle:
    """Failed sign-ins over the last window_seconds, counted per client address, per login and per
    login from one address. Once a count passes its free failures, the next attempt is admitted
    only 2^(excess - 1) seconds after the latest failure (at most max_wait)."""

    FREE = {"pair": 5, "address": 10, "login": 20}

    def __init__(self, window_seconds: float = 900, max_wait: float = 900, max_keys: int = 10000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window_seconds = window_seconds
        self.max_wait = max_wait
        self.max_keys = max_keys
        self.clock = clock
        self._failures: OrderedDict[tuple, deque] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _keys(login: str, address: str) -> dict[str, tuple]:
        return {"pair": ("pair", login, address), "address": ("address", address), "login": ("login", login)}

    def _recent(self, key: tuple, now: float) -> deque:
        found = self._failures.get(key)
        if found is None:
            return deque()
        while found and now - found[0] > self.window_seconds:
            found.popleft()
        return found

    def wait(self, login: str, address: str) -> float:
        """Seconds until an attempt for login from address is admitted (0: now)."""
        now = self.clock()
        longest = 0.0
        with self._lock:
            for kind, key in self._keys(login, address).items():
                recent = self._recent(key, now)
                excess = len(recent) - self.FREE[kind]
                if excess > 0:
                    longest = max(longest, recent[-1] + min(2.0 ** (excess - 1), self.max_wait) - now)
        return max(0.0, longest)

    def failed(self, login: str, address: str) -> int:
        """Record a failure; how many there were for login from address in the window."""
        now = self.clock()
        with self._lock:
            for key in self._keys(login, address).values():
                recent = self._recent(key, now)
                recent.append(now)
                self._failures[key] = recent
                self._failures.move_to_end(key)
            while len(self._failures) > self.max_keys:
                self._failures.popitem(last=False)
            return len(self._failures[("pair", login, address)])

    def succeeded(self, login: str, address: str) -> None:
        """A sign-in that worked clears its login's counts (the address's stay)."""
        with self._lock:
            for kind, key in self._keys(login, address).items():
                if kind != "address":
                    self._failures.pop(key, None)


def shown(login: str) -> str:
    """A typed login as a log line shows it: quoted, control characters escaped, at most 64 characters."""
    return repr(login[:64])


class _Refusal(Exception):
    """A sign-in refused: the status, what the person is told, what the log says, and whether it
    counts as a failed attempt (a wrong password does; a privileged login's right one does not)."""

    def __init__(self, status: int, message: str, reason: str, counts: bool) -> None:
        super().__init__(message)
        self.status, self.message, self.reason, self.counts = status, message, reason, counts


WRONG = "sign-in refused: wrong login or password"
READERS_ONLY = ("sign-in refused: this app serves auditors and RevOps from a copy of the ledger that takes no writes "
                "(a standby, or --read-url): reviewers sign in to the review app on the primary")


def routes(site: Site, throttle: Throttle | None = None) -> list[Route]:
    """The sign-in and sign-out routes."""
    throttle = throttle or Throttle()
    connections = site.sessions.connections

    def open_session(login: str, password: str) -> Session:
        try:
            conn = connections.check(login, password)
        except CredentialsRefused as exc:
            text = str(exc)
            trusted = any(s in text for s in ("did not ask", "authentication method requirement",
                                              "did not complete authentication"))
            raise _Refusal(401, WRONG, "the server did not ask for the password (trust or peer authentication)"
                           if trusted else "wrong password or no such login", counts=True) from None
        try:
            with conn.transaction():
                who = one(conn, QUERIES["whoami"])
        except psycopg.errors.UndefinedObject:
            connections.discard(login, conn)
            raise _Refusal(503, "sign-in not possible: the database has no evalledger roles (run `evalledger db "
                                "migrate`)", "the database is not migrated", counts=False) from None
        except BaseException:
            connections.discard(login, conn)
            raise
        if who["switched"] or who["privileged"]:
            connections.discard(login, conn)
            raise _Refusal(403, f"sign-in refused: {who['login']} is, or may act as, a superuser, a role that bypasses "
                                "row-level security or creates roles, or the ledger's code or owner role; the review "
                                "app signs in reviewers, auditors and RevOps with logins of their own",
                           "a privileged login", counts=False)
        kinds = frozenset(k for k in ("reviewer", "auditor", "revops") if who[k])
        if who["reviewer"] and (site.readers_only or who["standby"]):
            kinds -= {"reviewer"}
            if not kinds:
                connections.discard(login, conn)
                raise _Refusal(403, READERS_ONLY, "a reviewer on an app that serves readers only", counts=False)
        if not kinds:
            connections.discard(login, conn)
            raise _Refusal(403, f"{who['login']} is neither a reviewer, an auditor nor RevOps", "no ledger role",
                           counts=False)
        connections.keep(who["login"], password, conn)
        return Session(login=who["login"], kinds=kinds)

    async def sign_in(request: Request) -> Response:
        if request.method == "GET":
            next_path = local_path(request.query_params.get("next"))
            if site.current(request) is not None:
                return RedirectResponse(next_path or "/", status_code=303)
            return site.sign_in_page(request, next_path=next_path)
        form = await request.form()
        token, expected = form.get("csrf_token"), request.cookies.get(SIGN_IN_COOKIE)
        if not isinstance(token, str) or not expected or not secrets.compare_digest(token, expected):
            return site.page(request, "error.html", {"status": 403, "message": "the sign-in form's CSRF token is "
                                                     "missing or wrong: reload the page and try again"}, 403)
        login, password = str(form.get("login", "")).strip(), str(form.get("password", ""))
        next_path, kept = local_path(str(form.get("next", ""))), str(form.get("kept", "")) or None
        again = {"login": login, "next_path": next_path, "kept": kept}
        if not login or not password:
            return site.sign_in_page(request, "give your database login and password", 400, **again)
        address = request.client.host if request.client else "unknown"
        wait = throttle.wait(login, address)
        if wait > 0:
            seconds = int(wait) + 1
            log.warning("sign-in throttled: login %s from %s: retry in %d s", shown(login), address, seconds)
            return site.sign_in_page(request, f"too many failed sign-ins for this login: try again in {seconds} "
                                              f"second{'s' if seconds != 1 else ''}", 429,
                                     headers={"Retry-After": str(seconds)}, **again)
        try:
            session = await run_in_threadpool(open_session, login, password)
        except _Refusal as exc:
            if exc.counts:
                count = throttle.failed(login, address)
                log.warning("sign-in failed: login %s from %s: %s (%d failed from there in %d minutes)",
                            shown(login), address, exc.reason, count, int(throttle.window_seconds // 60))
            else:
                log.warning("sign-in refused: login %s from %s: %s", shown(login), address, exc.reason)
            return site.sign_in_page(request, exc.message, exc.status, **again)
        except Unavailable as exc:
            log.warning("sign-in not possible: login %s from %s: %s", shown(login), address, exc)
            return site.sign_in_page(request, unavailable_message(exc), 503, headers={"Retry-After": "5"}, **again)
        throttle.succeeded(login, address)
        log.info("signed in: login %s from %s", shown(session.login), address)
        site.sessions.forget(request.cookies.get(COOKIE))
        response = await site.resume(request, session, kept) or RedirectResponse(next_path or "/", status_code=303)
        site.set_cookie(request, response, COOKIE, site.sessions.add(session))
        response.delete_cookie(SIGN_IN_COOKIE, path="/sign-in")
        return response

    @site.signed_in()
    async def sign_out(request: Request, session: Session, form) -> Response:
        site.sessions.forget(request.cookies.get(COOKIE))
        response = RedirectResponse("/sign-in", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    return [
        Route("/sign-in", sign_in, methods=["GET", "POST"]),
        Route("/sign-out", sign_out, methods=["POST"]),
    ]
