"""Seed 003's Snapshot JSON, byte for byte as Go writes it.

The snapshot files are read by the seed's own Go code (`quality.SnapshotStore`), so the bytes
here are exactly what `json.MarshalIndent(snapshot, "", "  ")` plus a newline produces for the
seed's `Snapshot` type: fields in struct order, `omitempty` fields left out when empty, map keys
sorted, `time.Time` as RFC 3339 with the nanoseconds it needs, float64 as encoding/json formats
it (shortest round-trip digits, exponent form below 1e-6 and from 1e21), and `<`, `>`, `&`,
U+2028, U+2029 escaped as Go escapes them. tests/go/snapshot_roundtrip proves it with Go itself.

Two characters are normalised before they reach a file: BACKSPACE and FORM FEED. Go 1.22
changed how it escapes them (\\u0008 became \\b), so any file holding one would re-marshal
differently depending on the reader's Go version; every other character is written the same by
every Go release, so without these two any Go reads and re-writes our files byte for byte.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from .snapshot import Aggregate, Delta, JudgeVerdict, Metrics, Snapshot, SnapshotError

_HEX = "0123456789abcdef"
_BF = str.maketrans({"\b": " ", "\f": " "})


def portable_text(text: str) -> str:
    """Text as it may enter a snapshot: BACKSPACE and FORM FEED become spaces (see the module
    docstring), lone surrogates (undecodable bytes read with surrogateescape) become U+FFFD as
    Go writes invalid UTF-8."""
    text = text.translate(_BF)
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def go_string(text: str) -> str:
    """A JSON string as encoding/json writes it (HTML-safe escaping)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or ch in "<>&":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch) or
                       "\\u00" + _HEX[code >> 4] + _HEX[code & 0xF])
        elif code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")  # Go replaces invalid UTF-8 with U+FFFD
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_float(value: float) -> str:
    """A float64 as encoding/json writes it: strconv's shortest digits, 'f' form between 1e-6 and
    1e21, else 'e' form with a two-digit exponent trimmed from e-07 to e-7."""
    value = float(value)
    if not math.isfinite(value):
        raise SnapshotError(f"json: unsupported value: {value!r} (Go cannot marshal NaN or infinities)")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    # repr() is the shortest string that round-trips, as strconv's precision -1 is.
    _, digits, exponent = Decimal(repr(magnitude)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + exponent  # the value is 0.<text> * 10**point
    if magnitude < 1e-6 or magnitude >= 1e21:
        exp = point - 1
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        exp_text = f"{abs(exp):02d}"
        if exp < 0 and exp_text.startswith("0"):
            exp_text = exp_text[1:]
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{exp_text}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{sign}{text}{'0' * (point - len(text))}"
    return f"{sign}{text[:point]}.{text[point:]}"


def go_time(at: datetime, nanos: int | None = None) -> str:
    """time.Time.MarshalJSON: RFC 3339 with as many fraction digits as needed, Z for UTC."""
    if at.tzinfo is None:
        raise SnapshotError("a snapshot time must carry its timezone")
    if not 0 <= at.year <= 9999:
        raise SnapshotError(f"Time.MarshalJSON: year outside of range [0,9999]: {at.year}")
    ns = at.microsecond * 1000 if nanos is None else nanos
    frac = f"{ns:09d}".rstrip("0")
    offset = at.utcoffset() or timedelta(0)
    if offset == timedelta(0):
        zone = "Z"
    else:
        minutes = int(offset.total_seconds()) // 60
        zone = f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return at.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + zone


class _Struct(list):
    """A Go struct: (key, value) pairs in field order (a plain dict is a Go map, keys sorted)."""


class _Float(float):
    """A float64 field (an int value in a float field is still written as a float64)."""


def _encode(value: Any, indent: str, out: list[str]) -> None:
    inner = indent + "  "
    if isinstance(value, _Struct) or isinstance(value, dict):
        items = list(value) if isinstance(value, _Struct) else sorted(value.items())
        if not items:
            out.append("{}")
            return
        out.append("{")
        for i, (key, item) in enumerate(items):
            out.append(("," if i else "") + "\n" + inner + go_string(key) + ": ")
            _encode(item, inner, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + "\n" + inner)
            _encode(item, inner, out)
        out.append("\n" + indent + "]")
    elif value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, _Float):
        out.append(go_float(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, str):
        out.append(go_string(value))
    else:  # pragma: no cover - a programming error, not input
        raise TypeError(f"cannot encode {type(value).__name__}")


def _floats(mapping: dict[str, Any] | None) -> dict[str, _Float] | None:
    return None if mapping is None else {k: _Float(v) for k, v in mapping.items()}


def _omit(pairs: list[tuple[str, Any, bool]]) -> _Struct:
    """Struct pairs; the third item marks omitempty (left out when "", 0, false, nil or empty)."""
    kept = _Struct()
    for key, value, omitempty in pairs:
        if omitempty and (value is None or value == "" or value == {} or value == [] or value is False
                          or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0)):
            continue
        kept.append((key, value))
    return kept


