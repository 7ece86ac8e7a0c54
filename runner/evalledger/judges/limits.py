"""How many calls to one provider may be in flight: a limit that adapts to what the provider answers.

One `AdaptiveLimit` per provider per command. It starts at `start` (16 by default, or the
`--concurrency` ceiling) and never leaves [floor, ceiling]. It moves by rounds: a round is
`limit` successful attempts sent since the limit last changed (attempts sent under an older
limit say nothing about this one). At the end of a round:

- latency is rising when the round's median latency is over `tolerance` times the provider's
  recent best (the lowest round median of the last 16 rounds): the provider is queueing what we
  send, so the limit is multiplied by max(0.5, tolerance x best / median);
- else, when the round kept the limit busy (in flight reached 0.8 of it) and met no congestion,
  the limit grows: doubling per round (slow start) until its first cut, then one more per round.

A congestion signal (HTTP 429, 503 or 529) multiplies the limit by 0.8, once per episode: a
signal from an attempt sent before the last cut, or within 5 s (or the Retry-After the last cut
was told, when longer), is the same episode. Other failures (500, timeouts, connection errors) hold the round's
growth back without a cut. The same design as TCP's congestion control (slow start, AIMD, one
cut per window) with a latency gradient like Netflix's concurrency-limits and Vegas.

`Gate` holds calls to that limit on an event loop, first come first served, with retries first.
"""

from __future__ import annotations

import asyncio
import collections
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

ADAPTIVE_START = 16
ADAPTIVE_CEILING = 64
FLOOR = 8  # the fixed default it replaces: a burst of 429s never leaves a run slower than that
TOLERANCE = 2.0
CUT = 0.8
# At most one 429 cut this often (or per Retry-After, when longer): the calls refused wait their
# Retry-After without holding room, so a lower limit mostly spares requests, and too low a one
# costs the whole run (peers cut on a cooldown too: inspect-ai's is 15 s).
CUT_COOLDOWN_S = 5.0
LATENCY_CUT_MAX = 0.5  # a latency cut never takes more than half
_BUSY = 0.8  # growth needs in flight to have reached this share of the limit
_ROUND_MIN = 4
_HISTORY = 16

CONGESTION_STATUSES = frozenset({429, 503, 529})


@dataclass
class LimitReport:
    """What one provider's limit did and what its calls met, for the run's output."""

    provider: str
    adaptive: bool
    start: int
    ceiling: int
    final: int = 0
    highest: int = 0
    lowest: int = 0
    cuts_congestion: int = 0
    cuts_latency: int = 0
    calls: int = 0
    attempts: int = 0
    rate_limited_calls: int = 0
    rate_limited_responses: int = 0
    waited_s: float = 0.0
    failed: int = 0
    peak_in_flight: int = 0


class AdaptiveLimit:
    """One provider's limit on calls in flight, moved by `sent`, `succeeded` and the failures.

    Pure bookkeeping, no I/O: the clock is injectable, so tests drive it step by step.
    """

    def __init__(self, provider: str, *, start: int, ceiling: int, adaptive: bool = True, floor: int = FLOOR,
                 tolerance: float = TOLERANCE, clock: Callable[[], float] = time.monotonic) -> None:
        if not 1 <= start <= ceiling:
            raise ValueError(f"start {start} must be within 1..ceiling {ceiling}")
        self.provider = provider
        self.ceiling = ceiling
        self.floor = min(floor, ceiling)
        self.tolerance = tolerance
        self._clock = clock
        self._limit = float(start)
        self._slow_start = True
        self.epoch = 0  # bumped on every change: attempts remember the epoch they were sent in
        self._cut_epoch = 0  # the epoch the last cut opened
        self._quiet_until = float("-inf")  # no second congestion cut before this (a Retry-After)
        self._latencies: list[float] = []
        self._busiest = 0
        self._troubled = False
        self._medians: collections.deque[float] = collections.deque(maxlen=_HISTORY)
        self.report = LimitReport(provider, adaptive, start, ceiling, final=start, highest=start, lowest=start)

    @property
    def limit(self) -> int:
        """Calls allowed in flight now."""
        return max(self.floor, min(self.ceiling, int(self._limit)))

    # --- signals ---------------------------------------------------------------------------

    def sent(self, in_flight: int) -> int:
        """An attempt goes out with in_flight attempts now out (itself included); returns its epoch."""
        self._busiest = max(self._busiest, in_flight)
        self.report.peak_in_flight = max(self.report.peak_in_flight, in_flight)
        return self.epoch

    def succeeded(self, epoch: int, latency_s: float) -> None:
        """An attempt sent in `epoch` was answered in latency_s seconds."""
        if epoch != self.epoch:
            return
        self._latencies.append(latency_s)
        if len(self._latencies) >= max(_ROUND_MIN, self.limit):
            self._end_round()

    def congested(self, epoch: int, retry_after_s: float | None = None) -> None:
        """An attempt sent in `epoch` was told to slow down (429, 503, 529)."""
        self._troubled = True
        now = self._clock()
        if epoch < self._cut_epoch or now < self._quiet_until:
            return  # the same episode as the last cut
        self._cut(self._limit * CUT, congestion=True)
        self._quiet_until = now + max(retry_after_s or 0.0, CUT_COOLDOWN_S)

    def troubled(self, epoch: int) -> None:
        """An attempt sent in `epoch` failed otherwise (500, timeout, connection): no growth this round."""
        if epoch == self.epoch:
            self._troubled = True

    # --- rounds ----------------------------------------------------------------------------

    def _end_round(self) -> None:
        median = statistics.median(self._latencies)
        best = min(self._medians, default=median)
        self._medians.append(median)
        if median > self.tolerance * best:
            self._cut(self._limit * max(LATENCY_CUT_MAX, self.tolerance * best / median), congestion=False)
        elif self._busiest >= _BUSY * self.limit and not self._troubled and self.limit < self.ceiling:
            grown = self._limit * 2 if self._slow_start else self._limit + 1
            self._change(min(float(self.ceiling), grown))
        else:
            self._change(self._limit)  # a new round at the same limit

    def _cut(self, to: float, *, congestion: bool) -> None:
        self._slow_start = False
        if congestion:
            self.report.cuts_congestion += 1
        else:
            self.report.cuts_latency += 1
        self._change(max(float(self.floor), to))
        self._cut_epoch = self.epoch

    def _change(self, to: float) -> None:
        self._limit = to
        self.epoch += 1
        self._latencies = []
        self._busiest = 0
        self._troubled = False
        self.report.final = self.limit
        self.report.highest = max(self.report.highest, self.limit)
        self.report.lowest = min(self.report.lowest, self.limit)


