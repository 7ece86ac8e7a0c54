"""A reviewer's entry, wherever it is typed: the reviewer's fields, how each is read and checked,
which a question asks, what changed. The file (`review score RUN --from FILE`), the terminal walk
(guided.py) and the web form (web/review.py) all read values through here; the database still
decides (its CHECKs refuse what gets past), this only asks again before anything is sent.

A file is checked line by line, then written in one transaction as the reviewer's own role, so a
bad line leaves nothing half-scored. The walk and the web form save a question only if nobody
changed it since it was shown to them (`save`, by the review trail's last entry then), and say
who did when someone had."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from uuid import UUID

import psycopg

from evalledger.core.db import explain
from evalledger.core.errors import EvalledgerError
from evalledger.core.reading import dicts

from . import store

# The reviewer-scored fields, in the order a reviewer enters them, with how each is read from text.
FIELDS = {
    "hallucinations_detected": "count", "total_claims": "count", "staleness_correctly_recognized": "yes/no",
    "diagnosis_accuracy_score": "0, 0.5 or 1", "narrative_coherence_rating": "1-5", "reviewer_comments": "text",
}
# The longest comment, in characters; the database CHECKs the same (brain_eval_question_score_comment_length).
COMMENT_LIMIT = 4000


class Invalid(ValueError):
    """A value a reviewer gave that is not stored: the message says what is expected."""


@dataclass(frozen=True)
class Scored:
    """One line of a review file: where it is, its question and the fields it sets."""

    line: int
    question_id: str
    fields: dict


def parse_value(name: str, raw):
    """raw (text a reviewer typed, or a JSON value from a file) as field name's value; None when
    nothing was given (an empty comment included); Invalid when it is not what the field takes."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    kind = FIELDS[name]
    shown = repr(raw.strip()) if isinstance(raw, str) else json.dumps(raw)
    if kind == "text":
        if not isinstance(raw, str):
            raise Invalid(f"{shown}: expected text")
        if len(raw) > COMMENT_LIMIT:
            raise Invalid(f"{len(raw)} characters: a comment is at most {COMMENT_LIMIT} "
                          f"(shorten it by {len(raw) - COMMENT_LIMIT})")
        return raw
    if kind == "yes/no":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("y", "yes", "true", "n", "no", "false"):
            return raw.strip().lower() in ("y", "yes", "true")
        raise Invalid(f"{shown}: answer yes or no")
    if isinstance(raw, bool):
        number = math.nan
    elif isinstance(raw, str):
        try:
            number = float(raw)
        except ValueError:
            number = math.nan
    else:
        number = float(raw) if isinstance(raw, (int, float)) else math.nan
    if kind == "0, 0.5 or 1":
        if number not in (0, 0.5, 1):
            raise Invalid(f"{shown}: diagnosis accuracy is 0 (wrong), 0.5 (partly right) or 1 (right)")
        return 0.5 if number == 0.5 else int(number)
    if kind == "1-5" and number not in (1, 2, 3, 4, 5):
        raise Invalid(f"{shown}: a rating is a whole number from 1 (incoherent) to 5")
    if not math.isfinite(number) or number != int(number):
        raise Invalid(f"{shown}: expected a whole number")
    if number < 0:
        raise Invalid(f"{shown}: expected 0 or more")
    return int(number)


def parse_hours(text: str) -> float:
    """Hours spent on a run (self-reported) as a number from 0 to 999.99, to two decimals (the
    column's scale), or Invalid."""
    try:
        hours = float(text.strip())
    except ValueError:
        if "," in text and "." not in text:
            raise Invalid(f"{text.strip()!r}: write hours with a dot, e.g. {text.strip().replace(',', '.')}") from None
        raise Invalid(f"{text.strip()!r}: expected hours, e.g. 1.5") from None
    if not math.isfinite(hours) or hours < 0 or round(hours, 2) > 999.99:
        raise Invalid(f"{text.strip()!r}: expected hours from 0 to 999.99")
    return round(hours, 2)


def check_entry(values: dict) -> None:
    """Invalid when a question's values do not hold together: more hallucinations than claims."""
    found, claims = values.get("hallucinations_detected"), values.get("total_claims")
    if found is not None and claims is not None and found > claims:
        raise Invalid(f"{found} hallucinations but {claims} claims: a hallucination is one of the claims")