def _metrics(m: Metrics) -> _Struct:
    return _Struct([("cost_usd", _Float(m.cost_usd)), ("tokens", int(m.tokens)), ("duration_ms", int(m.duration_ms)),
                    ("iterations", int(m.iterations)), ("model_calls", int(m.model_calls)), ("retries", int(m.retries))])


def _verdict(v: JudgeVerdict) -> _Struct:
    return _omit([("model", portable_text(v.model), False), ("family", portable_text(v.family), False),
                  ("same_family_as_bot", bool(v.same_family_as_bot), False), ("scores", _floats(v.scores), False),
                  ("narrative", portable_text(v.narrative), False),
                  ("relative_vs_prev", v.relative_vs_prev, True),
                  ("relative_narrative", portable_text(v.relative_narrative), True),
                  ("confidence", _Float(v.confidence), False)])


def _aggregate(a: Aggregate) -> _Struct:
    return _omit([("verdicts", None if a.verdicts is None else [_verdict(v) for v in a.verdicts], False),
                  ("mean_scores", _floats(a.mean_scores), False), ("disagreement", _floats(a.disagreement), True),
                  ("note", portable_text(a.note), True), ("stderr", _floats(a.stderr), True),
                  ("ci95", None if a.ci95 is None else {k: [_Float(lo), _Float(hi)] for k, (lo, hi) in a.ci95.items()},
                   True)])


def _delta(d: Delta) -> _Struct:
    return _Struct([("prev_run_id", portable_text(d.prev_run_id)), ("overall_delta", _Float(d.overall_delta)),
                    ("value_delta", _Float(d.value_delta)), ("per_dimension", _floats(d.per_dimension)),
                    ("verdict", d.verdict)])


def go_structure(snap: Snapshot) -> _Struct:
    """The snapshot as Go's encoder walks it."""
    t = portable_text
    return _omit([
        ("schema_version", int(snap.schema_version), False), ("kind", t(snap.kind), False),
        ("name", t(snap.name), False), ("persona", t(snap.persona), True), ("run_id", t(snap.run_id), False),
        ("at", _Time(snap.at, snap.at_nanos), False), ("bot_version", t(snap.bot_version), True),
        ("iterion_sha", t(snap.iterion_sha), True), ("task", t(snap.task), True),
        ("metrics", _metrics(snap.metrics), False), ("aggregate", _aggregate(snap.aggregate), False),
        ("evidence_digest", t(snap.evidence_digest), True), ("prev_run_id", t(snap.prev_run_id), True),
        ("comparison", None if snap.comparison is None else _delta(snap.comparison), True),
    ])


class _Time(str):
    """A time.Time, already formatted (encoded as a JSON string)."""

    def __new__(cls, at: datetime, nanos: int | None):
        return super().__new__(cls, go_time(at, nanos))


def dumps(snap: Snapshot) -> str:
    """`json.MarshalIndent(snap, "", "  ")` plus the newline SnapshotStore.Write appends."""
    out: list[str] = []
    _encode(go_structure(snap), "", out)
    return "".join(out) + "\n"


def dumps_bytes(snap: Snapshot) -> bytes:
    return dumps(snap).encode("utf-8")


def as_document(snap: Snapshot) -> Any:
    """The snapshot as plain JSON values (what the file holds), e.g. for jsonb."""
    return json.loads(dumps(snap))
