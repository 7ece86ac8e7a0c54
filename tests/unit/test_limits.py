"""The adaptive limit on calls in flight, driven signal by signal (no network, no clock of its own)."""

from __future__ import annotations

import asyncio

import pytest

from evalledger.judges.limits import CallReport, Gate, AdaptiveLimit, LimitReport


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def limit(start=16, ceiling=64, **kw) -> AdaptiveLimit:
    kw.setdefault("clock", Clock())
    return AdaptiveLimit("openai", start=start, ceiling=ceiling, **kw)


def full_round(lim: AdaptiveLimit, latency_s: float = 0.2, busy: int | None = None) -> None:
    """One round: as many attempts as the limit allows go out (busy of them at once), and come back."""
    epochs = [lim.sent(min(i + 1, busy or lim.limit)) for i in range(lim.limit)]
    for epoch in epochs:
        lim.succeeded(epoch, latency_s)


def test_it_doubles_while_latency_holds_and_stops_at_the_ceiling():
    lim = limit(start=16, ceiling=50)
    seen = [lim.limit]
    for _ in range(4):
        full_round(lim)
        seen.append(lim.limit)
    assert seen == [16, 32, 50, 50, 50]
    assert lim.report.highest == 50 and lim.report.cuts_congestion == lim.report.cuts_latency == 0


def test_it_grows_only_when_the_limit_is_what_holds_calls_back():
    lim = limit()
    full_round(lim, busy=5)  # only 5 in flight at once: the work, not the limit, was short
    assert lim.limit == 16


def test_a_429_cuts_once_per_episode_and_growth_is_additive_after():
    clock = Clock()
    lim = limit(clock=clock)
    before = [lim.sent(i + 1) for i in range(16)]
    lim.congested(before[0], retry_after_s=1.0)
    assert lim.limit == 12  # 16 x 0.8
    lim.congested(before[1], retry_after_s=1.0)  # sent before the cut: the same burst
    assert lim.limit == 12
    after = lim.sent(1)
    lim.congested(after, retry_after_s=1.0)  # sent after it, but within the cooldown
    assert lim.limit == 12
    clock.now += 4.0
    lim.congested(lim.sent(1), retry_after_s=1.0)  # past the Retry-After, not yet past 5 s
    assert lim.limit == 12
    clock.now += 1.5
    lim.congested(lim.sent(1), retry_after_s=1.0)
    assert lim.limit == 10  # 12.8 x 0.8
    full_round(lim)
    assert lim.limit == 11  # one more a round, no more doubling
    assert lim.report.cuts_congestion == 2 and lim.report.lowest == 10


def test_rising_latency_cuts_in_proportion_and_a_steady_one_does_not():
    lim = limit(start=16)
    full_round(lim, latency_s=0.2)
    full_round(lim, latency_s=0.35)  # under twice the best round: still holds
    assert lim.limit == 64 and lim.report.cuts_latency == 0
    full_round(lim, latency_s=0.6)  # three times the best: the provider queues
    assert lim.limit == 42  # 64 x (2 x 0.2 / 0.6)
    full_round(lim, latency_s=2.0)
    assert lim.limit == 21  # never more than half at once
    assert lim.report.cuts_latency == 2


def test_latency_of_attempts_sent_under_an_older_limit_is_not_evidence():
    lim = limit(start=16)
    old = [lim.sent(16) for _ in range(16)]
    full_round(lim, latency_s=0.2)  # 16 -> 32, a new epoch
    for epoch in old:
        lim.succeeded(epoch, 5.0)  # slow, but sent before the change
    full_round(lim, latency_s=0.2)
    assert lim.limit == 64 and lim.report.cuts_latency == 0


def test_other_failures_hold_growth_without_a_cut():
    lim = limit()
    epochs = [lim.sent(16) for _ in range(17)]
    lim.troubled(epochs[-1])  # a 500 or a timeout in this round
    for epoch in epochs[:16]:
        lim.succeeded(epoch, 0.2)
    assert lim.limit == 16 and lim.report.cuts_congestion == 0


