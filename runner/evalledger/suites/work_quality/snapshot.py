"""Seed 003's Snapshot and its JSON, byte for byte as Go writes it.

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

No policy lives here: Compare and IsRegression are SQL functions (work_quality_compare_v1,
work_quality_is_regression_v1); a snapshot's `comparison` is what the database computed.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Callable

SCHEMA_VERSION = 1

# The seed's canonical ordered rubric.
DIMENSIONS = ("efficacy", "completeness", "output_quality", "restraint", "reliability", "value_for_money",
              "overall")
RELATIVES = ("better", "same", "worse", "n/a")


class SnapshotError(ValueError):
    """A snapshot (or metrics) document that the seed's Go types would not load as given."""


# --- the seed's types -------------------------------------------------------------------------


@dataclass
class Metrics:
    """The price side of value-for-money: what the assessed run consumed."""

    cost_usd: float = 0.0
    tokens: int = 0
    duration_ms: int = 0
    iterations: int = 0
    model_calls: int = 0
    retries: int = 0


@dataclass
class JudgeVerdict:
    """One judge's structured assessment."""

    model: str = ""
    family: str = ""
    same_family_as_bot: bool = False
    scores: dict[str, float] | None = None
    narrative: str = ""
    relative_vs_prev: dict[str, str] | None = None
    relative_narrative: str = ""
    confidence: float = 0.0


@dataclass
class Aggregate:
    """The combined panel result."""

    verdicts: list[JudgeVerdict] | None = None
    mean_scores: dict[str, float] | None = None
    disagreement: dict[str, float] | None = None
    note: str = ""


@dataclass
class Delta:
    """The comparison of a snapshot with the previous one, as the database computed it."""

    prev_run_id: str = ""
    overall_delta: float = 0.0
    value_delta: float = 0.0
    per_dimension: dict[str, float] | None = None
    verdict: str = ""


@dataclass
class Snapshot:
    """One assessed run. `at` is timezone-aware; `at_nanos` keeps the nanoseconds of a file written
    by Go (datetime holds microseconds), None when `at` carries them all."""

    kind: str = ""
    name: str = ""
    run_id: str = ""
    at: datetime = field(default_factory=lambda: datetime(1, 1, 1, tzinfo=timezone.utc))
    schema_version: int = SCHEMA_VERSION
    persona: str = ""
    bot_version: str = ""
    iterion_sha: str = ""
    task: str = ""
    metrics: Metrics = field(default_factory=Metrics)
    aggregate: Aggregate = field(default_factory=Aggregate)
    evidence_digest: str = ""
    prev_run_id: str = ""
    comparison: Delta | None = None
    at_nanos: int | None = None

    def overall(self) -> float:
        return (self.aggregate.mean_scores or {}).get("overall", 0.0)

    def value(self) -> float:
        return (self.aggregate.mean_scores or {}).get("value_for_money", 0.0)


# --- Go's encoding/json, the parts the Snapshot uses -----------------------------------------

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
                  ("note", portable_text(a.note), True)])


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


# --- reading: what Go's json.Unmarshal would accept, into the same types ----------------------

_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$")


