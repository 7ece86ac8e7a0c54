"""The guided review in the terminal (issue 13): the reviewer's queue, and a walk through a run's
questions that shows each question, the brain's answer and its automatic scores, asks for the
reviewer's fields, checks them, and saves each question in its own transaction as the reviewer's
own role, so an interrupted review loses nothing and the next walk resumes where it stopped.

Blind by default: a question's judge suggestions are asked for (store.show_suggestions, which the
database records) only after the reviewer's numbers for it are saved, unless show_first; its
reference answer (expected findings, pass criteria) likewise, always after. Each is recorded in
the saving transaction and read in the next one (the database shows them only then).

What is typed is never lost: when the database cannot be reached, or the connection drops, the
walk keeps the question's answers, says so, and tries again (after 1, 2, 4 ... up to 30 seconds,
for retry_for seconds); Ctrl-C then stops it, printing the answers not saved. A question someone
changed since it was shown (another terminal, the web form) is not overwritten: the walk says who
changed what and asks whether to save the reviewer's values over it.

No click here: the walk talks to a Console (say, ask) that the command line supplies."""

from __future__ import annotations

import contextlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol
from uuid import UUID

import psycopg

from evalledger.core import db
from evalledger.core.reading import dicts
from evalledger.core.errors import EvalledgerError

from . import reviewing, store
from .reviewing import FIELDS, Invalid, as_text, asked_fields, changes, check_entry, parse_hours, parse_value

# The prompt of each reviewer field, in the order a reviewer enters them.
LABELS = {
    "hallucinations_detected": "hallucinations detected",
    "total_claims": "total claims",
    "staleness_correctly_recognized": "staleness recognised (yes/no)",
    "diagnosis_accuracy_score": "diagnosis accuracy (0, 0.5 or 1)",
    "narrative_coherence_rating": "narrative coherence (1-5)",
    "reviewer_comments": "comments (optional)",
}
SOURCES_KEY = "s"
RETRY_FOR = 600.0  # seconds a walk keeps trying to reach the database before it gives up


class Console(Protocol):
    """Where the walk prints and asks: the command line's prompts, or a test's."""

    def say(self, text: str = "") -> None:
        """Print one line (or several)."""

    def ask(self, label: str, default: str = "") -> str:
        """The reviewer's answer to label ("" when they only press Enter and default is ""; default
        otherwise). An interrupt (Ctrl-C, end of input) raises, and the walk stops there."""


# -- reading --------------------------------------------------------------------------------------


class Unreachable(EvalledgerError):
    """The database could not be reached, or the connection dropped: that step saved nothing."""


@contextlib.contextmanager
def _connect(as_role: str | None) -> Iterator[psycopg.Connection]:
    """A transaction as the reviewer: as_role (SET LOCAL ROLE) when given, else the login itself.
    Unreachable when the server cannot be reached or the connection drops on the way."""
    try:
        conn = db.connect(None)
    except EvalledgerError as exc:  # without a role, connect fails only to reach the server
        raise Unreachable(str(exc)) from None
    try:
        with conn.transaction():
            if as_role:
                db.set_local_role(conn, as_role)
            yield conn
    except psycopg.OperationalError as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise Unreachable(f"the connection to the database dropped: {text}") from None
    except psycopg.Error as exc:
        raise db.explain(exc) from None
    finally:
        conn.close()


def waiting(question: dict) -> list[str]:
    """The reviewer's fields a question row still needs (the automatic ones are not theirs)."""
    return [f for f in question["needs"] if f in FIELDS]


@dataclass(frozen=True)
class Me:
    """The current login as a reviewer."""

    role_name: str
    reviewer_user_id: UUID | None


def queue(as_role: str | None) -> tuple[Me, list[dict]]:
    """Who the current reviewer is, and the open runs waiting for them, oldest first, each with
    `questions_waiting`: the ids of its questions that still need a field of theirs."""
    with _connect(as_role) as conn:
        me = Me(**dicts(conn, store.QUERIES["review_me"])[0])
        runs = store.review_queue(conn)
        for run in runs:
            run["questions_waiting"] = [q["question_id"] for q in store.review_questions(conn, run["eval_run_id"])
                                        if waiting(q)]
    return me, runs


