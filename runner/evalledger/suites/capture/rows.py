"""A captured row (seed 001's input fields): checked, defaults filled in, and as JSON for the batch
INSERT and the spool. Values (enums, the 50KB limit, expand_enabled only for query) are the
database's CHECKs; types are checked here so a bad row is named before it travels."""

from __future__ import annotations

import json
import math
import uuid

TOOLS = ("query", "search")
DETAILS = ("low", "medium", "high")
# The input columns, as the insert_candidates query lists them (id and created_at are the database's).
COLUMNS = ("tool_name", "query", "retrieved_slugs", "retrieved_chunk_ids", "source_ids", "expand_enabled",
           "detail", "detail_resolved", "vector_enabled", "expansion_applied", "latency_ms", "remote",
           "job_id", "subagent_id", "capture_key")
REQUIRED = ("tool_name", "query", "vector_enabled", "latency_ms", "remote")
DEFAULTS = {"retrieved_slugs": [], "retrieved_chunk_ids": [], "source_ids": [], "expand_enabled": None,
            "detail": None, "detail_resolved": None, "expansion_applied": False, "job_id": None,
            "subagent_id": None, "capture_key": None}
_MISSING = object()


class RowError(ValueError):
    """A captured row that is not a row: names the field."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"field {field_name}: {problem}")
        self.field = field_name
        self.problem = problem


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_list(name: str, value, distinct: bool) -> list:
    if not isinstance(value, list | tuple):
        raise RowError(name, "expected an array of strings")
    if not all(isinstance(v, str) for v in value):
        raise RowError(name, "expected an array of strings")
    return list(dict.fromkeys(value)) if distinct else list(value)


def normalize(row: dict) -> dict:
    """A validated row with defaults filled in and slugs and source ids deduplicated (in order).

    Types are checked here; values (enums, the 50KB limit, expand_enabled only for query) are
    the database's CHECKs.
    """
    out = {}
    for name in COLUMNS:
        value = row.get(name, _MISSING)
        if value is _MISSING:
            if name in REQUIRED:
                raise RowError(name, "missing")
            value = DEFAULTS[name]
            if isinstance(value, list):
                value = []
        out[name] = value
    if not isinstance(out["tool_name"], str):
        raise RowError("tool_name", 'expected "query" or "search"')
    if not isinstance(out["query"], str):
        raise RowError("query", "expected a string")
    out["retrieved_slugs"] = _text_list("retrieved_slugs", out["retrieved_slugs"], True)
    out["source_ids"] = _text_list("source_ids", out["source_ids"], True)
    ids = out["retrieved_chunk_ids"]
    if not isinstance(ids, list | tuple) or not all(_is_int(v) for v in ids):
        raise RowError("retrieved_chunk_ids", "expected an array of integers")
    out["retrieved_chunk_ids"] = list(ids)
    for name in ("vector_enabled", "expansion_applied", "remote"):
        if not isinstance(out[name], bool):
            raise RowError(name, "expected true or false")
    if out["expand_enabled"] is not None and not isinstance(out["expand_enabled"], bool):
        raise RowError("expand_enabled", "expected true, false or null")
    for name in ("detail", "detail_resolved"):
        if out[name] is not None and not isinstance(out[name], str):
            raise RowError(name, 'expected "low", "medium", "high" or null')
    latency = out["latency_ms"]
    if isinstance(latency, bool) or not isinstance(latency, int | float):
        raise RowError("latency_ms", "expected a number")
    if isinstance(latency, float) and not math.isfinite(latency):
        raise RowError("latency_ms", "expected a finite number")
    out["latency_ms"] = float(latency)
    for name in ("job_id", "subagent_id"):
        if out[name] is not None and not _is_int(out[name]):
            raise RowError(name, "expected an integer or null")
    key = out["capture_key"]
    if key is None:
        out["capture_key"] = uuid.uuid4()
    elif isinstance(key, uuid.UUID):
        pass
    elif isinstance(key, str):
        try:
            out["capture_key"] = uuid.UUID(key)
        except ValueError:
            raise RowError("capture_key", "expected a UUID") from None
    else:
        raise RowError("capture_key", "expected a UUID")
    return out


def batch_json(rows: list[dict]) -> str:
    return json.dumps([json_row(r) for r in rows], separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)


def json_row(row: dict) -> dict:
    return {**row, "capture_key": str(row["capture_key"])}


def row_from_json(data: dict) -> dict:
    return {**data, "capture_key": uuid.UUID(data["capture_key"])}