def parse_go_time(text: Any, where: str) -> tuple[datetime, int]:
    """An RFC 3339 time as time.Time.UnmarshalJSON reads it: (datetime, nanoseconds)."""
    m = _RFC3339.match(text) if isinstance(text, str) else None
    if not m:
        raise SnapshotError(f"{where}: not an RFC 3339 time: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac, zulu, sign, oh, om = m.group(7), m.group(8), m.group(9), m.group(10), m.group(11)
    nanos = int((frac or "").ljust(9, "0") or 0)
    tz = timezone.utc if zulu or (int(oh) == 0 and int(om) == 0) else timezone(
        (1 if sign == "+" else -1) * timedelta(hours=int(oh), minutes=int(om)))
    try:
        at = datetime(year, month, day, hour, minute, second, nanos // 1000, tzinfo=tz)
    except ValueError as exc:
        raise SnapshotError(f"{where}: {text!r}: {exc}") from None
    return at, nanos


def _reject_constant(name: str):
    raise SnapshotError(f"{name} is not JSON (Go rejects NaN and infinities)")


def loads_json(text: str) -> Any:
    """JSON as Go accepts it: no NaN or Infinity literals."""
    return json.loads(text, parse_constant=_reject_constant)


def _str(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SnapshotError(f"{where}: expected a string, got {_kind(value)}")
    return value


def _num(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SnapshotError(f"{where}: expected a number, got {_kind(value)}")
    return float(value)


def _int(value: Any, where: str, bits: int = 64) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise SnapshotError(f"{where}: expected an integer, got {_kind(value)}")
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise SnapshotError(f"{where}: {value} does not fit an int{bits}")
    return value


def _bool(value: Any, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SnapshotError(f"{where}: expected true or false, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "a number", float: "a number", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__)


def _obj(value: Any, where: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SnapshotError(f"{where}: expected an object, got {_kind(value)}")
    return value


def _map(value: Any, where: str, item: Callable[[Any, str], Any]) -> dict | None:
    obj = _obj(value, where)
    return None if obj is None else {k: item(v, f"{where}.{k}") for k, v in obj.items()}


METRICS_FIELDS = ("cost_usd", "tokens", "duration_ms", "iterations", "model_calls", "retries")


def metrics_from(value: Any, where: str = "metrics", *, strict: bool = False) -> Metrics:
    """Metrics from a decoded object. strict (the --metrics file): unknown fields and negative
    values are errors too, each naming the field."""
    obj = _obj(value, where) or {}
    if strict:
        unknown = [k for k in obj if k not in METRICS_FIELDS]
        if unknown:
            raise SnapshotError(f"{where}.{unknown[0]}: unknown field (expected {', '.join(METRICS_FIELDS)})")
    m = Metrics(cost_usd=_num(obj.get("cost_usd"), f"{where}.cost_usd"),
                tokens=_int(obj.get("tokens"), f"{where}.tokens"),
                duration_ms=_int(obj.get("duration_ms"), f"{where}.duration_ms"),
                iterations=_int(obj.get("iterations"), f"{where}.iterations"),
                model_calls=_int(obj.get("model_calls"), f"{where}.model_calls"),
                retries=_int(obj.get("retries"), f"{where}.retries"))
    if strict:
        for name in METRICS_FIELDS:
            if getattr(m, name) < 0:
                raise SnapshotError(f"{where}.{name}: must be 0 or more, got {obj.get(name)}")
    return m


def _verdict_from(value: Any, where: str) -> JudgeVerdict:
    obj = _obj(value, where) or {}
    return JudgeVerdict(
        model=_str(obj.get("model"), f"{where}.model"), family=_str(obj.get("family"), f"{where}.family"),
        same_family_as_bot=_bool(obj.get("same_family_as_bot"), f"{where}.same_family_as_bot"),
        scores=_map(obj.get("scores"), f"{where}.scores", _num),
        narrative=_str(obj.get("narrative"), f"{where}.narrative"),
        relative_vs_prev=_map(obj.get("relative_vs_prev"), f"{where}.relative_vs_prev", _str),
        relative_narrative=_str(obj.get("relative_narrative"), f"{where}.relative_narrative"),
        confidence=_num(obj.get("confidence"), f"{where}.confidence"))


def snapshot_from(value: Any, where: str = "snapshot") -> Snapshot:
    """A Snapshot from a decoded JSON object, with Go's zero values for what is missing."""
    obj = _obj(value, where)
    if obj is None:
        raise SnapshotError(f"{where}: expected an object, got null")
    agg = _obj(obj.get("aggregate"), f"{where}.aggregate") or {}
    verdicts = agg.get("verdicts")
    if verdicts is not None and not isinstance(verdicts, list):
        raise SnapshotError(f"{where}.aggregate.verdicts: expected an array, got {_kind(verdicts)}")
    cmp = _obj(obj.get("comparison"), f"{where}.comparison")
    if obj.get("at") is None:
        at, nanos = datetime(1, 1, 1, tzinfo=timezone.utc), 0
    else:
        at, nanos = parse_go_time(obj["at"], f"{where}.at")
    return Snapshot(
        schema_version=_int(obj.get("schema_version"), f"{where}.schema_version"),
        kind=_str(obj.get("kind"), f"{where}.kind"), name=_str(obj.get("name"), f"{where}.name"),
        persona=_str(obj.get("persona"), f"{where}.persona"), run_id=_str(obj.get("run_id"), f"{where}.run_id"),
        at=at, at_nanos=None if nanos == at.microsecond * 1000 else nanos,
        bot_version=_str(obj.get("bot_version"), f"{where}.bot_version"),
        iterion_sha=_str(obj.get("iterion_sha"), f"{where}.iterion_sha"),
        task=_str(obj.get("task"), f"{where}.task"),
        metrics=metrics_from(obj.get("metrics"), f"{where}.metrics"),
        aggregate=Aggregate(
            verdicts=None if verdicts is None else [_verdict_from(v, f"{where}.aggregate.verdicts[{i}]")
                                                    for i, v in enumerate(verdicts)],
            mean_scores=_map(agg.get("mean_scores"), f"{where}.aggregate.mean_scores", _num),
            disagreement=_map(agg.get("disagreement"), f"{where}.aggregate.disagreement", _num),
            note=_str(agg.get("note"), f"{where}.aggregate.note")),
        evidence_digest=_str(obj.get("evidence_digest"), f"{where}.evidence_digest"),
        prev_run_id=_str(obj.get("prev_run_id"), f"{where}.prev_run_id"),
        comparison=None if cmp is None else Delta(
            prev_run_id=_str(cmp.get("prev_run_id"), f"{where}.comparison.prev_run_id"),
            overall_delta=_num(cmp.get("overall_delta"), f"{where}.comparison.overall_delta"),
            value_delta=_num(cmp.get("value_delta"), f"{where}.comparison.value_delta"),
            per_dimension=_map(cmp.get("per_dimension"), f"{where}.comparison.per_dimension", _num),
            verdict=_str(cmp.get("verdict"), f"{where}.comparison.verdict")),
    )


def loads(text: str, where: str = "snapshot") -> Snapshot:
    try:
        data = loads_json(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{where}:{exc.lineno}: not JSON: {exc.msg}") from None
    return snapshot_from(data, where)


def as_document(snap: Snapshot) -> Any:
    """The snapshot as plain JSON values (what the file holds), e.g. for jsonb."""
    return json.loads(dumps(snap))
