"""A reviewer's numbers from a file (`review score RUN --from FILE`): checked line by line, then
written in one transaction as the reviewer's own role, so a bad line leaves nothing half-scored."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import psycopg

from evalledger.core.db import explain
from evalledger.core.errors import EvalledgerError, read_user_text

from . import store

# The reviewer-scored fields, in the order a reviewer enters them, with how each is read from text.
FIELDS = {
    "hallucinations_detected": "count", "total_claims": "count", "staleness_correctly_recognized": "yes/no",
    "diagnosis_accuracy_score": "0, 0.5 or 1", "narrative_coherence_rating": "1-5", "reviewer_comments": "text",
}


@dataclass(frozen=True)
class Scored:
    """One line of a review file: where it is, its question and the fields it sets."""

    line: int
    question_id: str
    fields: dict


def checked_value(field: str, raw, where: str):
    """raw (from JSON, CSV or a form) as the field's value, or an EvalledgerError naming where."""
    if raw is None or raw == "":
        return None
    kind = FIELDS[field]
    text = json.dumps(raw)
    if kind == "text":
        if not isinstance(raw, str):
            raise EvalledgerError(f"{where}: {field}: expected text, got {text}")
        return raw
    if kind == "yes/no":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("yes", "true", "no", "false"):
            return raw.strip().lower() in ("yes", "true")
        raise EvalledgerError(f"{where}: {field}: expected yes or no, got {text}")
    try:
        number = float(raw) if isinstance(raw, str) else raw
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise EvalledgerError(f"{where}: {field}: expected {kind}, got {text}")
    if kind == "0, 0.5 or 1":
        if number not in (0, 0.5, 1):
            raise EvalledgerError(f"{where}: {field}: expected 0, 0.5 or 1, got {text}")
        return number
    if number != int(number):
        raise EvalledgerError(f"{where}: {field}: expected a whole number, got {text}")
    if kind == "1-5" and not 1 <= number <= 5:
        raise EvalledgerError(f"{where}: {field}: expected 1 to 5, got {text}")
    if kind == "count" and number < 0:
        raise EvalledgerError(f"{where}: {field}: expected 0 or more, got {text}")
    return int(number)


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
        value = checked_value(name, raw, f"{where}: {question}")
        if value is not None:
            fields[name] = value
    if not fields:
        raise EvalledgerError(f"{where}: {question}: nothing to score")
    return Scored(line, question, fields)


def read_scores(path: Path) -> list[Scored]:
    """The lines of a .jsonl (one object per line) or .csv (a header naming question_id and the
    fields) review file, each checked; an EvalledgerError names the first bad line."""
    text = read_user_text(path)
    seen: dict[str, int] = {}
    scored = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames or "question_id" not in reader.fieldnames:
            raise EvalledgerError(f"{path}:1: the header must name question_id and the fields to score")
        for values in reader:
            if None in values:
                raise EvalledgerError(f"{path}:{reader.line_num}: more cells than the header names")
            scored.append(_row(path, reader.line_num, values, seen))
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                values = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise EvalledgerError(f"{path}:{line}: not JSON: {exc.msg}") from None
            if not isinstance(values, dict):
                raise EvalledgerError(f"{path}:{line}: expected an object with question_id and the fields")
            scored.append(_row(path, line, values, seen))
    else:
        raise EvalledgerError(f"{path}: a review file is .csv or .jsonl")
    if not scored:
        raise EvalledgerError(f"{path}: no questions to score")
    return scored


def apply_scores(conn: psycopg.Connection, run_id: UUID, path: Path, scored: list[Scored]) -> dict[str, bool | None]:
    """Each line's fields set on its question, in conn's transaction (as the reviewer's role);
    {question_id: question_passed}. A refusal names the line and rolls everything back."""
    passed = {}
    for item in scored:
        try:
            with conn.transaction():
                passed[item.question_id] = store.score_question(conn, run_id, item.question_id, item.fields)
        except psycopg.Error as exc:
            raise EvalledgerError(f"{path}:{item.line}: {item.question_id}: {explain(exc)}") from None
        except EvalledgerError as exc:
            raise EvalledgerError(f"{path}:{item.line}: {exc}") from None
    return passed
