"""The reviewer's pages: the queue, a run's questions, a question's form, saving, the judges'
suggestions and the reference answer once the reviewer's own numbers are in, and the sign-off.

A save goes on to the next question still needing work, whose page says what the saved one now
is and shows its reference answer and the judges' drafts. Nothing typed is lost: a save refused
(invalid, changed by someone since it was shown, refused by the database, the database out of
reach) shows the form again with what was typed; a save after the session ended is kept across
the sign-in (site.py)."""

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

from .sessions import Session, Unavailable
from .site import QUERIES, Refused, Site, one, run_header, run_id_of, unavailable_message

FORM_FIELDS = tuple(reviewing.FIELDS)  # the reviewer's fields, in the order a reviewer enters them
# The reviewer's numbers, in the form's order: the claims (filled in from the answer) come first,
# and the first of the others still needing a value takes the focus.
NUMBERS = ("total_claims", "hallucinations_detected", "staleness_correctly_recognized", "diagnosis_accuracy_score",
           "narrative_coherence_rating")
SHOWN_FIELD = "shown_entry"  # the form's copy of the question's last trail entry when it was shown


def waiting(question: dict) -> list[str]:
    """The reviewer's fields a question row still needs."""
    return [f for f in question["needs"] if f in reviewing.FIELDS]


def next_needing(questions: list[dict], after: str | None = None) -> str | None:
    """The first question still needing the reviewer's work after `after` (wrapping round), or None."""
    ids = [q["question_id"] for q in questions]
    start = ids.index(after) + 1 if after in ids else 0
    for question in questions[start:] + questions[:start]:
        if waiting(question) and question["question_id"] != after:
            return question["question_id"]
    return None


def queue_view(conn: psycopg.Connection) -> dict:
    """The runs waiting for the signed-in reviewer, each with its questions still needing work."""
    runs = store.review_queue(conn)
    for run in runs:
        questions = store.review_questions(conn, run["eval_run_id"])
        run["waiting"] = [{"question_id": q["question_id"], "needs": waiting(q)} for q in questions if waiting(q)]
        run["scored"] = len(questions) - len(run["waiting"])
        run["next"] = next_needing(questions)
    return {"runs": runs}


def run_view(conn: psycopg.Connection, run_id: UUID, saved: str | None = None) -> dict:
    """One of the reviewer's runs: its header and its questions (with their text), what each needs,
    and what the page after a save says of the question saved."""
    header = run_header(conn, run_id)
    questions = store.review_questions(conn, run_id)
    if not questions:
        raise Refused(404, f"no run {run_id} that you review")
    texts = {r["question_id"]: r["question_text"] for r in dicts(conn, QUERIES["question_texts"], {"eval_run_id": run_id})}
    for question in questions:
        question["question_text"] = texts.get(question["question_id"])
    return {"run": header, "questions": questions, "to_score": sum(1 for q in questions if waiting(q)),
            "next_needed": next_needing(questions), "saved_panel": _saved_panel(conn, run_id, questions, saved)}


def _saved_panel(conn: psycopg.Connection, run_id: UUID, questions: list[dict], saved: str | None) -> dict | None:
    """What the page after a save shows of the question just saved: how it stands, its reference
    answer and the judges' drafts (None unless saved names a question of the run)."""
    row = next((q for q in questions if q["question_id"] == saved), None)
    if row is None:
        return None
    drafts = reviewing.drafts(conn, run_id, saved) if row["suggestions_shown"] else []
    return {"row": row, "reference": reviewing.reference(conn, run_id, saved), "suggestions": drafts}


