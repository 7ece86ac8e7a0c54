"""Signing in and out: a browser signs in as its own database login, proven by its password."""

from __future__ import annotations

import logging
import secrets

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from evalledger.core.errors import EvalledgerError

from .sessions import COOKIE, Session, connect_as
from .site import QUERIES, Site, one

log = logging.getLogger("evalledger.web")

SIGN_IN_COOKIE = "evalledger_sign_in"  # the sign-in form's CSRF token (double submit), before any session


def routes(site: Site) -> list[Route]:
    """The sign-in and sign-out routes."""

    async def sign_in_form(request: Request, problem: str | None = None, status: int = 200) -> Response:
        token = secrets.token_urlsafe(32)
        response = site.page(request, "sign_in.html", {"token": token, "problem": problem, "login": ""}, status)
        response.set_cookie(SIGN_IN_COOKIE, token, httponly=True, samesite="strict", path="/sign-in")
        return response

    async def sign_in(request: Request) -> Response:
        if request.method == "GET":
            if site.current(request) is not None:
                return RedirectResponse("/", status_code=303)
            return await sign_in_form(request)
        form = await request.form()
        token, expected = form.get("csrf_token"), request.cookies.get(SIGN_IN_COOKIE)
        if not isinstance(token, str) or not expected or not secrets.compare_digest(token, expected):
            return site.page(request, "error.html", {"status": 403, "message": "the sign-in form's CSRF token is "
                                                     "missing or wrong: reload the page and try again"}, 403)
        login, password = str(form.get("login", "")).strip(), str(form.get("password", ""))
        if not login or not password:
            return await sign_in_form(request, "give your database login and password", 400)

        def open_session() -> Session:
            conn = connect_as(site.url, login, password)
            try:
                with conn.transaction():
                    who = one(conn, QUERIES["whoami"])
            except BaseException:
                conn.close()
                raise
            kinds = frozenset(k for k in ("reviewer", "auditor", "revops") if who[k])
            return Session(login=who["login"], password=password, url=site.url, conn=conn, kinds=kinds)

        try:
            session = await run_in_threadpool(open_session)
        except EvalledgerError:
            log.info("sign-in refused for a login")
            return await sign_in_form(request, "sign-in refused: wrong login or password, or the database is "
                                               "not reachable", 401)
        if not session.kinds:
            session.close()
            return await sign_in_form(request, f"{login} is neither a reviewer, an auditor nor RevOps", 403)
        site.sessions.forget(request.cookies.get(COOKIE))
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, site.sessions.add(session), httponly=True, samesite="strict", path="/")
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
