"""What every page of the web app shares: rendering, refusals, sessions, the signed-in login's
own database connections, and the guards every request passes (the Host it names, the headers
every response carries).

Every query of a session runs on a connection opened as the signed-in login with its own
password, so PostgreSQL checks the password and row-level security decides what the login sees
and may change: the app holds no privileged connection and never sets a role. Values go to the
database as parameters only. Pages are rendered by jinja2 (autoescaped); static assets ship in
the package (no network needed).

A form posted after its session ended is not lost: it is kept across the sign-in that follows
(`signed_in(keeps=...)`), then either handled as if it had just been posted (its CSRF token was the
ended session's, and the same login signed in again) or offered back, unsaved, on its page.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any
from urllib.parse import quote, urlsplit
from uuid import UUID

import jinja2
import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from evalledger.core.errors import EvalledgerError
from evalledger.core.paths import package_path
from evalledger.core.queries import Queries
from evalledger.core.reading import dicts
from evalledger.suites.brain_eval import reviewing

from .sessions import COOKIE, CredentialsRefused, Ended, Session, Sessions, Unavailable

QUERIES = Queries(__package__)

LABELS = {
    "hallucinations_detected": "Hallucinations", "total_claims": "Claims",
    "staleness_correctly_recognized": "Staleness recognised", "diagnosis_accuracy_score": "Diagnosis accuracy",
    "narrative_coherence_rating": "Coherence (1-5)", "reviewer_comments": "Comment",
    "lever_mapping_violations": "Lever violations",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
# Headers every response carries, static files and refusals included (pages add SECURITY_HEADERS).
EVERY_RESPONSE = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}
# What a redirect's ?m= may say (any other value says nothing: no text is reflected from a URL).
FLASH = {"saved": "Saved. Here is the next question needing your numbers; the one you saved is summed up "
                  "beside the form, with its reference answer and the judges' drafts.",
         "all-scored": "Saved: every question of this run has your numbers. Sign off when you are done.",
         "signed-off": "Signed off: the run can be completed.",
         "kept": "Your session had ended: what you typed is filled in below, not saved yet. Check it, then save.",
         "resumed": "Signed in again: the form you sent before is saved."}
# A form field's largest size: far past any field's limit (a comment's is 4000 characters), so an
# over-long one comes back with its text and a message rather than a bare refusal.
FORM_PART_LIMIT = 4 * 1024 * 1024
SIGN_IN_COOKIE = "evalledger_sign_in"  # the sign-in form's CSRF token (double submit), before any session


class Refused(Exception):
    """A page that cannot be shown or an action that is refused: status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _number(value) -> str:
    return "—" if value is None else reviewing.as_text(value)


def environment() -> jinja2.Environment:
    """The templates' jinja2 environment: autoescaped, with the filters the pages use."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(package_path("templates", package=__package__))),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _number
    env.filters["criteria"] = reviewing.criteria_text
    env.filters["pretty"] = lambda value: json.dumps(value, indent=1, ensure_ascii=False, default=str)
    env.filters["when"] = lambda value: "—" if value is None else value.strftime("%Y-%m-%d %H:%M")
    env.globals["LABELS"] = LABELS
    return env


def one(conn: psycopg.Connection, query: str, params: dict | None = None) -> dict | None:
    """The first row of a query as a dict, or None."""
    found = dicts(conn, query, params)
    return found[0] if found else None


def run_id_of(text: str) -> UUID:
    """A run id from a URL or a form, or a 404 that says a run id is a UUID."""
    try:
        return UUID(text)
    except ValueError:
        raise Refused(404, f"no run {text!r}: a run id is a UUID") from None


def run_header(conn: psycopg.Connection, run_id: UUID) -> dict:
    """The run's header as the login may see it, or a 404 that reads the same whether it exists or not."""
    header = one(conn, QUERIES["run_header"], {"eval_run_id": run_id})
    if header is None:
        raise Refused(404, f"no run {run_id} that you may see")
    return header


