"""Question catalogs (issue 9): a versioned file of harness questions, checked whole before the
database sees it, loaded once and never changed (the database reads every question row from the
stored document)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evalledger.core import reader
from evalledger.core.errors import EvalledgerError
from evalledger.core.paths import package_path, read_package_text
from evalledger.core.queries import Queries

QUERIES = Queries(__package__)
SCHEMA_FILE = "schemas/question_catalog.v1.schema.json"
# Seed 002's question types, in its order.
QUESTION_TYPES = ("plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis",
                  "expansion_qualification", "handoff_briefing", "qbr_narrative")
DEMO_VERSION = "v28-2026Q2"
# A question's pass criteria as people read them, in this order.
CRITERIA = (("max_hallucinations", "hallucinations", "<="), ("min_citation_rate", "citation rate", ">="),
            ("min_diagnosis_accuracy", "diagnosis accuracy", ">="),
            ("min_narrative_coherence", "narrative coherence", ">="),
            ("max_lever_violations", "lever violations", "<="))
MAX_ERRORS_SHOWN = 20


class CatalogError(EvalledgerError):
    """A catalog file refused whole. Its message is one line (the first problem and how many there
    are); `lines` has every problem, one line each, naming file, line and field."""

    def __init__(self, path: Path, problems: list[tuple[int, str, str]]):
        self.path = path
        self.problems = sorted(problems)
        lines = [f"{path}:{line}: {where}: {message}" for line, where, message in self.problems[:MAX_ERRORS_SHOWN]]
        more = len(self.problems) - len(lines)
        self.lines = lines + ([f"{path}: ... and {more} more"] if more else [])
        count = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        super().__init__(f"{path}: catalog refused, nothing loaded ({count}): {lines[0]}")

    def summary(self) -> str:
        """The one line that follows the listed problems."""
        return (f"{self.path}: catalog refused, nothing loaded "
                f"({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}, listed above)")


def describe_criteria(criteria: dict) -> str:
    """'hallucinations <= 0, citation rate >= 0.9, ...': the criteria a question has, in a fixed order."""
    return ", ".join(f"{label} {op} {criteria[key]}" for key, label, op in CRITERIA if key in criteria)


def demo_catalog_path() -> Path:
    """The 30-question demo catalog shipped with evalledger."""
    return package_path("fixtures", f"catalog_{DEMO_VERSION}.json", package=__package__)


def schema() -> dict:
    """The catalog file's JSON Schema, as shipped in the package."""
    return json.loads(read_package_text(SCHEMA_FILE, package=__package__))


# Where each value of a JSON text is, and its JSONPath: the door's (core/reader.py).
json_lines, json_path = reader.json_lines, reader.json_path


# -- checking a file -------------------------------------------------------------------------------

def _schema_problems(document: Any) -> list[tuple[tuple, str]]:
    return reader.schema_problems(jsonschema.Draft202012Validator(schema()), document)


def _consistency_problems(document: dict) -> list[tuple[tuple, str]]:
    """What the schema cannot say: unique ids, and stale flags that agree with the sources."""
    problems = []
    first_seen: dict[str, int] = {}
    for i, question in enumerate(document.get("questions", [])):
        if not isinstance(question, dict):
            continue
        qid = question.get("id")
        if isinstance(qid, str):
            if qid in first_seen:
                problems.append(((("questions", i, "id")), f"question id {qid} already used by $.questions[{first_seen[qid]}]"))
            else:
                first_seen[qid] = i
        sources = question.get("sources") if isinstance(question.get("sources"), list) else []
        seen_sources: set[str] = set()
        for j, source in enumerate(sources):
            sid = source.get("id") if isinstance(source, dict) else None
            if isinstance(sid, str):
                if sid in seen_sources:
                    problems.append((("questions", i, "sources", j, "id"), f"source id {sid} used twice in this question"))
                seen_sources.add(sid)
        captures = (question.get("provenance") or {}).get("captures") if isinstance(question.get("provenance"), dict) else None
        seen_captures: set[int] = set()
        for j, capture in enumerate(captures if isinstance(captures, list) else []):
            cid = capture.get("id") if isinstance(capture, dict) else None
            if isinstance(cid, int) and not isinstance(cid, bool):
                if cid in seen_captures:
                    problems.append((("questions", i, "provenance", "captures", j, "id"),
                                     f"capture {cid} listed twice in this question"))
                seen_captures.add(cid)
            at = capture.get("created_at") if isinstance(capture, dict) else None
            if isinstance(at, str):
                try:
                    datetime.fromisoformat(at)
                except ValueError:
                    problems.append((("questions", i, "provenance", "captures", j, "created_at"),
                                     f"{json.dumps(at)} is not a time"))
        stale_sources = any(isinstance(s, dict) and s.get("stale") is True for s in sources)
        flag = question.get("uses_stale_fixture")
        if flag is True and not stale_sources:
            problems.append((("questions", i, "uses_stale_fixture"),
                             "a stale-fixture question needs a source marked \"stale\": true"))
        elif flag is False and stale_sources:
            problems.append((("questions", i, "uses_stale_fixture"),
                             "false, but a source is marked \"stale\": true: set it true or unmark the source"))
    return problems


