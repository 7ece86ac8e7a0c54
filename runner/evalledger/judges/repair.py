"""Tolerant JSON repair of a judge's raw output. Whether the scores in it count is the database's
to decide (each suite's verdict trigger), never this module's."""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n?(.*?)```", re.DOTALL)


def _loads_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class _Strings:
    """Whether a left-to-right scan of JSON-ish text is inside a string literal."""

    __slots__ = ("inside", "escaped")

    def __init__(self) -> None:
        self.inside = self.escaped = False

    def consumed(self, ch: str) -> bool:
        """True when ch belongs to the string being scanned (its closing quote included)."""
        if not self.inside:
            return False
        if self.escaped:
            self.escaped = False
        elif ch == "\\":
            self.escaped = True
        elif ch == '"':
            self.inside = False
        return True


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede '}' or ']', leaving string contents alone."""
    out: list[str] = []
    strings = _Strings()
    n = len(text)
    for i, ch in enumerate(text):
        if strings.consumed(ch):
            out.append(ch)
            continue
        if ch == '"':
            strings.inside = True
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
    strings = _Strings()
    for i, ch in enumerate(text):
        if strings.consumed(ch):
            continue
        if ch == '"' and depth > 0:
            strings.inside = True
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
