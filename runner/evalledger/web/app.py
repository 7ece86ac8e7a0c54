"""The review web app (`evalledger serve`): reviewers score their runs' questions in a browser;
auditors and RevOps read runs, decisions and question rows.

The pages come in groups, each a module with a `routes(site)`: signing in (auth.py), the
reviewer's (review.py) and the readers' (reading.py); site.py holds what they share. This module
only assembles them.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from evalledger.core.paths import package_path

from . import auth, reading, review
from .sessions import Connections, Session, Sessions
from .site import EveryResponseHeaders, HostGuard, Refused, Site, run_id_of

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"]


def create_app(url: str, idle_minutes: float = 30, *, session_hours: float = 12, hosts: list[str] | None = None,
               secure_cookies: bool = False, connections_per_login: int = 2, max_connections: int = 16,
               throttle: auth.Throttle | None = None, readers_only: bool = False, remember: bool = True):
    """The web app on the database at url (the ledger's, as `evalledger` resolves it); each
    sign-in connects to it as that login. A session ends after idle_minutes without a request or
    session_hours after it signed in. Requests must name one of hosts (default: the loopback
    names). Cookies are Secure over TLS, or always with secure_cookies. The app holds at most
    connections_per_login connections for one login and max_connections in all. With readers_only
    (or on a standby, whatever the flag) only auditors and RevOps sign in: reviewers save on the primary. Readers'
    pages check first that the ledger still extends the newest digest this server saw (remembering it, unless
    remember is False)."""
    connections = Connections(url, per_login=connections_per_login, total=max_connections)
    site = Site(url, Sessions(connections, idle_minutes * 60, session_hours * 3600), secure_cookies, readers_only,
                remember)

    @site.signed_in()
    async def home(request: Request, session: Session, form) -> Response:
        return RedirectResponse("/queue" if "reviewer" in session.kinds else "/runs", status_code=303)

    @site.signed_in()
    async def run(request: Request, session: Session, form) -> Response:
        """A run's page: the reviewer's, for a run they review; else the readers'."""
        run_id = run_id_of(request.path_params["run_id"])
        if "reviewer" in session.kinds:
            try:
                saved = request.query_params.get("saved")
                return site.page(request, "run.html",
                                 await site.in_db(session, lambda c: review.run_view(c, run_id, saved)), session=session)
            except Refused:
                if not session.kinds & reading.READERS:
                    raise
        if not session.kinds & reading.READERS:
            raise Refused(403, f"{session.login} is not a reviewer")
        view = await site.in_db(session, site.reading(lambda c: reading.run_view(c, run_id)))
        return site.page(request, "run_read.html", view, session=session)

    async def not_found(request: Request, exc: HTTPException) -> Response:
        """404s and 405s as pages; a 405 keeps its Allow header."""
        return site.refused(request, Refused(exc.status_code, exc.detail or "not found"), site.current(request),
                            dict(exc.headers or {}))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async def sweep():  # expired sessions' connections close even when no request comes
            while True:
                await asyncio.sleep(min(60.0, site.sessions.idle_seconds, site.sessions.lifetime_seconds))
                await run_in_threadpool(site.sessions.get, None)

        sweeper = asyncio.create_task(sweep())
        try:
            yield
        finally:
            sweeper.cancel()
            site.sessions.close_all()

    app = Starlette(routes=[
        Route("/", home),
        *auth.routes(site, throttle),
        *review.routes(site),
        *reading.routes(site),
        Route("/runs/{run_id}", run),
        Mount("/static", StaticFiles(directory=str(package_path("static", package=__package__))), name="static"),
    ], exception_handlers={HTTPException: not_found}, lifespan=lifespan)
    app.state.sessions = site.sessions
    return EveryResponseHeaders(HostGuard(app, hosts or LOOPBACK_HOSTS))