def asked_fields(question: dict) -> list[str]:
    """The reviewer's fields asked on a question (a review_questions row): the counts, coherence
    and comments always; staleness on a stale-fixture question; diagnosis where its type has one
    (the rubric says so through `needs`), or where it holds one already."""
    asked = ["hallucinations_detected", "total_claims"]
    if question["uses_stale_fixture"]:
        asked.append("staleness_correctly_recognized")
    if "diagnosis_accuracy_score" in question["needs"] or question["diagnosis_accuracy_score"] is not None:
        asked.append("diagnosis_accuracy_score")
    return [*asked, "narrative_coherence_rating", "reviewer_comments"]


def as_text(value) -> str:
    """A stored value as a reviewer types it ("" for none)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (Decimal, float)):
        return f"{float(value):g}"
    return str(value)


def changes(values: dict, row: dict) -> dict:
    """The given values that differ from what the question row holds: only these are written, so
    the trail records what the reviewer changed, not what it confirmed."""
    return {name: value for name, value in values.items()
            if value is not None and (row.get(name) is None or as_text(row[name]) != as_text(value))}


# How each pass criterion of a catalog question reads, for the reference answer.
CRITERIA = {"max_hallucinations": "at most {} hallucinations", "min_citation_rate": "citation rate at least {}",
            "min_diagnosis_accuracy": "diagnosis accuracy at least {}", "min_narrative_coherence": "coherence at least {}",
            "max_lever_violations": "at most {} lever violations"}


def criteria_text(criteria: dict) -> list[str]:
    """A catalog question's pass criteria (expected findings aside) as a reviewer reads them."""
    return [CRITERIA.get(name, name.replace("_", " ") + ": {}").format(as_text(value))
            for name, value in sorted(criteria.items()) if name != "expected_findings"]


def carried_notes(earlier: dict | None, given: dict) -> dict:
    """A new sign-off's calibration notes: the earlier sign-off's, with the dimensions given now
    replaced (a sign-off that names no note keeps the notes it follows)."""
    return {**(earlier or {}), **given}


@dataclass(frozen=True)
class Change:
    """One value of a question entered by someone (the review trail's entry)."""

    field: str
    value: object
    entered_by: str
    acting_role: str
    entered_at: datetime

    def describe(self) -> str:
        """E.g. "total claims 5 by alice at 2026-06-01 14:03:12 UTC"."""
        value = "cleared" if self.value is None else as_text(self.value)
        role = "" if self.acting_role == self.entered_by else f" (acting as {self.acting_role})"
        when = self.entered_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"{self.field.replace('_', ' ')} {value} by {self.entered_by}{role} at {when}"


class Changed(EvalledgerError):
    """A question changed since it was shown to the reviewer saving it: nothing was saved."""

    def __init__(self, question_id: str, changes: list[Change]) -> None:
        self.question_id = question_id
        self.changes = changes
        super().__init__(f"{question_id} changed since it was shown to you: "
                         f"{'; '.join(c.describe() for c in changes)}. Nothing of yours was saved")


def versions(conn: psycopg.Connection, run_id: UUID, question_id: str | None = None) -> dict[str, dict]:
    """Per question of a run (or only question_id): its last trail entry (what a save says it was
    shown) and whether its reference answer was shown."""
    return {row["question_id"]: row for row in dicts(conn, store.QUERIES["question_versions"],
                                                     {"eval_run_id": run_id, "question_id": question_id})}


def save(conn: psycopg.Connection, run_id: UUID, question_id: str, changed: dict,
         shown: int | None) -> list[str] | None:
    """The reviewer's changed values of a question written in conn's transaction, provided its trail
    has no entry after `shown` (its last entry when it was shown; None: unchecked): Changed, with
    who changed what, otherwise, and nothing written. What the question still needs (empty when
    whole), or None when nothing changed."""
    if shown is not None:
        conn.execute(store.QUERIES["lock_question"], {"eval_run_id": run_id, "question_id": question_id})
        newer = dicts(conn, store.QUERIES["entries_since"],
                      {"eval_run_id": run_id, "question_id": question_id, "since": shown})
        if newer:
            raise Changed(question_id, [Change(e["field"], e["value"], e["entered_by"], e["acting_role"],
                                               e["entered_at"]) for e in newer])
    if not changed:
        return None
    return store.score_question(conn, run_id, question_id, changed)


def show_reference(conn: psycopg.Connection, run_id: UUID, question_id: str):
    """Record that the reviewer, its numbers saved, is shown the question's reference answer (it
    reads from the next transaction on); when it was first shown, None for a run outside the harness."""
    return conn.execute(store.QUERIES["show_reference"], {"eval_run_id": run_id, "question_id": question_id}
                        ).fetchone()[0]