def _refuse_blanks(document: Any, text: str, path: Path) -> None:
    """A draft (`catalog draft`) still holding a blank a person must fill is refused in one line,
    naming the file, the first blank's line, question and field, and how many are left."""
    from .drafting import BLANK, blanks

    found = list(blanks(document))
    if not found:
        return
    where, value = found[0]
    lines = json_lines(text)
    at = where
    while at not in lines:
        at = at[:-1]
    question = ""
    if len(where) >= 2 and where[0] == "questions" and isinstance(document, dict):
        entry = document["questions"][where[1]]
        qid = entry.get("id") if isinstance(entry, dict) else None
        question = f"question {qid if isinstance(qid, str) else '#' + str(where[1] + 1)}: "
    shown = value if len(value) <= 60 else value[:57] + "..."
    count = f"{len(found)} blank{'s' if len(found) != 1 else ''}"
    raise EvalledgerError(f"{path}:{lines[at]}: {question}{json_path(where)} is still blank ({json.dumps(shown)}): "
                          f"write every field marked \"{BLANK}\" ({count} left); nothing loaded")


def check_text(text: str, path: Path) -> dict:
    """The catalog document in text, or CatalogError listing every problem with its line and field."""
    # The door refuses what no catalog field can hold (a key twice, NaN, a NUL, a date that is none).
    try:
        document = reader.decode_json(text, str(path))
    except reader.InputError as exc:
        if exc.at and exc.at.startswith("column"):  # not JSON: listed like the catalog's other problems
            raise CatalogError(path, [(exc.line, exc.at, exc.detail)]) from None
        raise
    _refuse_blanks(document, text, path)
    problems = _schema_problems(document)
    if isinstance(document, dict):
        problems += _consistency_problems(document)
    if problems:
        lines = json_lines(text)

        def line(where: tuple) -> int:
            while where not in lines:
                where = where[:-1]
            return lines[where]

        raise CatalogError(path, [(line(where), json_path(where), message) for where, message in problems])
    return document


def check_file(path: Path) -> dict:
    """The catalog document in the file at path, checked whole."""
    return check_text(reader.read_text(path, "catalog file"), path)


# -- the ledger ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Loaded:
    """A catalog version as the ledger holds it, and whether this load added it."""

    catalog_version: str
    question_count: int
    document_sha256: str
    added: bool


def load(conn: psycopg.Connection, document: dict, source_file: str | None) -> Loaded:
    """Load a checked document; a version loaded before with the same content is left as it is,
    and with other content refused (a changed catalog is a new version)."""
    row = conn.execute(QUERIES["load_catalog"], {"document": Jsonb(document), "source_file": source_file}).fetchone()
    if row:
        return Loaded(*row, added=True)
    version, count, sha, same = conn.execute(
        QUERIES["catalog_loaded"], {"catalog_version": document["version"], "document": Jsonb(document)}).fetchone()
    if not same:
        raise EvalledgerError(f"catalog {version} is already loaded with other content (sha256 {sha[:12]}): "
                              "a loaded catalog never changes; give the changed one a new version")
    return Loaded(version, count, sha, added=False)


def catalogs(conn: psycopg.Connection) -> list[dict]:
    """Every loaded catalog version, oldest first, with its question and stale-fixture counts."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["list_catalogs"]).fetchall()


def questions(conn: psycopg.Connection, catalog_version: str) -> list[dict]:
    """The questions of one catalog version in catalog order; EvalledgerError when it is not loaded."""
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute(QUERIES["catalog_questions"], {"catalog_version": catalog_version}).fetchall()
    if not found:
        raise EvalledgerError(f"no catalog {catalog_version} is loaded (evalledger catalog list)")
    return found


def document(conn: psycopg.Connection, catalog_version: str) -> dict:
    """The stored document of one catalog version."""
    row = conn.execute(QUERIES["catalog_document"], {"catalog_version": catalog_version}).fetchone()
    if row is None:
        raise EvalledgerError(f"no catalog {catalog_version} is loaded (evalledger catalog list)")
    return row[0]


def provenance(conn: psycopg.Connection, catalog_version: str) -> dict[str, list[dict]]:
    """question_id -> the captured rows it was drafted from, as the ledger stores them, in the
    draft's order (empty for a catalog written by hand)."""
    found: dict[str, list[dict]] = {}
    with conn.cursor(row_factory=dict_row) as cur:
        for row in cur.execute(QUERIES["catalog_provenance"], {"catalog_version": catalog_version}):
            found.setdefault(row["question_id"], []).append(row)
    return found
