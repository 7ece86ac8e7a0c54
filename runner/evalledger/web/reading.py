"""The readers' pages: auditors and RevOps read runs, their decisions and question rows."""

from __future__ import annotations

from uuid import UUID

import psycopg
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from evalledger.core.reading import dicts
from evalledger.suites.brain_eval.store import QUERIES as BRAIN_EVAL

from .sessions import Session
from .site import Site, run_header

READERS = frozenset({"auditor", "revops"})


def runs_view(conn: psycopg.Connection) -> dict:
    """The runs a reader may see, newest first."""
    return {"runs": dicts(conn, BRAIN_EVAL["list_runs"], {"brain": None, "since": None, "decision": None,
                                                          "open": False, "limit": 500})}


def run_view(conn: psycopg.Connection, run_id: UUID) -> dict:
    """One run as a reader sees it: its header and its question rows."""
    return {"run": run_header(conn, run_id),
            "questions": dicts(conn, BRAIN_EVAL["run_questions"], {"eval_run_id": run_id})}


def routes(site: Site) -> list[Route]:
    """The readers' routes (a run's own page is shared with reviewers: see app.py)."""

    @site.signed_in()
    async def runs(request: Request, session: Session, form) -> Response:
        if not session.kinds & READERS:
            return RedirectResponse("/queue", status_code=303)
        return site.page(request, "runs.html", await site.in_db(session, runs_view), session=session)

    return [Route("/runs", runs)]
