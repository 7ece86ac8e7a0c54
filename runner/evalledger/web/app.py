"""The review web app (`evalledger serve`): reviewers score their runs' questions in a browser;
auditors and RevOps read runs, decisions and question rows.

Every query of a session runs on a connection opened as the signed-in login with its own
password, so PostgreSQL checks the password and row-level security decides what the login sees
and may change: the app holds no privileged connection and never sets a role. Values go to the
database as parameters only. Pages are rendered by jinja2 (autoescaped); static assets ship in
the package (no network needed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any
from uuid import UUID

import jinja2
import psycopg
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from evalledger.core import db
from evalledger.core.reading import dicts
from evalledger.core.errors import EvalledgerError
from evalledger.core.paths import package_path
from evalledger.core.queries import Queries
from evalledger.suites.brain_eval import reviewing, store
from evalledger.suites.brain_eval.store import QUERIES as BRAIN_EVAL

from .sessions import COOKIE, Session, Sessions, connect_as

QUERIES = Queries(__package__)
log = logging.getLogger("evalledger.web")

SIGN_IN_COOKIE = "evalledger_sign_in"  # the sign-in form's CSRF token (double submit), before any session
FORM_FIELDS = tuple(reviewing.FIELDS)  # the reviewer's fields, in the order a reviewer enters them
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


# -- rendering -----------------------------------------------------------------------------------


def _number(value) -> str:
    return "—" if value is None else reviewing.as_text(value)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(package_path("templates", package=__package__))),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _number
    env.filters["pretty"] = lambda value: json.dumps(value, indent=1, ensure_ascii=False, default=str)
    env.filters["when"] = lambda value: "—" if value is None else value.strftime("%Y-%m-%d %H:%M")
    env.globals["LABELS"] = LABELS
    return env


# -- the database, as the signed-in login ----------------------------------------------------------


def _one(conn: psycopg.Connection, query: str, params: dict | None = None) -> dict | None:
    found = dicts(conn, query, params)
    return found[0] if found else None


def _run_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        raise Refused(404, f"no run {text!r}: a run id is a UUID") from None


def _header(conn: psycopg.Connection, run_id: UUID) -> dict:
    header = _one(conn, QUERIES["run_header"], {"eval_run_id": run_id})
    if header is None:
        raise Refused(404, f"no run {run_id} that you may see")
    return header


def _queue(conn: psycopg.Connection) -> dict:
    return {"runs": store.review_queue(conn)}


def _reviewer_run(conn: psycopg.Connection, run_id: UUID) -> dict:
    header = _header(conn, run_id)
    questions = store.review_questions(conn, run_id)
    if not questions:
        raise Refused(404, f"no run {run_id} that you review")
    return {"run": header, "questions": questions,
            "to_score": sum(1 for q in questions if q["needs"])}


def _question(conn: psycopg.Connection, run_id: UUID, question_id: str) -> dict:
    """Everything the question page shows; suggestions only once shown (recorded) for it."""
    header = _header(conn, run_id)
    questions = store.review_questions(conn, run_id)
    ids = [q["question_id"] for q in questions]
    if question_id not in ids:
        raise Refused(404, f"no question {question_id} in run {run_id} that you review")
    at = ids.index(question_id)
    row = questions[at]
    answer = _one(conn, BRAIN_EVAL["review_answers"], {"eval_run_id": run_id, "question_id": question_id})
    sources = store.question_sources(conn, run_id, question_id) or []
    suggestions = []
    if row["suggestions_shown"]:
        suggestions = [s for s in dicts(conn, BRAIN_EVAL["suggestions"], {"eval_run_id": run_id})
                       if s["question_id"] == question_id]
    asked = reviewing.asked_fields(row)
    return {"run": header, "row": row, "answer": answer, "sources": sources, "suggestions": suggestions,
            "cited": {sid for c in (answer.get("claims") or []) for sid in (c.get("source_ids") or [])},
            "asks_staleness": "staleness_correctly_recognized" in asked,
            "asks_diagnosis": "diagnosis_accuracy_score" in asked,
            "previous": ids[at - 1] if at > 0 else None, "next": ids[at + 1] if at + 1 < len(ids) else None,
            "position": at + 1, "total": len(ids)}


def _reader_runs(conn: psycopg.Connection) -> dict:
    return {"runs": dicts(conn, BRAIN_EVAL["list_runs"], {"brain": None, "since": None, "decision": None,
                                                          "open": False, "limit": 500})}


def _reader_run(conn: psycopg.Connection, run_id: UUID) -> dict:
    return {"run": _header(conn, run_id),
            "questions": dicts(conn, BRAIN_EVAL["run_questions"], {"eval_run_id": run_id})}


# -- the review form -------------------------------------------------------------------------------


def check_form(form: dict[str, str], row: dict) -> tuple[dict, dict]:
    """The reviewer's values for a question row from the form's text, checked as the terminal and a
    file are (reviewing): ({field: value}, {field: error}); nothing is stored when there is any error."""
    values, problems = {}, {}
    for name in reviewing.asked_fields(row):
        try:
            values[name] = reviewing.parse_value(name, form.get(name, ""))
        except reviewing.Invalid as exc:
            problems[name] = str(exc)
            continue
        if values[name] is None and name != "reviewer_comments":
            problems[name] = "required"
    try:
        reviewing.check_entry(values)
    except reviewing.Invalid as exc:
        problems["hallucinations_detected"] = str(exc)
    return values, problems


# -- the app ---------------------------------------------------------------------------------------


def create_app(url: str, idle_minutes: float = 30) -> Starlette:
    """The web app on the database at url (the ledger's, as `evalledger` resolves it); each
    sign-in connects to it as that login. Sessions idle for idle_minutes are forgotten."""
    env = _environment()
    sessions = Sessions(idle_minutes * 60)

    def page(request: Request, template: str, context: dict, status: int = 200,
             session: Session | None = None) -> HTMLResponse:
        body = env.get_template(template).render(
            request=request, session=session, csrf=session.csrf if session else "", flash=FLASH.get(request.query_params.get("m", "")),
            **context)
        return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)

    def refused(request: Request, exc: Refused, session: Session | None) -> HTMLResponse:
        return page(request, "error.html", {"status": exc.status, "message": exc.message}, exc.status, session)

    def current(request: Request) -> Session | None:
        return sessions.get(request.cookies.get(COOKIE))

    async def in_db(session: Session, work: Callable[[psycopg.Connection], Any]) -> Any:
        """work(conn) in one transaction on the login's own connection, one request at a time."""

        def run():
            with session.lock:
                conn = session.connection()
                with conn.transaction():
                    return work(conn)

        return await run_in_threadpool(run)

    def signed_in(kind: str | None = None):
        """Handlers for a signed-in session (of kind 'reviewer' or 'reader' when given); POSTs carry
        the session's CSRF token or are refused 403 before anything is read or written."""

        def wrap(handler):
            @wraps(handler)
            async def endpoint(request: Request):
                session = current(request)
                if session is None:
                    if request.method == "GET":
                        return RedirectResponse("/sign-in", status_code=303)
                    return refused(request, Refused(403, "not signed in (or the session expired): sign in again"),
                                   None)
                form = None
                if request.method == "POST":
                    form = await request.form()
                    token = form.get("csrf_token")
                    if not isinstance(token, str) or not secrets.compare_digest(token, session.csrf):
                        return refused(request, Refused(403, "the form's CSRF token is missing or wrong: "
                                                             "reload the page and try again"), session)
                if kind == "reviewer" and "reviewer" not in session.kinds:
                    return refused(request, Refused(403, f"{session.login} is not a reviewer"), session)
                if kind == "reader" and not session.kinds & {"auditor", "revops"}:
                    return refused(request, Refused(403, f"{session.login} is neither an auditor nor RevOps"),
                                   session)
                try:
                    return await handler(request, session, form)
                except Refused as exc:
                    return refused(request, exc, session)
                except EvalledgerError as exc:
                    return refused(request, Refused(404, str(exc)), session)
                except psycopg.OperationalError:
                    sessions.forget(request.cookies.get(COOKIE))
                    return refused(request, Refused(503, "the database connection was lost: sign in again"), None)

            return endpoint

        return wrap

    # -- signing in and out --

    async def sign_in_form(request: Request, problem: str | None = None, status: int = 200) -> Response:
        token = secrets.token_urlsafe(32)
        response = page(request, "sign_in.html", {"token": token, "problem": problem,
                                                  "login": ""}, status)
        response.set_cookie(SIGN_IN_COOKIE, token, httponly=True, samesite="strict", path="/sign-in")
        return response

    async def sign_in(request: Request) -> Response:
        if request.method == "GET":
            if current(request) is not None:
                return RedirectResponse("/", status_code=303)
            return await sign_in_form(request)
        form = await request.form()
        token, expected = form.get("csrf_token"), request.cookies.get(SIGN_IN_COOKIE)
        if not isinstance(token, str) or not expected or not secrets.compare_digest(token, expected):
            return page(request, "error.html", {"status": 403, "message": "the sign-in form's CSRF token is "
                                                "missing or wrong: reload the page and try again"}, 403)
        login, password = str(form.get("login", "")).strip(), str(form.get("password", ""))
        if not login or not password:
            return await sign_in_form(request, "give your database login and password", 400)

        def open_session() -> Session:
            conn = connect_as(url, login, password)
            try:
                with conn.transaction():
                    who = _one(conn, QUERIES["whoami"])
            except BaseException:
                conn.close()
                raise
            kinds = frozenset(k for k in ("reviewer", "auditor", "revops") if who[k])
            return Session(login=who["login"], password=password, url=url, conn=conn, kinds=kinds)

        try:
            session = await run_in_threadpool(open_session)
        except EvalledgerError:
            log.info("sign-in refused for a login")
            return await sign_in_form(request, "sign-in refused: wrong login or password, or the database is "
                                               "not reachable", 401)
        if not session.kinds:
            session.close()
            return await sign_in_form(request, f"{login} is neither a reviewer, an auditor nor RevOps", 403)
        sessions.forget(request.cookies.get(COOKIE))
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, sessions.add(session), httponly=True, samesite="strict", path="/")
        response.delete_cookie(SIGN_IN_COOKIE, path="/sign-in")
        return response

    @signed_in()
    async def sign_out(request: Request, session: Session, form) -> Response:
        sessions.forget(request.cookies.get(COOKIE))
        response = RedirectResponse("/sign-in", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    # -- pages --

    @signed_in()
    async def home(request: Request, session: Session, form) -> Response:
        return RedirectResponse("/queue" if "reviewer" in session.kinds else "/runs", status_code=303)

    @signed_in("reviewer")
    async def queue(request: Request, session: Session, form) -> Response:
        return page(request, "queue.html", await in_db(session, _queue), session=session)

    @signed_in()
    async def runs(request: Request, session: Session, form) -> Response:
        if not session.kinds & {"auditor", "revops"}:
            return RedirectResponse("/queue", status_code=303)
        return page(request, "runs.html", await in_db(session, _reader_runs), session=session)

    @signed_in()
    async def run(request: Request, session: Session, form) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        if "reviewer" in session.kinds:
            try:
                return page(request, "run.html", await in_db(session, lambda c: _reviewer_run(c, run_id)),
                            session=session)
            except Refused:
                if not session.kinds & {"auditor", "revops"}:
                    raise
        if not session.kinds & {"auditor", "revops"}:
            raise Refused(403, f"{session.login} is not a reviewer")
        return page(request, "run_read.html", await in_db(session, lambda c: _reader_run(c, run_id)),
                    session=session)

    @signed_in("reviewer")
    async def question(request: Request, session: Session, form) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        question_id = request.path_params["question_id"]
        view = await in_db(session, lambda c: _question(c, run_id, question_id))
        return page(request, "question.html", {**view, "values": _held(view["row"]), "problems": {}, "error": None},
                    session=session)

    @signed_in("reviewer")
    async def save(request: Request, session: Session, form) -> Response:
        run_id = _run_id(str(form.get("eval_run_id", "")))
        question_id = str(form.get("question_id", ""))
        entered = {name: str(form.get(name, "")) for name in FORM_FIELDS}
        view = await in_db(session, lambda c: _question(c, run_id, question_id))
        values, problems = check_form(entered, view["row"])
        if problems:
            return page(request, "question.html", {**view, "values": entered, "problems": problems,
                                                   "error": "not saved: correct the fields marked below"},
                        400, session)
        changes = reviewing.changes(values, view["row"])

        def write(conn: psycopg.Connection):
            if changes:
                store.score_question(conn, run_id, question_id, changes)
            # Their numbers are saved: now the judges' suggestions may be shown (recorded).
            store.show_suggestions(conn, run_id, question_id)

        try:
            await in_db(session, write)
        except psycopg.Error as exc:
            status = 403 if isinstance(exc, psycopg.errors.InsufficientPrivilege) else 409
            view = await in_db(session, lambda c: _question(c, run_id, question_id))
            return page(request, "question.html", {**view, "values": entered, "problems": {},
                                                   "error": f"refused by the database: {db.explain(exc)}"},
                        status, session)
        return RedirectResponse(f"/runs/{run_id}/questions/{question_id}?m=saved", status_code=303)

    @signed_in("reviewer")
    async def reveal(request: Request, session: Session, form) -> Response:
        run_id = _run_id(str(form.get("eval_run_id", "")))
        question_id = str(form.get("question_id", ""))
        await in_db(session, lambda c: _question(c, run_id, question_id))  # 404 unless it is theirs
        try:
            await in_db(session, lambda c: store.show_suggestions(c, run_id, question_id))
        except psycopg.Error as exc:
            raise Refused(403, f"refused by the database: {db.explain(exc)}") from None
        return RedirectResponse(f"/runs/{run_id}/questions/{question_id}#suggestions", status_code=303)

    @signed_in("reviewer")
    async def sign_off(request: Request, session: Session, form) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        view = await in_db(session, lambda c: _reviewer_run(c, run_id))
        dimensions = view["run"]["dimensions"] or []
        if request.method == "GET":
            return page(request, "sign_off.html", {**view, "dimensions": dimensions, "hours": "", "notes": {},
                                                   "problem": None}, session=session)
        hours = str(form.get("hours", "")).strip()
        notes = {d["key"]: str(form.get(f"note_{d['key']}", "")).strip() for d in dimensions}
        problem = None
        try:
            number = reviewing.parse_hours(hours)
        except reviewing.Invalid as exc:
            problem = f"hours: {exc}"
        if problem is None:
            kept = {k: v for k, v in notes.items() if v}
            try:
                await in_db(session, lambda c: store.sign_off_run(c, run_id, number, kept or None))
            except psycopg.Error as exc:
                problem = f"refused by the database: {db.explain(exc)}"
        if problem:
            return page(request, "sign_off.html", {**view, "dimensions": dimensions, "hours": hours, "notes": notes,
                                                   "problem": problem}, 400, session)
        return RedirectResponse(f"/runs/{run_id}?m=signed-off", status_code=303)

    async def not_found(request: Request, exc: HTTPException) -> Response:
        return refused(request, Refused(exc.status_code, exc.detail or "not found"), current(request))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async def sweep():  # expired sessions' connections close even when no request comes
            while True:
                await asyncio.sleep(min(60.0, sessions.idle_seconds))
                await run_in_threadpool(sessions.get, None)

        sweeper = asyncio.create_task(sweep())
        try:
            yield
        finally:
            sweeper.cancel()
            sessions.close_all()

    app = Starlette(routes=[
        Route("/", home),
        Route("/sign-in", sign_in, methods=["GET", "POST"]),
        Route("/sign-out", sign_out, methods=["POST"]),
        Route("/queue", queue),
        Route("/runs", runs),
        Route("/runs/{run_id}", run),
        Route("/runs/{run_id}/questions/{question_id}", question),
        Route("/runs/{run_id}/sign-off", sign_off, methods=["GET", "POST"]),
        Route("/review/save", save, methods=["POST"]),
        Route("/review/suggestions", reveal, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(package_path("static", package=__package__))), name="static"),
    ], exception_handlers={HTTPException: not_found}, lifespan=lifespan)
    app.state.sessions = sessions
    return app


def _held(row: dict) -> dict:
    """The form's text for what a question row holds."""
    return {name: reviewing.as_text(row.get(name)) for name in FORM_FIELDS}
