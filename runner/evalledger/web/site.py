"""What every page of the web app shares: rendering, refusals, sessions and the signed-in login's
own database connection.

Every query of a session runs on a connection opened as the signed-in login with its own
password, so PostgreSQL checks the password and row-level security decides what the login sees
and may change: the app holds no privileged connection and never sets a role. Values go to the
database as parameters only. Pages are rendered by jinja2 (autoescaped); static assets ship in
the package (no network needed).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any
from uuid import UUID

import jinja2
import psycopg
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from evalledger.core.errors import EvalledgerError
from evalledger.core.paths import package_path
from evalledger.core.queries import Queries
from evalledger.core.reading import dicts
from evalledger.suites.brain_eval import reviewing

from .sessions import COOKIE, Session, Sessions

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
# What a redirect's ?m= may say (any other value says nothing: no text is reflected from a URL).
FLASH = {"saved": "Saved. The judges' suggestions for this question are shown below.",
         "signed-off": "Signed off: the run can be completed."}


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


class Site:
    """The app's shared machinery, handed to each group of pages: page rendering, refusals, the
    current session, and work in one transaction on the session's own connection."""

    def __init__(self, url: str, sessions: Sessions) -> None:
        self.url = url
        self.sessions = sessions
        self.env = environment()

    def page(self, request: Request, template: str, context: dict, status: int = 200,
             session: Session | None = None) -> HTMLResponse:
        """A rendered template with the security headers."""
        body = self.env.get_template(template).render(
            request=request, session=session, csrf=session.csrf if session else "",
            flash=FLASH.get(request.query_params.get("m", "")), **context)
        return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)

    def refused(self, request: Request, exc: Refused, session: Session | None) -> HTMLResponse:
        """The error page for a refusal, with its status."""
        return self.page(request, "error.html", {"status": exc.status, "message": exc.message}, exc.status, session)

    def current(self, request: Request) -> Session | None:
        """The request's live session, if any."""
        return self.sessions.get(request.cookies.get(COOKIE))

    async def in_db(self, session: Session, work: Callable[[psycopg.Connection], Any]) -> Any:
        """work(conn) in one transaction on the login's own connection, one request at a time."""

        def run():
            with session.lock:
                conn = session.connection()
                with conn.transaction():
                    return work(conn)

        return await run_in_threadpool(run)

    def signed_in(self, kind: str | None = None):
        """Handlers for a signed-in session (of kind 'reviewer' or 'reader' when given); POSTs carry
        the session's CSRF token or are refused 403 before anything is read or written."""

        def wrap(handler):
            @wraps(handler)
            async def endpoint(request: Request):
                session = self.current(request)
                if session is None:
                    if request.method == "GET":
                        return RedirectResponse("/sign-in", status_code=303)
                    return self.refused(request, Refused(403, "not signed in (or the session expired): sign in again"),
                                        None)
                form = None
                if request.method == "POST":
                    form = await request.form()
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
                except EvalledgerError as exc:
                    return self.refused(request, Refused(404, str(exc)), session)
                except psycopg.OperationalError:
                    self.sessions.forget(request.cookies.get(COOKIE))
                    return self.refused(request, Refused(503, "the database connection was lost: sign in again"),
                                        None)

            return endpoint

        return wrap
