"""The readers' pages: the dashboards (every signed-in login, each seeing what its tier allows), the
runs, and the drill-down from a run to a question's answer, sources, judges' drafts and review
trail, a question over time, a catalog question's production traffic, a takes-quality run and a
work-quality snapshot. Everything is read on
the login's own connection (row-level security decides); the data comes from evalledger.bi."""

from __future__ import annotations

from uuid import UUID

import psycopg
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from evalledger.bi import drill, panels, render
from evalledger.bi.filters import TRIGGERS, Filters
from evalledger.core.errors import EvalledgerError
from evalledger.core.reading import dicts
from evalledger.suites.brain_eval.store import QUERIES as BRAIN_EVAL

from .sessions import Session
from .site import SECURITY_HEADERS, Refused, Site, run_header, run_id_of

READERS = frozenset({"auditor", "revops"})


def runs_view(conn: psycopg.Connection) -> dict:
    """The runs a reader may see, newest first."""
    return {"runs": dicts(conn, BRAIN_EVAL["list_runs"], {"brain": None, "since": None, "decision": None,
                                                          "state": None, "limit": 500})}


def run_view(conn: psycopg.Connection, run_id: UUID) -> dict:
    """One run as a reader sees it: what was tested, the decision against the rubric's criteria,
    the sign-off, the judges' agreement and the question rows (each a link into its evidence)."""
    run_header(conn, run_id)  # the same 404 as every run page, whether it exists or not
    return {**drill.run(conn, run_id), "number": render.exact_number}


def dashboards_view(conn: psycopg.Connection, query) -> dict:
    """Every panel the login may read, for the filters of the query string (or why they are wrong)."""
    try:
        filters = Filters.parse(query.get("brain"), query.get("from"), query.get("to"), query.get("trigger"),
                                panels.known_brains(conn))
        problem = None
    except EvalledgerError as exc:
        filters, problem = Filters(), f"{exc}: showing every run instead"
    board = panels.load(conn, filters)
    return {"board": board, "panels_html": render.panels_markup(board.panels, links=True, empty=board.empty), "problem": problem,
            "triggers": TRIGGERS, "form": filters.query_string()}


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise Refused(404, f"no {what} {text!r}: its id is a number") from None


def readers_only(session: Session) -> None:
    """The drill-down pages show question verdicts, which a reviewer reads of no question (not
    before its run completes, nor after: docs/guards.md section 22): they are the readers'."""
    if not session.kinds & READERS:
        raise Refused(403, f"{session.login} is not a reader (RevOps or an auditor): a reviewer reads its runs "
                           "on their own pages, from the queue")


def routes(site: Site) -> list[Route]:
    """The readers' routes (a run's own page is shared with reviewers: see app.py)."""

    @site.signed_in()
    async def runs(request: Request, session: Session, form) -> Response:
        if not session.kinds & READERS:
            return RedirectResponse("/queue", status_code=303)
        return site.page(request, "runs.html", await site.in_db(session, site.reading(runs_view)), session=session)

    @site.signed_in()
    async def dashboards(request: Request, session: Session, form) -> Response:
        view = await site.in_db(session, site.reading(lambda c: dashboards_view(c, request.query_params)))
        return site.page(request, "dashboards.html", view, status=400 if view["problem"] else 200, session=session)

    @site.signed_in()
    async def question(request: Request, session: Session, form) -> Response:
        readers_only(session)
        run_id = run_id_of(request.path_params["run_id"])
        question_id = request.path_params["question_id"]
        view = await site.in_db(session, site.reading(lambda c: drill.question(c, run_id, question_id)))
        return site.page(request, "read_question.html", {**view, "utc": render.utc}, session=session)

    @site.signed_in()
    async def question_history(request: Request, session: Session, form) -> Response:
        readers_only(session)
        question_id = request.path_params["question_id"]
        brain, catalog = request.query_params.get("brain") or None, request.query_params.get("catalog") or None
        rows = await site.in_db(session, site.reading(lambda c: drill.question_history(c, question_id, brain, catalog)))
        return site.page(request, "read_question_history.html", {
            "question_id": question_id, "brain": brain, "catalog": catalog, "rows": rows}, session=session)

    @site.signed_in()
    async def catalog_question(request: Request, session: Session, form) -> Response:
        readers_only(session)
        version, question_id = request.path_params["catalog_version"], request.path_params["question_id"]
        view = await site.in_db(session, site.reading(lambda c: drill.catalog_question(c, version, question_id)))
        return site.page(request, "read_catalog_question.html", view, session=session)

    @site.signed_in()
    async def takes_run(request: Request, session: Session, form) -> Response:
        readers_only(session)
        run_id = _int(request.path_params["run_id"], "takes-quality run")
        return site.page(request, "read_takes.html", await site.in_db(session, site.reading(lambda c: drill.takes_run(c, run_id))),
                         session=session)

    @site.signed_in()
    async def work_snapshot(request: Request, session: Session, form) -> Response:
        readers_only(session)
        snapshot_id = _int(request.path_params["snapshot_id"], "work-quality snapshot")
        return site.page(request, "read_work.html",
                         await site.in_db(session, site.reading(lambda c: drill.work_snapshot(c, snapshot_id))), session=session)

    async def stylesheet(request: Request) -> Response:
        return Response(render.stylesheet(), media_type="text/css",
                        headers={k: v for k, v in SECURITY_HEADERS.items() if k != "Cache-Control"})

    return [
        Route("/runs", runs),
        Route("/dashboards", dashboards),
        Route("/read/runs/{run_id}/questions/{question_id}", question),
        Route("/read/questions/{question_id}", question_history),
        Route("/read/catalogs/{catalog_version}/questions/{question_id}", catalog_question),
        Route("/read/takes-quality/{run_id}", takes_run),
        Route("/read/work-quality/{snapshot_id}", work_snapshot),
        Route("/readers.css", stylesheet),
    ]