def test_it_never_falls_under_the_floor_nor_passes_the_ceiling():
    clock = Clock()
    lim = limit(start=16, ceiling=16, clock=clock)
    for _ in range(20):
        clock.now += 10
        lim.congested(lim.sent(1), retry_after_s=1)
    assert lim.limit == 8
    for _ in range(20):
        full_round(lim)
    assert lim.limit == 16
    small = limit(start=4, ceiling=4)  # a ceiling under the floor is the floor
    small.congested(small.sent(1))
    assert small.limit == 4
    slow = limit(start=16, clock=clock)
    slow.congested(slow.sent(1), retry_after_s=30)
    clock.now += 10
    slow.congested(slow.sent(1), retry_after_s=30)  # a Retry-After longer than 5 s is the cooldown
    assert slow.limit == 12
    tiny = limit(start=1, ceiling=1)
    tiny.congested(tiny.sent(1))
    assert tiny.limit == 1


def test_the_gate_holds_calls_to_the_limit_and_lets_retries_go_first():
    async def scenario():
        lim = limit(start=2, ceiling=2)
        gate = Gate(lim)
        order, peak = [], 0

        async def call(name, retry=False):
            nonlocal peak
            await gate.enter(retry=retry)
            peak = max(peak, gate.in_flight)
            order.append(name)
            await asyncio.sleep(0.01)
            gate.leave()

        await gate.enter()
        await gate.enter()  # full
        waiting = [asyncio.create_task(call(n)) for n in ("a", "b", "c")]
        await asyncio.sleep(0)
        waiting.append(asyncio.create_task(call("retry", retry=True)))
        await asyncio.sleep(0)
        gate.leave()
        gate.leave()
        await asyncio.gather(*waiting)
        return order, peak, gate.in_flight

    order, peak, left = asyncio.run(scenario())
    assert order == ["retry", "a", "b", "c"] and peak == 2 and left == 0


def test_a_cancelled_waiter_gives_its_room_back():
    async def scenario():
        gate = Gate(limit(start=1, ceiling=1))
        await gate.enter()
        waiter = asyncio.create_task(gate.enter())
        await asyncio.sleep(0)
        gate.leave()  # room handed to the waiter...
        waiter.cancel()  # ...which is cancelled before it runs
        await asyncio.gather(waiter, return_exceptions=True)
        await asyncio.wait_for(gate.enter(), 1)  # so the room is free again
        return gate.in_flight

    assert asyncio.run(scenario()) == 1


def test_the_report_says_nothing_of_an_uneventful_run_and_sums_runs_per_provider():
    quiet = CallReport()
    quiet.add(LimitReport("openai", True, 16, 64, final=16, highest=16, lowest=16, calls=3, attempts=3))
    assert quiet.lines() == []
    report = CallReport()
    report.add(LimitReport("openai", True, 16, 64, final=32, highest=32, lowest=16, calls=30, attempts=41,
                           rate_limited_calls=9, rate_limited_responses=11, waited_s=12.25, peak_in_flight=32))
    report.add(LimitReport("openai", True, 16, 64, final=12, highest=16, lowest=12, calls=10, attempts=10,
                           cuts_congestion=1, peak_in_flight=16))
    report.add(LimitReport("anthropic", True, 16, 64, final=8, highest=16, lowest=8, calls=30, attempts=30,
                           failed=1, cuts_latency=1, peak_in_flight=16))
    assert report.lines() == [
        "calls: 70 live, 9 rate-limited (11 HTTP 429, waited 12.2 s in all), 1 failed",
        "in flight per provider (adaptive): openai 16→12 (peak 32, 1 cut on 429/503); "
        "anthropic 16→8 (peak 16, 1 cut on latency)",
    ]


@pytest.mark.parametrize("start, ceiling", [(0, 4), (5, 4)])
def test_a_start_outside_its_bounds_is_refused(start, ceiling):
    with pytest.raises(ValueError):
        AdaptiveLimit("openai", start=start, ceiling=ceiling)