class Gate:
    """Calls wait here for room under their provider's limit: first come, first served, except
    that a call coming back to retry goes first (it has waited already, and its deadline runs)."""

    def __init__(self, limit: AdaptiveLimit) -> None:
        self.limit = limit
        self.in_flight = 0
        self._waiting: collections.deque[asyncio.Future] = collections.deque()

    async def enter(self, *, retry: bool = False) -> int:
        """Wait for room, take it; returns the epoch the attempt is sent in."""
        if not self._waiting and self.in_flight < self.limit.limit:
            self.in_flight += 1
        else:
            waiter = asyncio.get_running_loop().create_future()
            (self._waiting.appendleft if retry else self._waiting.append)(waiter)
            self._wake()  # the limit may have grown since the last call left
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self.leave()  # room was handed over just as we were cancelled
                raise
        return self.limit.sent(self.in_flight)

    def leave(self) -> None:
        """An attempt is over (answered or failed): its room goes to the next call."""
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        # Room is handed over (counted here), so a woken call never finds it taken.
        while self._waiting and self.in_flight < self.limit.limit:
            waiter = self._waiting.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)


@dataclass
class CallReport:
    """What a command's model calls met, per provider, across its runs of calls."""

    providers: dict[str, LimitReport] = field(default_factory=dict)

    def add(self, other: LimitReport) -> None:
        mine = self.providers.get(other.provider)
        if mine is None:
            self.providers[other.provider] = LimitReport(**vars(other))
            return
        for name in ("calls", "attempts", "rate_limited_calls", "rate_limited_responses", "failed",
                     "cuts_congestion", "cuts_latency"):
            setattr(mine, name, getattr(mine, name) + getattr(other, name))
        mine.waited_s += other.waited_s
        mine.final = other.final
        mine.highest = max(mine.highest, other.highest)
        mine.lowest = min(mine.lowest, other.lowest)
        mine.peak_in_flight = max(mine.peak_in_flight, other.peak_in_flight)

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.providers.values())

    @property
    def rate_limited_calls(self) -> int:
        return sum(r.rate_limited_calls for r in self.providers.values())

    @property
    def rate_limited_responses(self) -> int:
        return sum(r.rate_limited_responses for r in self.providers.values())

    @property
    def waited_s(self) -> float:
        return sum(r.waited_s for r in self.providers.values())

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.providers.values())

    def lines(self) -> list[str]:
        """What a person reads at the end of a run: nothing when no call was retried or cut back."""
        reports = list(self.providers.values())
        eventful = any(r.attempts > r.calls or r.cuts_congestion or r.cuts_latency or r.failed for r in reports)
        if not reports or not eventful:
            return []
        limited = self.rate_limited_calls
        said = (f"calls: {self.calls} live, {limited} rate-limited"
                + (f" ({self.rate_limited_responses} HTTP 429, waited {_seconds(self.waited_s)} in all)"
                   if limited else "")
                + f", {self.failed} failed")
        moves = []
        for r in reports:
            step = f"{r.provider} {r.start}" + (f"→{r.final}" if r.final != r.start else "")
            causes = [f"{n} cut{'s' if n != 1 else ''} on {why}"
                      for n, why in ((r.cuts_congestion, "429/503"), (r.cuts_latency, "latency")) if n]
            extra = [f"peak {r.peak_in_flight}"] + causes
            moves.append(f"{step} ({', '.join(extra)})")
        kind = "adaptive" if any(r.adaptive for r in reports) else "fixed ceiling"
        return [said, f"in flight per provider ({kind}): {'; '.join(moves)}"]


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 600 else f"{math.floor(value / 60)} min {value % 60:.0f} s"