def local_path(text: str | None) -> str | None:
    """text when it is a path on this site (where a sign-in may return to), else None."""
    if not text or not text.startswith("/") or text.startswith("//") or "\\" in text:
        return None
    parts = urlsplit(text)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in text):
        return None
    return text


def same_origin(request: Request) -> bool:
    """Whether a POST came from this site's own pages, as far as the browser says (Origin,
    Sec-Fetch-Site): a client that sends neither is no browser a forged page could drive."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


@dataclass(eq=False)
class Kept:
    """A form posted without a live session, kept across the sign-in that follows: which handler it
    was for, the page it came from, and the login whose ended session proves it genuine (None when
    nothing does: then it is only offered back)."""

    handler: Callable[..., Awaitable[Response]] = field(repr=False)
    form: dict = field(repr=False)
    back: str
    login: str | None
    what: str
    at: float = field(default_factory=time.monotonic)


class KeptForms:
    """Forms kept across a sign-in, by a random id the sign-in page carries: at most max_forms, for
    keep_seconds each."""

    def __init__(self, keep_seconds: float = 12 * 3600, max_forms: int = 1000) -> None:
        self.keep_seconds = keep_seconds
        self.max_forms = max_forms
        self._by_id: OrderedDict[str, Kept] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, kept: Kept) -> str:
        """Keep a form; its id."""
        key = secrets.token_urlsafe(24)
        with self._lock:
            self._by_id[key] = kept
            while len(self._by_id) > self.max_forms:
                self._by_id.popitem(last=False)
        return key

    def take(self, key: str | None) -> Kept | None:
        """The kept form of key, once (None when unknown or too old)."""
        with self._lock:
            kept = self._by_id.pop(key, None) if key else None
        if kept is None or time.monotonic() - kept.at > self.keep_seconds:
            return None
        return kept


class Site:
    """The app's shared machinery, handed to each group of pages: page rendering, refusals, the
    current session, work in one transaction on the login's own connection, and cookies."""

    def __init__(self, url: str, sessions: Sessions, secure_cookies: bool = False, readers_only: bool = False,
                 remember: bool = True) -> None:
        self.url = url
        self.remember = remember
        self.sessions = sessions
        self.secure_cookies = secure_cookies
        self.readers_only = readers_only
        self.kept = KeptForms()
        self.env = environment()

    def page(self, request: Request, template: str, context: dict, status: int = 200,
             session: Session | None = None, headers: dict | None = None) -> HTMLResponse:
        """A rendered template with the security headers."""
        body = self.env.get_template(template).render(
            request=request, session=session, csrf=session.csrf if session else "",
            flash=FLASH.get(request.query_params.get("m", "")), **context)
        return HTMLResponse(body, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})

    def refused(self, request: Request, exc: Refused, session: Session | None,
                headers: dict | None = None) -> HTMLResponse:
        """The error page for a refusal, with its status."""
        return self.page(request, "error.html", {"status": exc.status, "message": exc.message}, exc.status, session,
                         headers)

    def current(self, request: Request) -> Session | None:
        """The request's live session, if any."""
        return self.sessions.get(request.cookies.get(COOKIE))

    def set_cookie(self, request: Request, response: Response, name: str, value: str, path: str = "/") -> None:
        """A cookie only this site's own requests carry (HttpOnly, SameSite=Strict), Secure when the
        request came over TLS (directly or through a trusted proxy) or when the app is told so."""
        response.set_cookie(name, value, httponly=True, samesite="strict", path=path,
                            secure=self.secure_cookies or request.url.scheme == "https")

    def sign_in_page(self, request: Request, problem: str | None = None, status: int = 200, login: str = "",
                     next_path: str | None = None, kept: str | None = None, notice: str | None = None,
                     headers: dict | None = None) -> Response:
        """The sign-in form, with a fresh CSRF token (also its cookie), the page to return to, and
        the id of a form kept across the sign-in."""
        token = secrets.token_urlsafe(32)
        response = self.page(request, "sign_in.html", {"token": token, "problem": problem, "login": login,
                                                       "next": next_path or "", "kept": kept or "",
                                                       "notice": notice}, status, headers=headers)
        self.set_cookie(request, response, SIGN_IN_COOKIE, token, path="/sign-in")
        return response

    async def in_db(self, session: Session, work: Callable[[psycopg.Connection], Any]) -> Any:
        """work(conn) in one transaction on one of the login's own connections."""

        def run():
            with self.sessions.connections.borrow(session.login) as conn:
                with conn.transaction():
                    return work(conn)

        session.busy += 1
        try:
            return await run_in_threadpool(run)
        finally:
            session.busy -= 1

    def reading(self, work: Callable[[psycopg.Connection], Any]) -> Callable[[psycopg.Connection], Any]:
        """work, for a reader's page: first the check that the ledger still extends the newest digest this
        server saw (docs/ledger.md, "Readers that remember"), refused with 409 when it was rolled back or forked."""
        from evalledger.ledger import remember

        def checked(conn: psycopg.Connection) -> Any:
            try:
                remember.check_reader(conn, remember=self.remember, database=conn.info.dbname)
            except remember.LedgerRewound as exc:
                raise Refused(409, str(exc)) from None
            return work(conn)
        return checked

    def _keep(self, request: Request, form, handler, keeps, ended: Ended | None) -> Response:
        """A form posted without a live session, kept across a sign-in: the sign-in page."""
        back, what = keeps(form)
        token = form.get("csrf_token")
        genuine = (ended is not None and isinstance(token, str) and secrets.compare_digest(token, ended.csrf))
        kept = self.kept.add(Kept(handler, {k: v for k, v in form.items() if isinstance(v, str)}, back,
                                  ended.login if genuine else None, what))
        if genuine:
            notice = (f"Your session ended before {what} was saved. Sign in again as {ended.login}: it is kept, "
                      "and saved once you are signed in.")
        else:
            notice = (f"You were not signed in when you sent {what} (the session ended, or the app restarted). "
                      "Sign in again: what you typed is offered back on its page, not saved yet.")
        return self.sign_in_page(request, status=401, login=ended.login if ended else "", next_path=back,
                                 kept=kept, notice=notice)

    async def resume(self, request: Request, session: Session, key: str | None) -> Response | None:
        """After a sign-in: the form kept under key handled as if posted now (its ended session was
        the same login's), or offered back on its page; None when nothing was kept."""
        kept = self.kept.take(key)
        if kept is None:
            return None
        if kept.login is not None and kept.login != session.login:
            return None  # another login's form: not this one's to save or see
        if kept.login is not None:
            try:
                response = await kept.handler(request, session, {**kept.form, "csrf_token": session.csrf})
            except (Refused, EvalledgerError, Unavailable, psycopg.Error):
                response = None
            if response is not None and response.status_code == 303:
                response.headers["location"] = _flash(response.headers["location"], "resumed")
                return response
        session.offered[kept.back] = kept.form
        return RedirectResponse(_flash(kept.back, "kept"), status_code=303)

    def signed_in(self, kind: str | None = None,
                  keeps: Callable[[Any], tuple[str, str]] | None = None):
        """Handlers for a signed-in session (of kind 'reviewer' or 'reader' when given); POSTs carry
        the session's CSRF token or are refused 403 before anything is read or written. A GET without
        a session goes to the sign-in page, which returns to it. keeps(form) -> (page, what) marks a
        POST whose form survives a lost session: kept across the sign-in (see Site.resume), and
        offered back on its page when the database is out of reach."""

        def wrap(handler):
            @wraps(handler)
            async def endpoint(request: Request):
                session = self.current(request)
                if session is None:
                    if request.method == "GET":
                        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                        return RedirectResponse(f"/sign-in?next={quote(back, safe='/')}", status_code=303)
                    form = await request.form(max_part_size=FORM_PART_LIMIT)
                    if keeps is not None and same_origin(request):
                        try:
                            return self._keep(request, form, handler, keeps,
                                              self.sessions.ended(request.cookies.get(COOKIE)))
                        except Refused:
                            pass
                    return self.refused(request, Refused(403, "not signed in (or the session expired): sign in again"),
                                        None)
                form = None
                if request.method == "POST":
                    form = await request.form(max_part_size=FORM_PART_LIMIT)
                    token = form.get("csrf_token")
                    if not isinstance(token, str) or not secrets.compare_digest(token, session.csrf):
                        return self.refused(request, Refused(403, "the form's CSRF token is missing or wrong: "
                                                                  "reload the page and try again"), session)
                if kind == "reviewer" and "reviewer" not in session.kinds:
                    return self.refused(request, Refused(403, f"{session.login} is not a reviewer"), session)
                if kind == "reader" and not session.kinds & {"auditor", "revops"}:
                    return self.refused(request, Refused(403, f"{session.login} is neither an auditor nor RevOps"),
                                        session)
                try:
                    return await handler(request, session, form)
                except Refused as exc:
                    return self.refused(request, exc, session)
                except CredentialsRefused:
                    self.sessions.forget_login(session.login)
                    return self.sign_in_page(request, "your login's password no longer opens a database connection "
                                                      "(changed, or the login was disabled): sign in again", 401,
                                             session.login)
                except EvalledgerError as exc:
                    return self.refused(request, Refused(404, str(exc)), session)
                except (Unavailable, psycopg.OperationalError) as exc:
                    message = unavailable_message(exc)
                    if keeps is not None and form is not None:
                        try:
                            back, _ = keeps(form)
                            session.offered[back] = {k: v for k, v in form.items() if isinstance(v, str)}
                            message += f" What you typed is kept: it is offered back on {back} once you reopen it."
                        except Refused:
                            pass
                    return self.refused(request, Refused(503, message), session, {"Retry-After": "5"})

            return endpoint

        return wrap