def question_view(conn: psycopg.Connection, run_id: UUID, question_id: str, saved: str | None = None) -> dict:
    """Everything the question page shows: the suggestions and the reference answer only once shown
    (recorded) for it, and what the page after a save says of the question saved."""
    header = run_header(conn, run_id)
    questions = store.review_questions(conn, run_id)
    ids = [q["question_id"] for q in questions]
    if question_id not in ids:
        raise Refused(404, f"no question {question_id} in run {run_id} that you review")
    at = ids.index(question_id)
    row = questions[at]
    answer = one(conn, BRAIN_EVAL["review_answers"], {"eval_run_id": run_id, "question_id": question_id}) or {}
    sources = store.question_sources(conn, run_id, question_id) or []
    version = reviewing.versions(conn, run_id, question_id).get(question_id, {"last_entry": 0, "reference_shown": False})
    suggestions = []
    if row["suggestions_shown"]:
        suggestions = reviewing.drafts(conn, run_id, question_id)
    reference = reviewing.reference(conn, run_id, question_id) if version["reference_shown"] else None
    levers = conn.execute(BRAIN_EVAL["run_levers"], {"eval_run_id": run_id}).fetchone()
    asked = reviewing.asked_fields(row)
    return {"run": header, "row": row, "answer": answer, "sources": sources, "suggestions": suggestions,
            "reference": reference, "version": version["last_entry"], **shown_from(answer, sources, levers),
            "cited": {sid for c in (answer.get("claims") or []) for sid in (c.get("source_ids") or [])},
            "asked": asked, "asks_staleness": "staleness_correctly_recognized" in asked,
            "asks_diagnosis": "diagnosis_accuracy_score" in asked,
            "previous": ids[at - 1] if at > 0 else None, "next": ids[at + 1] if at + 1 < len(ids) else None,
            "next_needed": next_needing(questions, question_id), "position": at + 1, "total": len(ids),
            "saved_panel": _saved_panel(conn, run_id, questions, saved) if saved != question_id else None}


def shown_from(answer: dict, sources: list[dict], levers) -> dict:
    """What the page shows the database's automatic scores were computed from (the database
    computed them when the answer was stored; this only points at their inputs): each claim
    numbered, with the sources it cites that were not given for the question (known only for a
    harness run), the claims by confidence label, and the proposed actions outside the brain's levers."""
    given = {s["id"] for s in sources}
    claims = []
    for number, claim in enumerate(answer.get("claims") or [], start=1):
        ids = claim.get("source_ids") or []
        not_given = [s for s in ids if sources and s not in given]
        claims.append({**claim, "n": number, "not_given": not_given, "given_only": bool(ids) and not not_given})
    labels = ("high", "multi_source", "inference", "speculation")
    actions = answer.get("proposed_actions") or []
    return {"claims": claims, "given": given, "levers": levers[0] if levers else None,
            "numerical": [c["n"] for c in claims if c.get("numerical")],
            "citing": [c["n"] for c in claims if c.get("numerical") and c["given_only"]],
            "by_confidence": {label: [c["n"] for c in claims if c.get("confidence") == label] for label in labels},
            "off_levers": [a for a in actions if levers and levers[0] is not None
                           and a.get("action_type") not in levers[0]]}


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


def _held(view: dict) -> dict:
    """The form's text for what a question row holds; the claims count, when none is stored yet,
    filled in from the stored answer's claims (none when the answer broke the contract; the
    reviewer confirms or corrects it)."""
    row, answer = view["row"], view["answer"]
    held = {name: reviewing.as_text(row.get(name)) for name in FORM_FIELDS}
    if not held["total_claims"] and answer:
        held["total_claims"] = str(len(view["claims"]))
    return held


def _focus(view: dict, values: dict, problems: dict) -> str | None:
    """The field that takes the focus: the first with a problem, else the first of the reviewer's
    numbers still empty (the claims count aside: it comes filled in), else the first number."""
    asked = [name for name in NUMBERS if name in view["asked"]]
    for name in asked:
        if name in problems:
            return name
    if "reviewer_comments" in problems:
        return "reviewer_comments"
    empty = [name for name in asked if name != "total_claims" and not values.get(name)]
    return (empty or [n for n in asked if n != "total_claims"] or asked or [None])[0]


