"""The reviewer's pages: the queue, a run's questions, a question's form, saving, the judges'
suggestions once the reviewer's own numbers are in, and the sign-off."""

from __future__ import annotations

from uuid import UUID

import psycopg
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from evalledger.core import db
from evalledger.core.reading import dicts
from evalledger.suites.brain_eval import reviewing, store
from evalledger.suites.brain_eval.store import QUERIES as BRAIN_EVAL

from .sessions import Session
from .site import Refused, Site, one, run_header, run_id_of

FORM_FIELDS = tuple(reviewing.FIELDS)  # the reviewer's fields, in the order a reviewer enters them


def queue_view(conn: psycopg.Connection) -> dict:
    """The runs and questions waiting for the signed-in reviewer."""
    return {"runs": store.review_queue(conn)}


def run_view(conn: psycopg.Connection, run_id: UUID) -> dict:
    """One of the reviewer's runs: its header and its questions, with what each still needs."""
    header = run_header(conn, run_id)
    questions = store.review_questions(conn, run_id)
    if not questions:
        raise Refused(404, f"no run {run_id} that you review")
    return {"run": header, "questions": questions,
            "to_score": sum(1 for q in questions if q["needs"])}


def question_view(conn: psycopg.Connection, run_id: UUID, question_id: str) -> dict:
    """Everything the question page shows; suggestions only once shown (recorded) for it."""
    header = run_header(conn, run_id)
    questions = store.review_questions(conn, run_id)
    ids = [q["question_id"] for q in questions]
    if question_id not in ids:
        raise Refused(404, f"no question {question_id} in run {run_id} that you review")
    at = ids.index(question_id)
    row = questions[at]
    answer = one(conn, BRAIN_EVAL["review_answers"], {"eval_run_id": run_id, "question_id": question_id})
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


def _held(row: dict) -> dict:
    """The form's text for what a question row holds."""
    return {name: reviewing.as_text(row.get(name)) for name in FORM_FIELDS}


def routes(site: Site) -> list[Route]:
    """The reviewer's routes (a run's own page is shared with readers: see app.py)."""

    @site.signed_in("reviewer")
    async def queue(request: Request, session: Session, form) -> Response:
        return site.page(request, "queue.html", await site.in_db(session, queue_view), session=session)

    @site.signed_in("reviewer")
    async def question(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(request.path_params["run_id"])
        question_id = request.path_params["question_id"]
        view = await site.in_db(session, lambda c: question_view(c, run_id, question_id))
        return site.page(request, "question.html",
                         {**view, "values": _held(view["row"]), "problems": {}, "error": None}, session=session)

    @site.signed_in("reviewer")
    async def save(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(str(form.get("eval_run_id", "")))
        question_id = str(form.get("question_id", ""))
        entered = {name: str(form.get(name, "")) for name in FORM_FIELDS}
        view = await site.in_db(session, lambda c: question_view(c, run_id, question_id))
        values, problems = check_form(entered, view["row"])
        if problems:
            return site.page(request, "question.html", {**view, "values": entered, "problems": problems,
                                                        "error": "not saved: correct the fields marked below"},
                             400, session)
        changes = reviewing.changes(values, view["row"])

        def write(conn: psycopg.Connection):
            if changes:
                store.score_question(conn, run_id, question_id, changes)
            # Their numbers are saved: now the judges' suggestions may be shown (recorded).
            store.show_suggestions(conn, run_id, question_id)

        try:
            await site.in_db(session, write)
        except psycopg.Error as exc:
            status = 403 if isinstance(exc, psycopg.errors.InsufficientPrivilege) else 409
            view = await site.in_db(session, lambda c: question_view(c, run_id, question_id))
            return site.page(request, "question.html", {**view, "values": entered, "problems": {},
                                                        "error": f"refused by the database: {db.explain(exc)}"},
                             status, session)
        return RedirectResponse(f"/runs/{run_id}/questions/{question_id}?m=saved", status_code=303)

    @site.signed_in("reviewer")
    async def reveal(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(str(form.get("eval_run_id", "")))
        question_id = str(form.get("question_id", ""))
        await site.in_db(session, lambda c: question_view(c, run_id, question_id))  # 404 unless it is theirs
        try:
            await site.in_db(session, lambda c: store.show_suggestions(c, run_id, question_id))
        except psycopg.Error as exc:
            raise Refused(403, f"refused by the database: {db.explain(exc)}") from None
        return RedirectResponse(f"/runs/{run_id}/questions/{question_id}#suggestions", status_code=303)

    @site.signed_in("reviewer")
    async def sign_off(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(request.path_params["run_id"])
        view = await site.in_db(session, lambda c: run_view(c, run_id))
        dimensions = view["run"]["dimensions"] or []
        if request.method == "GET":
            return site.page(request, "sign_off.html", {**view, "dimensions": dimensions, "hours": "", "notes": {},
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
                await site.in_db(session, lambda c: store.sign_off_run(c, run_id, number, kept or None))
            except psycopg.Error as exc:
                problem = f"refused by the database: {db.explain(exc)}"
        if problem:
            return site.page(request, "sign_off.html", {**view, "dimensions": dimensions, "hours": hours,
                                                        "notes": notes, "problem": problem}, 400, session)
        return RedirectResponse(f"/runs/{run_id}?m=signed-off", status_code=303)

    return [
        Route("/queue", queue),
        Route("/runs/{run_id}/questions/{question_id}", question),
        Route("/runs/{run_id}/sign-off", sign_off, methods=["GET", "POST"]),
        Route("/review/save", save, methods=["POST"]),
        Route("/review/suggestions", reveal, methods=["POST"]),
    ]