def _flash(location: str, key: str) -> str:
    """location with its ?m= flash set to key."""
    path, _, query = location.partition("?")
    kept = [part for part in query.split("&") if part and not part.startswith("m=")]
    return f"{path}?{'&'.join([*kept, f'm={key}'])}"


def unavailable_message(exc: Exception) -> str:
    """What a person is told when the database is out of reach (or the app at its connection cap)."""
    if isinstance(exc, Unavailable) and "connections" in str(exc):
        return f"not done: {exc}."
    return ("not done: the database is not reachable just now (it may be restarting). You are still signed in; "
            "nothing was saved. Try again in a moment.")


class HostGuard:
    """ASGI middleware: a request whose Host header names a host this app does not serve is refused
    400 before anything else (a DNS-rebinding page, whose name resolves to this machine, names its
    own host). Hosts are compared without their port."""

    def __init__(self, app, hosts: list[str]) -> None:
        self.app = app
        self.hosts = {_bare(h) for h in hosts}

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            host = _bare(Headers(scope=scope).get("host", ""))
            if host not in self.hosts:
                response = PlainTextResponse(
                    f"400: this server answers for {', '.join(sorted(self.hosts))}, not the Host this request names",
                    status_code=400, headers=EVERY_RESPONSE)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _bare(host: str) -> str:
    """A Host header's host, without its port, lower-case ("[::1]:8765" is "::1")."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class EveryResponseHeaders:
    """ASGI middleware: EVERY_RESPONSE's headers on every response that lacks them (static files,
    the 400 of a wrong Host, uvicorn's own)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((k.lower().encode(), v.encode()) for k, v in EVERY_RESPONSE.items()
                                        if k.lower().encode() not in present)]
            await send(message)

        await self.app(scope, receive, send_with_headers)
