"""The captured rows a replay asks again: an export file's lines (seed 001's NDJSON, row schema v1),
read whole and checked before anything is written, or the ledger's rows of a window
(store.window_rows).

A file line is refused, naming the file and the line, when it is not a JSON object, when its
schema_version is not 1 (a v2 row is not misread as v1), when a field a replay reads is missing or
of the wrong type, or when its id repeats an earlier line's. Unknown fields are ignored, as seed
001 asks of every consumer.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from evalledger.core.errors import EvalledgerError
from evalledger.core.reader import decode_json
from evalledger.core.windows import parse_timestamp

DETAILS = ("low", "medium", "high")


@dataclass(frozen=True)
class Captured:
    """One captured row as a replay needs it. For a ledger row only what the adapter is sent (the
    database copies the captured results itself); for a file row the captured results too."""

    id: int
    created_at: datetime | None
    tool_name: str
    query: str
    detail: str | None
    expand_enabled: bool | None
    vector_enabled: bool
    results: dict | None = None  # a file row's captured fields, as replay_query takes them

    def request(self) -> dict:
        """The JSON object the adapter is sent: the captured row's id, tool, query and mode."""
        return {"id": self.id, "tool_name": self.tool_name, "query": self.query, "detail": self.detail,
                "expand_enabled": self.expand_enabled, "vector_enabled": self.vector_enabled}


@dataclass(frozen=True)
class ExportFile:
    """An export file read whole: its rows in file order and the SHA-256 of its bytes."""

    path: Path
    rows: list[Captured]
    sha256: str


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and "\x00" not in v for v in value)


def _ints(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value >= 0)


# What each field a replay reads must be (seed 001, row schema v1), and how to say so.
_FIELDS = {
    "id": (lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63, "a whole number"),
    "tool_name": (lambda v: v in ("query", "search"), '"query" or "search"'),
    "query": (lambda v: isinstance(v, str) and "\x00" not in v, "a string (without NUL)"),
    "retrieved_slugs": (_strings, "an array of strings"),
    "retrieved_chunk_ids": (lambda v: _ints(v) and all(-2**63 <= i < 2**63 for i in v), "an array of whole numbers"),
    "source_ids": (_strings, "an array of strings"),
    "expand_enabled": (lambda v: v is None or isinstance(v, bool), "true, false or null"),
    "detail": (lambda v: v is None or v in DETAILS, '"low", "medium", "high" or null'),
    "vector_enabled": (lambda v: isinstance(v, bool), "true or false"),
    "latency_ms": (_number, "a finite number of at least 0"),
}


def _row(file: str, number: int, text: str) -> dict:
    where = f"{file}:{number}"
    data = decode_json(text, file, number)  # the door: what every file a command reads passes
    if not isinstance(data, dict):
        raise EvalledgerError(f"{where}: not a JSON object")
    if data.get("schema_version", 1) != 1:
        raise EvalledgerError(f"{where}: schema_version {json.dumps(data['schema_version'])}: this replay reads "
                              "row schema v1 (seed 001)")
    for name, (ok, expected) in _FIELDS.items():
        if name not in data:
            raise EvalledgerError(f"{where}: $.{name}: missing")
        if not ok(data[name]):
            raise EvalledgerError(f"{where}: $.{name}: {json.dumps(data[name])[:80]} is not {expected}")
    return data


def _created_at(where: str, data: dict) -> datetime | None:
    value = data.get("created_at")
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise ValueError
        return parse_timestamp(value)
    except (ValueError, OverflowError):
        raise EvalledgerError(f"{where}: $.created_at: {json.dumps(value)[:80]} is not an ISO 8601 timestamp") from None


def read_export(path: Path) -> ExportFile:
    """Every row of an export file, checked; the first bad line is an error naming file and line."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise EvalledgerError(f"--from {path}: cannot read it ({exc.strerror or exc})") from None
    rows: list[Captured] = []
    seen: dict[int, int] = {}
    for number, line in enumerate(raw.split(b"\n"), 1):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise EvalledgerError(f"{where}: not UTF-8 text") from None
        data = _row(str(path), number, text)
        if data["id"] in seen:
            raise EvalledgerError(f"{where}: $.id: {data['id']} is line {seen[data['id']]}'s id too: a row is "
                                  "replayed once")
        seen[data["id"]] = number
        rows.append(Captured(
            id=data["id"], created_at=_created_at(where, data), tool_name=data["tool_name"], query=data["query"],
            detail=data["detail"], expand_enabled=data["expand_enabled"], vector_enabled=data["vector_enabled"],
            results={"captured_slugs": data["retrieved_slugs"], "captured_chunk_ids": data["retrieved_chunk_ids"],
                     "captured_source_ids": data["source_ids"], "captured_latency_ms": float(data["latency_ms"])}))
    return ExportFile(Path(path), rows, hashlib.sha256(raw).hexdigest())


def from_ledger(row: dict) -> Captured:
    """A ledger row of store.window_rows."""
    return Captured(id=row["id"], created_at=row["created_at"], tool_name=row["tool_name"], query=row["query"],
                    detail=row["detail"], expand_enabled=row["expand_enabled"], vector_enabled=row["vector_enabled"])