def _form_page(site: Site, request: Request, session: Session, view: dict, values: dict, problems: dict | None = None,
               error: str | None = None, status: int = 200, notice: str | None = None,
               stored: dict | None = None) -> Response:
    order = [*NUMBERS, "reviewer_comments"]
    problems = dict(sorted((problems or {}).items(), key=lambda item: order.index(item[0])))
    session.shown[(str(view["run"]["eval_run_id"]), view["row"]["question_id"])] = view
    return site.page(request, "question.html", {**view, "values": values, "problems": problems or {}, "error": error,
                                                "notice": notice, "stored": stored or {},
                                                "focus": _focus(view, values, problems or {}),
                                                "comment_limit": reviewing.COMMENT_LIMIT}, status, session)


def _question_path(run_id, question_id: str) -> str:
    return f"/runs/{run_id}/questions/{question_id}"


def _kept_save(form) -> tuple[str, str]:
    """Where a save's form is offered back, and what it is (site.signed_in's keeps)."""
    run_id = run_id_of(str(form.get("eval_run_id", "")))
    question_id = str(form.get("question_id", ""))
    if not question_id.replace("-", "").isalnum():
        raise Refused(404, f"no question {question_id!r}")
    return _question_path(run_id, question_id), f"your scores for {question_id}"


def _kept_sign_off(form) -> tuple[str, str]:
    run_id = run_id_of(str(form.get("eval_run_id", "")))
    return f"/runs/{run_id}/sign-off", "your sign-off"