# -- showing --------------------------------------------------------------------------------------


def _percent(value) -> str:
    return f"{float(value):g}%"


def question_lines(question: dict, answer: dict | None, position: int | None = None,
                   total: int | None = None) -> list[str]:
    """The question, the brain's answer (each claim with its confidence and cited sources) and the
    automatic scores: what the walk and `review show` print."""
    stale = "  STALE FIXTURE" if question["uses_stale_fixture"] else ""
    where = f"  ({position} of {total})" if position else ""
    lines = [f"{question['question_id']}  {question['question_type']}{stale}{where}"]
    if answer is None:
        lines.append("  (no answer stored for this question)")
    else:
        if answer["question_text"]:
            lines.append(f"  question: {answer['question_text']}")
        if answer["contract_error"]:
            lines.append(f"  answer breaks the contract ({answer['contract_error']}): {answer['narrative'][:300]}")
        else:
            lines.append(f"  answer: {answer['narrative']}")
            claims = answer["claims"] or []
            numerical = sum(1 for c in claims if c.get("numerical"))
            lines.append(f"  claims: {len(claims)} ({numerical} numerical)")
            for number, claim in enumerate(claims, start=1):
                cited = ", ".join(claim.get("source_ids") or []) or "no source"
                lines.append(f"    {number}. [{claim.get('confidence')}] {claim.get('text')}  <- {cited}")
            for action in answer["proposed_actions"] or []:
                lines.append(f"    action {action.get('action_type')}: {action.get('description')}")
    d = question["confidence_distribution"]
    levers = "" if question["lever_mapping_violations"] is None else \
        f", lever violations {question['lever_mapping_violations']}"
    automatic = f"  automatic: citation rate {float(question['citation_rate']):g}"
    if d:
        automatic += (f", confidence high {_percent(d['high_confidence_pct'])} / multi-source "
                      f"{_percent(d['multi_source_pct'])} / inference {_percent(d['inference_pct'])} / speculation "
                      f"{_percent(d['speculation_pct'])}")
    lines.append(automatic + levers)
    return lines


def cited(answer: dict | None) -> list[str]:
    """The source ids the answer's claims cite, in first-cited order."""
    found: list[str] = []
    for claim in (answer or {}).get("claims") or []:
        for source in claim.get("source_ids") or []:
            if source not in found:
                found.append(source)
    return found


def source_lines(sources: list[dict], ids: list[str]) -> list[str]:
    """The text of the cited sources: title, as-of date, stale flag and data rows."""
    if not sources:
        return ["  no source text is stored for this question (the run was recorded elsewhere)"]
    if not ids:
        return ["  the answer cites no source"]
    by_id = {s["id"]: s for s in sources}
    lines = []
    for source_id in ids:
        source = by_id.get(source_id)
        if source is None:
            lines.append(f"  source {source_id}: not one of the question's sources")
            continue
        stale = ", STALE" if source.get("stale") else ""
        lines.append(f"  source {source_id}: {source.get('title', '')} (as of {source.get('as_of')}{stale})")
        lines.extend(f"    {json.dumps(row, sort_keys=True)}" for row in source.get("data") or [])
    return lines


def suggestion_lines(drafts: list[dict]) -> list[str]:
    """The judges' suggestions on one question: drafts, each judge's own, disagreement visible."""
    if not drafts:
        return ["  judges: no suggestions on this question"]
    lines = []
    for s in drafts:
        repeat = reviewing.repeat_label(s)
        who = (f"{s['model']}{f' ({repeat})' if repeat else ''}{' (the brain’s family)' if s['same_family'] else ''}"
               f"{' (recorded)' if s['recorded'] else ''}")
        if not s["contributes"]:
            lines.append(f"  judge {who}: no draft: {s['error_kind']}: {s['error_message'] or ''}".rstrip(": "))
            continue
        parts = [f"{s['total_claims']} claims", f"{len(s['unsupported_claims'])} unsupported"]
        if s["diagnosis_accuracy"] is not None:
            parts.append(f"diagnosis {float(s['diagnosis_accuracy']):g}")
        if s["staleness_recognised"] is not None:
            parts.append(f"staleness recognised: {'yes' if s['staleness_recognised'] else 'no'}")
        lines.append(f"  judge {who}: " + "; ".join(parts))
        lines.extend(f"      “{claim}”" for claim in s["unsupported_claims"])
        if s["notes"]:
            lines.append(f"      {s['notes']}")
    return lines


