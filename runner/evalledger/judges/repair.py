"""Turning a judge's raw output into scores: tolerant JSON repair, then strict validation."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Sequence

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n?(.*?)```", re.DOTALL)

PARSE_FAILED = "parse_failed"
OUT_OF_SCALE = "out_of_scale"
INCOMPLETE_PREFIX = "incomplete_scores"


def _loads_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede '}' or ']', leaving string contents alone."""
    out: list[str] = []
    in_string = escaped = False
    n = len(text)
    for i, ch in enumerate(text):
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                continue
        out.append(ch)
    return "".join(out)


def _object_spans(text: str) -> list[str]:
    """Top-level balanced {...} spans in one pass; quotes count only inside braces,
    because prose around the JSON ("don't") would otherwise derail the scan."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth > 0:
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def repair_json(text: str | None) -> dict | None:
    """The JSON object in a judge's output despite fences, prose and trailing commas, or None.

    Never evaluates anything; work is linear in the length of the text (each candidate
    span is disjoint). NaN/Infinity literals are kept so validation can name them.
    """
    if not text or not isinstance(text, str):
        return None
    stripped = text.strip()
    found = _loads_object(stripped)
    if found is not None:
        return found
    candidates = [m.group(1) for m in _FENCE.finditer(stripped)] + [stripped]
    for candidate in candidates:
        for span in _object_spans(candidate):
            found = _loads_object(span)
            if found is None:
                found = _loads_object(_drop_trailing_commas(span))
            if found is not None:
                return found
    return None


def _is_score(value: Any) -> bool:
    # bool is an int subclass; True must not pass as a score of 1.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def validate_scores(
    parsed: Any, dimensions: Sequence[str], scale_min: float, scale_max: float
) -> tuple[dict[str, float] | None, str | None]:
    """Scores for every dimension, or None and exactly one reason.

    Scores are read from parsed["scores"] when that is an object (the shape our schemas
    ask for, leaving room for narrative and confidence beside it), else from the top
    level (what a judge writing free text tends to emit). A null counts as missing.
    Reasons, checked in this order: "parse_failed", "incomplete_scores: missing [a, b]",
    "out_of_scale" (non-number, bool, NaN, infinity, or outside [scale_min, scale_max]).
    Keys not in dimensions are ignored.
    """
    if not isinstance(parsed, dict):
        return None, PARSE_FAILED
    container = parsed["scores"] if isinstance(parsed.get("scores"), dict) else parsed
    missing = [d for d in dimensions if container.get(d) is None]
    if missing:
        return None, f"{INCOMPLETE_PREFIX}: missing [{', '.join(missing)}]"
    scores: dict[str, float] = {}
    for dim in dimensions:
        value = container[dim]
        if not _is_score(value) or not scale_min <= value <= scale_max:
            return None, OUT_OF_SCALE
        scores[dim] = float(value)
    return scores, None