def routes(site: Site) -> list[Route]:
    """The reviewer's routes (a run's own page is shared with readers: see app.py)."""

    @site.signed_in("reviewer")
    async def queue(request: Request, session: Session, form) -> Response:
        return site.page(request, "queue.html", await site.in_db(session, queue_view), session=session)

    @site.signed_in("reviewer")
    async def question(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(request.path_params["run_id"])
        question_id = request.path_params["question_id"]
        saved = request.query_params.get("saved")
        view = await site.in_db(session, lambda c: question_view(c, run_id, question_id, saved))
        offered = session.offered.pop(_question_path(run_id, question_id), None)
        if offered is not None:
            values = {name: str(offered.get(name, "")) for name in FORM_FIELDS}
            _, problems = check_form(values, view["row"])
            return _form_page(site, request, session, view, values, problems,
                              notice="Not saved yet: what you typed before is filled in below. Check it, then save.")
        return _form_page(site, request, session, view, _held(view))

    @site.signed_in("reviewer", keeps=_kept_save)
    async def save(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(str(form.get("eval_run_id", "")))
        question_id = str(form.get("question_id", ""))
        entered = {name: str(form.get(name, "")) for name in FORM_FIELDS}
        try:
            shown = int(str(form.get(SHOWN_FIELD, "0")))
        except ValueError:
            shown = 0
        try:
            view = await site.in_db(session, lambda c: question_view(c, run_id, question_id))
        except (Unavailable, psycopg.OperationalError) as exc:
            view = session.shown.get((str(run_id), question_id))
            if view is None:
                raise
            return _form_page(site, request, session, view, entered, error=unavailable_message(exc), status=503)
        values, problems = check_form(entered, view["row"])
        if problems:
            return _form_page(site, request, session, view, entered, problems,
                              "not saved: correct the fields marked below", 400)
        changes = reviewing.changes(values, view["row"])

        def write(conn: psycopg.Connection):
            reviewing.save(conn, run_id, question_id, changes, shown)
            # Their numbers are saved: now the judges' drafts and the reference answer may be shown (recorded).
            store.show_suggestions(conn, run_id, question_id)
            reviewing.show_reference(conn, run_id, question_id)
            return store.review_questions(conn, run_id)

        try:
            questions = await site.in_db(session, write)
        except reviewing.Changed as exc:
            fresh = await site.in_db(session, lambda c: question_view(c, run_id, question_id))
            return _form_page(site, request, session, fresh, entered, error=f"not saved: {exc}. What you typed is "
                              "below, and beside each field what is stored now: save again to replace it with yours.",
                              status=409, stored=_held(fresh))
        except (Unavailable, psycopg.OperationalError) as exc:
            return _form_page(site, request, session, view, entered, error=unavailable_message(exc), status=503)
        except psycopg.Error as exc:
            status = 403 if isinstance(exc, psycopg.errors.InsufficientPrivilege) else 409
            fresh = await site.in_db(session, lambda c: question_view(c, run_id, question_id))
            return _form_page(site, request, session, fresh, entered, error=f"refused by the database: {db.explain(exc)}",
                              status=status)
        following = next_needing(questions, question_id)
        if following is None:
            return RedirectResponse(f"/runs/{run_id}?m=all-scored&saved={question_id}", status_code=303)
        return RedirectResponse(f"{_question_path(run_id, following)}?m=saved&saved={question_id}", status_code=303)

    @site.signed_in("reviewer")
    async def reveal(request: Request, session: Session, form) -> Response:
        run_id = run_id_of(str(form.get("eval_run_id", "")))
        question_id = str(form.get("question_id", ""))
        await site.in_db(session, lambda c: question_view(c, run_id, question_id))  # 404 unless it is theirs
        try:
            await site.in_db(session, lambda c: store.show_suggestions(c, run_id, question_id))
        except psycopg.OperationalError:
            raise
        except psycopg.Error as exc:
            raise Refused(403, f"refused by the database: {db.explain(exc)}") from None
        return RedirectResponse(f"{_question_path(run_id, question_id)}#suggestions", status_code=303)

    def sign_off_view(conn: psycopg.Connection, run_id: UUID) -> dict:
        view = run_view(conn, run_id)
        earlier = one(conn, BRAIN_EVAL["review_run"], {"eval_run_id": run_id}) or {}
        return {**view, "dimensions": view["run"]["dimensions"] or [], "earlier": earlier}

    @site.signed_in("reviewer", keeps=_kept_sign_off)
    async def sign_off(request: Request, session: Session, form) -> Response:
        # From the path, or from the form when it is a kept one handled after a sign-in.
        run_id = run_id_of(request.path_params.get("run_id") or str(form.get("eval_run_id", "")))
        view = await site.in_db(session, lambda c: sign_off_view(c, run_id))
        dimensions, earlier = view["dimensions"], view["earlier"]
        if request.method == "GET":
            offered = session.offered.pop(f"/runs/{run_id}/sign-off", None)
            hours = str(offered.get("hours", "")) if offered else reviewing.as_text(earlier.get("signed_off_hours"))
            notes = ({d["key"]: str(offered.get(f"note_{d['key']}", "")) for d in dimensions} if offered
                     else dict(earlier.get("signed_off_notes") or {}))
            return site.page(request, "sign_off.html", {**view, "hours": hours, "notes": notes, "problem": None,
                                                        "kept": offered is not None}, session=session)
        hours = str(form.get("hours", "")).strip()
        notes = {d["key"]: str(form.get(f"note_{d['key']}", "")).strip() for d in dimensions}
        problem, status = None, 400
        try:
            number = reviewing.parse_hours(hours)
        except reviewing.Invalid as exc:
            problem = f"hours: {exc}"
        if problem is None:
            kept = {k: v for k, v in notes.items() if v}
            try:
                await site.in_db(session, lambda c: store.sign_off_run(c, run_id, number, kept or None))
            except (Unavailable, psycopg.OperationalError) as exc:
                problem, status = unavailable_message(exc), 503
            except psycopg.Error as exc:
                problem, status = f"refused by the database: {db.explain(exc)}", 409
        if problem:
            return site.page(request, "sign_off.html", {**view, "hours": hours, "notes": notes, "problem": problem,
                                                        "kept": False}, status, session)
        return RedirectResponse(f"/runs/{run_id}?m=signed-off", status_code=303)

    return [
        Route("/queue", queue),
        Route("/runs/{run_id}/questions/{question_id}", question),
        Route("/runs/{run_id}/sign-off", sign_off, methods=["GET", "POST"]),
        Route("/review/save", save, methods=["POST"]),
        Route("/review/suggestions", reveal, methods=["POST"]),
    ]