def reference_lines(reference: dict | None) -> list[str]:
    """A question's reference answer: its expected findings and pass criteria."""
    if not reference:
        return []
    findings = reference["expected_findings"] or ["(none named)"]
    lines = ["  the reference answer (now that your numbers are saved; recorded):"]
    lines += [f"    expected: {finding}" for finding in findings]
    lines.append(f"    pass criteria: {'; '.join(reviewing.criteria_text(reference['pass_criteria'])) or 'none'}")
    return lines


# -- the walk -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignOff:
    """What the walk signed off: the hours and the notes; or, when questions are still to score
    (left), nothing: a run is signed off once every question has the reviewer's numbers."""

    hours: float
    notes: dict
    left: list[str]


@dataclass
class Walk:
    """One guided review of a run by its reviewer: what it saved, so an interrupt can say so."""

    run_id: UUID
    console: Console
    as_role: str | None = None
    show_first: bool = False
    clock: Callable[[], float] = time.monotonic
    saved: list[str] = field(default_factory=list)
    sleep: Callable[[float], None] = time.sleep
    retry_for: float | None = None  # default RETRY_FOR
    # The question whose typed answers are not saved yet, and the answers: what an interrupt prints.
    unsaved: tuple[str, dict] | None = None
    _answers: dict | None = None
    _sources: dict = field(default_factory=dict)
    _shown: dict = field(default_factory=dict)

    # -- database steps, each its own transaction, each tried again while the database is away --

    def _retrying(self, step: Callable[[], object], what: str) -> object:
        """step(), tried again while the database cannot be reached (what: what is kept meanwhile)."""
        started, delay, told = self.clock(), 1.0, False
        patience = RETRY_FOR if self.retry_for is None else self.retry_for
        while True:
            try:
                result = step()
            except Unreachable as exc:
                if self.clock() - started + delay > patience:
                    raise Unreachable(f"{exc} (tried for {patience:g} s)") from None
                if not told:
                    self.console.say(f"  the database is not reachable ({exc}); {what} kept, trying again "
                                     f"until it is back (Ctrl-C stops)")
                    told = True
                self.sleep(delay)
                delay = min(delay * 2, 30.0)
                continue
            if told:
                self.console.say("  the database is back")
            return result

    def _read(self) -> tuple[dict, list[dict]]:
        def read():
            with _connect(self.as_role) as conn:
                found = dicts(conn, store.QUERIES["review_run"], {"eval_run_id": self.run_id})
                if not found:
                    raise EvalledgerError(f"no run {self.run_id} that you review"
                                          f"{f' (as {self.as_role})' if self.as_role else ''}")
                questions = store.review_questions(conn, self.run_id)
                versions = reviewing.versions(conn, self.run_id)
                answers = None if self._answers is not None else dicts(
                    conn, store.QUERIES["review_answers"], {"eval_run_id": self.run_id, "question_id": None})
            return found[0], questions, versions, answers

        run, questions, versions, answers = self._retrying(read, "nothing typed is")
        if answers is not None:
            self._answers = {a["question_id"]: a for a in answers}
        for question in questions:
            question["last_entry"] = versions.get(question["question_id"], {}).get("last_entry", 0)
        return run, questions

    def _question(self, question_id: str) -> dict | None:
        return next((q for q in self._read()[1] if q["question_id"] == question_id), None)

    def _sources_of(self, question_id: str) -> list[dict]:
        if question_id not in self._sources:
            def read():
                with _connect(self.as_role) as conn:
                    return store.question_sources(conn, self.run_id, question_id)
            self._sources[question_id] = self._retrying(read, "your answers are")
        return self._sources[question_id]

    def _save(self, question: dict, values: dict) -> list[str] | None:
        """The changed values saved (the suggestions and the reference answer recorded as shown with
        them), unless someone changed the question since it was shown and the reviewer keeps what
        is stored: None then. Tried again while the database is away."""
        question_id, shown = question["question_id"], question.get("last_entry", 0)
        changed = changes(values, question)
        self.unsaved = (question_id, values)

        def write(seen: int):
            with _connect(self.as_role) as conn:
                reviewing.save(conn, self.run_id, question_id, changed, seen)
                if not self.show_first:
                    store.show_suggestions(conn, self.run_id, question_id)
                with conn.transaction():  # a reference needs every number; one that cannot show is skipped
                    try:
                        reviewing.show_reference(conn, self.run_id, question_id)
                    except psycopg.errors.ObjectNotInPrerequisiteState:
                        pass

        while True:
            try:
                self._retrying(lambda: write(shown), f"your answers to {question_id} are")
                break
            except reviewing.Changed as exc:
                self.console.say(f"  not saved: {exc}")
                keep = self.console.ask("  save yours over it (y), or keep what is stored (n)?", "n").strip().lower()
                if keep not in ("y", "yes"):
                    self.unsaved = None
                    self.console.say(f"  {question_id}: kept as stored")
                    return None
                latest = self._question(question_id)
                shown = latest["last_entry"] if latest else shown
                changed = changes(values, latest or question)
        self.unsaved = None
        if changed:
            self.saved.append(question_id)
        after = self._question(question_id)
        return waiting(after) if after else []

    def _drafts_and_reference(self, question_id: str) -> tuple[list[dict], dict | None]:
        """The judges' drafts and the reference answer of a question as the database shows them now
        (a transaction after the one that recorded them shown: only then does it show them)."""
        def read():
            with _connect(self.as_role) as conn:
                return (reviewing.drafts(conn, self.run_id, question_id),
                        reviewing.reference(conn, self.run_id, question_id))
        return self._retrying(read, "nothing typed is")

    def _show_suggestions(self, question_id: str, when: str) -> None:
        """Record the question's suggestions shown (before scoring: --show-suggestions), then show them."""
        def show():
            with _connect(self.as_role) as conn:
                store.show_suggestions(conn, self.run_id, question_id)
        self._retrying(show, "nothing typed is")
        self._say_drafts(self._drafts_and_reference(question_id)[0], when)

    def _say_drafts(self, drafts: list[dict], when: str) -> None:
        self.console.say(f"  the judges' suggestions{when}:")
        for line in suggestion_lines(drafts):
            self.console.say(line)

    def _after_save(self, question_id: str) -> None:
        """What the saving transaction recorded as shown: the drafts (blind review) and the reference."""
        drafts, reference = self._drafts_and_reference(question_id)
        if not self.show_first:
            self._say_drafts(drafts, " (now that your numbers are saved)")
        for line in reference_lines(reference):
            self.console.say(line)

    # -- asking --

    def _ask(self, question: dict, name: str, default: str) -> object:
        while True:
            text = self.console.ask(LABELS[name], default)
            if FIELDS[name] != "text" and text.strip().lower() == SOURCES_KEY:
                answer = self._answers.get(question["question_id"])
                for line in source_lines(self._sources_of(question["question_id"]), cited(answer)):
                    self.console.say(line)
                continue
            try:
                value = parse_value(name, text)
                if value is None and FIELDS[name] != "text":
                    raise Invalid("an answer is needed")
                return value
            except Invalid as exc:
                self.console.say(f"  not saved: {exc}; enter it again")

    def _defaults(self, question: dict) -> dict:
        defaults = {name: as_text(question[name]) for name in FIELDS}
        answer = self._answers.get(question["question_id"])
        if not defaults["total_claims"] and answer and not answer["contract_error"]:
            defaults["total_claims"] = str(len(answer["claims"] or []))
        return defaults

    def review_question(self, question: dict, position: int, total: int) -> None:
        """Show one question, ask its fields until they hold together, save the changed ones."""
        qid = question["question_id"]
        self.console.say("")
        for line in question_lines(question, self._answers.get(qid), position, total):
            self.console.say(line)
        if self.show_first:
            self._show_suggestions(qid, " (shown first: --show-suggestions)")
        defaults = self._defaults(question)
        values: dict = {}
        for name in asked_fields(question):
            values[name] = self._ask(question, name, defaults[name])
            while name == "total_claims":
                try:
                    check_entry(values)
                    break
                except Invalid as exc:
                    self.console.say(f"  not saved: {exc}; enter both again")
                    values = {n: self._ask(question, n, defaults[n]) for n in ("hallucinations_detected", name)}
        if changes(values, question):
            needs = self._save(question, values)
            if needs is None:
                return
            self.console.say(f"  saved {qid}: {reviewing.outcome(needs)}")
        else:
            self._save(question, {})  # unchanged: only what it shows is recorded
            self.console.say(f"  {qid}: unchanged")
        self._after_save(qid)

    def run(self) -> SignOff:
        """The whole walk: the questions still needing something, then any to revisit, then the
        sign-off (calibration notes per dimension, hours)."""
        started = self.clock()
        run, questions = self._read()
        if run["completed_at"] is not None:
            raise EvalledgerError(f"run {self.run_id} is complete: its review is final")
        total = len(questions)
        todo = [(i, q) for i, q in enumerate(questions, start=1) if waiting(q)]
        blind = ("the judges' suggestions on --show-suggestions: each question's suggestions show before you score it"
                 if self.show_first else "blind: each question's judge suggestions show once your numbers are saved")
        self.console.say(f"run {self.run_id}: {run['brain_under_test']}, catalog {run['question_catalog_version']}, "
                         f"{total} questions, {len(todo)} to score")
        self.console.say(f"{blind}; type {SOURCES_KEY} at a number prompt for the text of the sources the answer "
                         "cites; Ctrl-C stops, and what is saved stays saved")
        for position, question in todo:
            self.review_question(question, position, total)
        ids = [q["question_id"] for q in questions]
        while True:
            self.console.say("")
            wanted = self.console.ask("revisit a question (its id; Enter to sign off)", "").strip()
            if not wanted:
                break
            matching = [i for i in ids if i.lower() == wanted.lower()]
            if not matching:
                self.console.say(f"  no question {wanted} in this run")
                continue
            self.review_question(self._question(matching[0]), ids.index(matching[0]) + 1, total)
        return self.sign_off(run, started)

    def sign_off(self, run: dict, started: float) -> SignOff:
        """Ask the calibration notes per dimension and the hours spent; sign the run off."""
        left = [q["question_id"] for q in self._read()[1] if waiting(q)]
        if left:  # the database would refuse the sign-off (brain_eval_run_review_admit_v1)
            return SignOff(0, {}, left)
        self.console.say("calibration notes per rubric dimension (Enter for none):")
        earlier = run["signed_off_notes"] or {}
        notes = {}
        for dimension in run["dimensions"] or []:
            text = self.console.ask(f"  {dimension['key']}", earlier.get(dimension["key"], "")).strip()
            if text:
                notes[dimension["key"]] = text
        before = float(run["signed_off_hours"] or 0)
        spent = max(0.01, round(before + (self.clock() - started) / 3600, 2))
        while True:
            try:
                hours = parse_hours(self.console.ask("time spent on this run, hours", f"{spent:.2f}"))
                break
            except Invalid as exc:
                self.console.say(f"  not saved: {exc}; enter it again")
        self.unsaved = ("the sign-off", {"hours": hours, **notes})

        def sign():
            with _connect(self.as_role) as conn:
                store.sign_off_run(conn, self.run_id, hours, notes or None)
        self._retrying(sign, "your hours and notes are")
        self.unsaved = None
        return SignOff(hours, notes, left)
