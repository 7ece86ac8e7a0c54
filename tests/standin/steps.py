"""Scripted behaviours of the provider stand-in: each Step is one response to one request."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

# Renderings of a verdict: "structured" answers in the structured form the request asked
# for (an Anthropic tool_use block, or JSON content), the others are plain text as a
# judge writing free text would produce.
STRUCTURED, FENCED, TRAILING_COMMA, PROSE, RAW = "structured", "fenced", "trailing_comma", "prose", "raw"


@dataclass(frozen=True)
class Step:
    """One scripted response. Build them with the functions below, not directly."""

    status: int = 200
    latency_s: float = 0.0
    hang_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    error_message: str = ""
    echo_key: bool = False
    render: str = STRUCTURED
    raw_text: str = ""
    mutate: Callable[[dict], None] | None = field(default=None, compare=False)
    usage: tuple[int, int] | None = None


def ok(*, latency_s: float = 0.0, usage: tuple[int, int] | None = None) -> Step:
    """A valid verdict from the responder."""
    return Step(latency_s=latency_s, usage=usage)


def rate_limited(retry_after: float | str | None = 1, *, latency_s: float = 0.0, retry_after_ms: float | None = None) -> Step:
    """429 with Retry-After (seconds, or an HTTP date string), or none at all."""
    headers = []
    if retry_after is not None:
        headers.append(("Retry-After", str(retry_after)))
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", str(retry_after_ms)))
    return Step(status=429, latency_s=latency_s, headers=tuple(headers), error_message="Rate limit reached; slow down.")


def server_error(status: int = 500, *, latency_s: float = 0.0) -> Step:
    """A 5xx from the provider."""
    return Step(status=status, latency_s=latency_s, error_message="The server had an error processing your request.")


def error(status: int, message: str = "Bad request.", *, echo_key: bool = False) -> Step:
    """Any error status; echo_key puts the received API key in the message (worst-case provider)."""
    return Step(status=status, error_message=message, echo_key=echo_key)


def hang(seconds: float = 30.0) -> Step:
    """Say nothing for `seconds` (longer than the client's timeout), then drop the connection."""
    return Step(hang_s=seconds)


def fenced(*, latency_s: float = 0.0) -> Step:
    """The verdict as text inside a ```json fence."""
    return Step(render=FENCED, latency_s=latency_s)


def trailing_comma(*, latency_s: float = 0.0) -> Step:
    """The verdict as text with trailing commas (invalid JSON)."""
    return Step(render=TRAILING_COMMA, latency_s=latency_s)


def prose_wrapped(*, latency_s: float = 0.0) -> Step:
    """The verdict as text with prose before and after it."""
    return Step(render=PROSE, latency_s=latency_s)


def text(raw: str, *, latency_s: float = 0.0) -> Step:
    """Exactly this text as the reply."""
    return Step(render=RAW, raw_text=raw, latency_s=latency_s)


def missing(*dims: str, latency_s: float = 0.0) -> Step:
    """A verdict without these dimensions (the first one when none are named)."""

    def drop(payload: dict) -> None:
        scores = scores_of(payload)
        for d in dims or list(scores)[:1]:
            scores.pop(d, None)

    return Step(mutate=drop, latency_s=latency_s)


def out_of_scale(dim: str | None = None, value: object = 11, *, latency_s: float = 0.0) -> Step:
    """A verdict with one score (the first by default) set to `value`."""

    def set_value(payload: dict) -> None:
        scores = scores_of(payload)
        scores[dim or next(iter(scores))] = value

    return Step(mutate=set_value, latency_s=latency_s)


def nan_score(dim: str | None = None, *, latency_s: float = 0.0) -> Step:
    """A verdict with a NaN score (as the NaN literal Python's json emits)."""
    return out_of_scale(dim, math.nan, latency_s=latency_s)


def with_scores(**scores: object) -> Step:
    """A verdict with these score values overriding the responder's."""

    def override(payload: dict) -> None:
        scores_of(payload).update(scores)

    return Step(mutate=override)


def scores_of(payload: dict) -> dict:
    """The dict holding the scores: payload['scores'] when it is one, else the payload."""
    inner = payload.get("scores")
    return inner if isinstance(inner, dict) else payload