def reference(conn: psycopg.Connection, run_id: UUID, question_id: str) -> dict | None:
    """The question's reference answer once shown to the reviewer by an earlier transaction:
    {expected_findings, pass_criteria, shown_at}, else None."""
    return conn.execute(store.QUERIES["reference"], {"eval_run_id": run_id, "question_id": question_id}
                        ).fetchone()[0]


def drafts(conn: psycopg.Connection, run_id: UUID, question_id: str | None = None) -> list[dict]:
    """The judges' drafts on a run's questions (or one) as the review screens show them, by question,
    model and repeat: in a run of K > 1 repeats (--repeats K) each says its repeat_no and the run's
    repeats (K); in a run of one repeat neither, as before repeats. Only what the reader may read."""
    found = [d for d in dicts(conn, store.QUERIES["review_suggestions"], {"eval_run_id": run_id})
             if question_id is None or d["question_id"] == question_id]
    for draft in found:
        if draft["repeats"] == 1:
            del draft["repeat_no"], draft["repeats"]
    return found


def repeat_label(draft: dict) -> str:
    """Which of its judge's K drafts a draft is ("repeat 2 of 3"), empty in a run of one repeat."""
    return f"repeat {draft['repeat_no']} of {draft['repeats']}" if draft.get("repeats", 1) > 1 else ""


def _row(path: Path, line: int, values: dict, seen: dict) -> Scored:
    where = f"{path}:{line}"
    question = values.get("question_id")
    if not isinstance(question, str) or not question.strip():
        raise EvalledgerError(f"{where}: missing question_id")
    question = question.strip()
    if question in seen:
        raise EvalledgerError(f"{where}: {question} is scored twice (first on line {seen[question]})")
    seen[question] = line
    fields = {}
    for name, raw in values.items():
        if name == "question_id":
            continue
        if name not in FIELDS:
            raise EvalledgerError(f"{where}: {question}: unknown field {name!r} (a reviewer enters "
                                  f"{', '.join(FIELDS)})")
        try:
            value = parse_value(name, raw)
        except Invalid as exc:
            raise EvalledgerError(f"{where}: {question}: {name}: {exc}") from None
        if value is not None:
            fields[name] = value
    if not fields:
        raise EvalledgerError(f"{where}: {question}: nothing to score")
    return Scored(line, question, fields)


def read_scores(path: Path) -> list[Scored]:
    """The lines of a .jsonl (one object per line) or .csv (a header naming question_id and the
    fields) review file, each checked; an EvalledgerError names the first bad line. The file is
    read through the door (core/reader.py): a column or key given twice, a NUL or text that is
    not UTF-8 is refused by its line."""
    from evalledger.core import reader

    seen: dict[str, int] = {}
    scored = []
    if path.suffix.lower() == ".csv":
        table = reader.read_csv(path, "review file")
        if "question_id" not in table.columns:
            raise EvalledgerError(f"{path}:1: the header must name question_id and the fields to score")
        for line, values in table.rows:
            scored.append(_row(path, line, values, seen))
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        for line, values in reader.read_jsonl(path, "review file"):
            if not isinstance(values, dict):
                raise EvalledgerError(f"{path}:{line}: expected an object with question_id and the fields")
            scored.append(_row(path, line, values, seen))
    else:
        raise EvalledgerError(f"{path}: a review file is .csv or .jsonl")
    if not scored:
        raise EvalledgerError(f"{path}: no questions to score")
    return scored


def outcome(needs: list[str]) -> str:
    """What a saved question now is: complete, or what it still needs. Not whether it passes: the
    database shows a reviewer no verdict before the run completes."""
    return f"incomplete (still needs {', '.join(needs)})" if needs else "complete"


def apply_scores(conn: psycopg.Connection, run_id: UUID, path: Path, scored: list[Scored]) -> dict[str, list[str]]:
    """Each line's fields set on its question, in conn's transaction (as the reviewer's role);
    {question_id: the fields it still needs}. A refusal names the line and rolls everything back."""
    outcomes = {}
    for item in scored:
        try:
            with conn.transaction():
                outcomes[item.question_id] = store.score_question(conn, run_id, item.question_id, item.fields)
        except psycopg.Error as exc:
            raise EvalledgerError(f"{path}:{item.line}: {item.question_id}: {explain(exc)}") from None
        except EvalledgerError as exc:
            raise EvalledgerError(f"{path}:{item.line}: {exc}") from None
    return outcomes
