"""Seed 003's Snapshot: its types, and reading a snapshot (or metrics) document into them as Go's
json.Unmarshal would, through the door (core/reader.py). Writing a snapshot byte for byte as Go
does is go_json.py.

No policy lives here: Compare and IsRegression are SQL functions (work_quality_compare_v1,
work_quality_is_regression_v1); a snapshot's `comparison` is what the database computed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from evalledger.core import reader

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
    # evalledger's optional fields (additive at schema_version 1, issue 36), which `snapshot show
    # --uncertainty` fills from the database: each dimension's standard error over the judges and
    # its 95% interval [lo, hi] (docs/statistics.md, "work-quality").
    stderr: dict[str, float] | None = None
    ci95: dict[str, list[float]] | None = None


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
    values are errors too, each naming the field, and so is a file of null (Go would load it as
    nothing measured, but a tool that wrote null measured nothing it meant to)."""
    if strict and value is None:
        raise SnapshotError(f"{where}: expected an object, got null")
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


def _pair(value: Any, where: str) -> list[float]:
    """A Go [2]float64: an array of exactly two numbers."""
    if not isinstance(value, list) or len(value) != 2:
        raise SnapshotError(f"{where}: expected an array of 2 numbers, got {_kind(value)}")
    return [_num(value[0], f"{where}[0]"), _num(value[1], f"{where}[1]")]


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
            note=_str(agg.get("note"), f"{where}.aggregate.note"),
            stderr=_map(agg.get("stderr"), f"{where}.aggregate.stderr", _num),
            ci95=_map(agg.get("ci95"), f"{where}.aggregate.ci95", _pair)),
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
    """A snapshot from its file's text; where names the file in errors, with the line and path."""
    try:
        document = reader.parse_json(text, where)
    except reader.InputError as exc:
        raise SnapshotError(str(exc)) from None
    return located(document, snapshot_from)


def located(document: reader.Document, build: Callable[..., Any], **options) -> Any:
    """build(document.value, "$"), a type error in it named FILE:LINE: $.path like the door's own."""
    try:
        return build(document.value, "$", **options)
    except SnapshotError as exc:
        where, _, detail = str(exc).partition(": ")
        if not where.startswith("$"):
            raise
        path = tuple(int(part[1:-1]) if part.startswith("[") else part[1:]
                     for part in re.findall(r"\[\d+\]|\.[^.\[]+", where[1:]))
        raise SnapshotError(f"{document.where(*path)}: {detail}") from None
