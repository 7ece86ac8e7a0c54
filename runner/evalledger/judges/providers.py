"""Judge calls through the official SDKs: an adaptive limit per provider, retries until a
deadline, timeouts, structured output, budget."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import heapq
import inspect
import itertools
import logging
import math
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, Sequence

from evalledger.core.errors import EvalledgerError
from evalledger.core.output import money
from . import DEFAULT_DEADLINE_S
from . import sdks
from .limits import ADAPTIVE_CEILING, ADAPTIVE_START, CONGESTION_STATUSES, AdaptiveLimit, CallReport, Gate
from .specs import _NO_KEY, ModelSpec, _as_spec, provider_config
from .pricing import Budget, cost_of, estimate_tokens

log = logging.getLogger(__name__)

PROVIDER_ERROR = "provider_error"
BUDGET_EXHAUSTED = "budget_exhausted"
# A call its on_start declined (what is stored says it is not wanted any more): never sent, and
# nothing of it is stored.
NOT_CALLED = "not_called"

MAX_BACKOFF_S = 8.0
_MESSAGE_MAX = 300


# --- requests and results ----------------------------------------------------------------


class _Handoff:
    """Finished calls wait here for the caller, who is handed them a batch at a time, never two
    batches at once: every result then waiting of the shallowest calls (those the caller asked
    for, before the follow-ups it asked for in reply to one), in the order they finished. So an
    answer whose judges wait for it is never kept behind drafts that finished meanwhile, and the
    answers that came back together are stored together."""

    def __init__(self, handle: Callable[[list[JudgeCall], int], Any]) -> None:
        self._handle = handle  # async (batch, its depth): handles it, follow-ups launched
        self._waiting: list[tuple[int, int, JudgeCall, asyncio.Future]] = []
        self._arrivals = itertools.count()
        self._busy = False

    async def hand(self, result: JudgeCall, depth: int) -> None:
        """Return once the caller has handled result."""
        handled = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (depth, next(self._arrivals), result, handled))
        if not self._busy:
            # The first to find no batch in hand hands on every batch until none waits.
            self._busy = True
            try:
                while self._waiting:
                    depth_now = self._waiting[0][0]
                    batch = []
                    while self._waiting and self._waiting[0][0] == depth_now:
                        batch.append(heapq.heappop(self._waiting))
                    try:
                        await self._handle([call for _, _, call, _ in batch], depth_now)
                    except BaseException:
                        # Raised from this task alone, which ends the run; the batch's other
                        # results are never handled.
                        for *_, waiting in batch:
                            waiting.cancel()
                        raise
                    for *_, waiting in batch:
                        if not waiting.done():
                            waiting.set_result(None)
            finally:
                self._busy = False
        await handled


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call. key is the caller's own id (item, cycle...) echoed in the result.

    temperature=None sends none (some models refuse one); Anthropic never gets one, as
    its SDK 2.x Messages API has no such parameter. json_schema, when given, is
    sent as strict structured output, so it should be strict-compatible (every property
    required, additionalProperties false); a provider that rejects it gets plain text.
    """

    spec: ModelSpec | str
    system: str
    user: str
    json_schema: dict | None = None
    max_output_tokens: int = 1024
    temperature: float | None = None
    key: Hashable | None = None
    # Mark what the run's calls share (the system text and schema) for the provider's prompt cache:
    # for a prompt sent more than once in a few minutes (Anthropic bills a cache write at 1.25x).
    cache: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", _as_spec(self.spec))


@dataclass
class JudgeCall:
    """What one judge call produced; error_kind is None on success.

    latency_ms runs from the first request sent to the outcome, retries and waits
    included; attempts counts HTTP requests made; rate_limited counts the HTTP 429s among
    them, and waited_ms the time between a failed attempt and the next one.
    """

    spec: ModelSpec
    text: str = ""
    parsed: dict | None = None
    input_tokens: int = 0  # every prompt token, the cached ones and those written to the cache included
    output_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 0
    error_kind: str | None = None
    error_message: str | None = None
    cost_usd: float | None = None
    structured: bool = False
    key: Hashable | None = None
    index: int = -1
    rate_limited: int = 0
    waited_ms: int = 0
    cached_input_tokens: int = 0  # of input_tokens, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens, written to it
    batch: bool = False  # made through the provider's batch API (judges/batch.py), billed at its rates

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    def spent(self, recorded: bool = False) -> str:
        """How a progress line ends: recorded, not sent (the budget cap held it back), or what the
        call cost (never a made-up $0) and took."""
        if recorded:
            return "recorded"
        if self.error_kind == BUDGET_EXHAUSTED:
            return "not sent: the budget cap"
        return f"{money(self.cost_usd)}  {self.latency_ms} ms"


class CallResults(list):
    """run_calls' results, in request order (a list), with `report`: what the calls met per provider."""

    report: CallReport

    def __init__(self, calls: Iterable[JudgeCall] = (), report: CallReport | None = None) -> None:
        super().__init__(calls)
        self.report = report if report is not None else CallReport()


# --- what a command's runs of calls share ------------------------------------------------


@dataclass
class CallSession:
    """The deadline a command's flags set for its calls, and the report of all its runs of calls."""

    deadline_s: float = DEFAULT_DEADLINE_S
    report: CallReport = field(default_factory=CallReport)


_session: contextvars.ContextVar[CallSession | None] = contextvars.ContextVar("evalledger_call_session", default=None)


@contextlib.contextmanager
def call_session(deadline_s: float = DEFAULT_DEADLINE_S) -> Iterator[CallSession]:
    """Within it, every run_calls not given a deadline uses this one, and adds what its calls met
    to the session's report (a command prints it once at the end)."""
    token = _session.set(CallSession(deadline_s))
    try:
        yield _session.get()
    finally:
        _session.reset(token)


# --- the run -----------------------------------------------------------------------------

_KEY_LIKE = re.compile(r"(sk-[A-Za-z0-9_\-*.]{6,}|AIza[A-Za-z0-9_\-]{10,}|Bearer\s+\S+)")


def _one_line(message: str, secrets: Iterable[str]) -> str:
    """Collapse to one short line with every known key (and anything key-shaped) masked."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            message = message.replace(secret, "***")
    message = _KEY_LIKE.sub("***", message)
    message = " ".join(message.split())
    return message if len(message) <= _MESSAGE_MAX else message[: _MESSAGE_MAX - 1] + "…"


def _backoff(retry_number: int, base_s: float) -> float:
    # "Equal jitter": at least half the exponential step, so retries never bunch at zero.
    step = min(MAX_BACKOFF_S, base_s * (2 ** (retry_number - 1)))
    return step / 2 + random.uniform(0, step / 2)


def _check(concurrency: int | None, timeout_s: float, max_retries: int, deadline_s: float | None) -> None:
    if concurrency is not None and concurrency < 1:
        raise EvalledgerError(f"concurrency must be at least 1, got {concurrency}")
    if not timeout_s > 0:
        raise EvalledgerError(f"timeout must be positive, got {timeout_s}")
    if max_retries < 0:
        raise EvalledgerError(f"max_retries must be 0 or more, got {max_retries}")
    if deadline_s is not None and not (math.isfinite(deadline_s) and deadline_s >= 0):
        raise EvalledgerError(f"deadline must be 0 or more seconds, got {deadline_s}")


async def run_calls(
    requests: Sequence[JudgeRequest],
    *,
    concurrency: int | None = None,
    timeout_s: float,
    max_retries: int = 3,
    budget: Budget | None = None,
    on_result: Callable[[JudgeCall], Any] | None = None,
    on_results: Callable[[list[JudgeCall]], Any] | None = None,
    env: Mapping[str, str] | None = None,
    backoff_base_s: float = 0.5,
    follow_up_specs: Sequence[ModelSpec] = (),
    deadline_s: float | None = None,
    on_start: Callable[[JudgeRequest], Any] | None = None,
) -> CallResults:
    """Make every judge call and return results in request order, with what they met (`.report`).

    Each provider has its own limit on calls in flight (limits.AdaptiveLimit): concurrency=None
    starts it at 16 and lets it adapt up to 64; concurrency=N starts it at N and makes N its
    ceiling. Either way it backs off on 429s, 503s and rising latency.

    Provider failures never raise: the result carries error_kind "provider_error" (or
    "budget_exhausted" for a call the budget did not allow), its message saying why it stopped.
    Raises EvalledgerError before any call for a missing price (when the budget has a cap) or
    missing credentials. timeout_s bounds each HTTP attempt. A 429 or 5xx is retried until
    deadline_s seconds after the call's first attempt (default: the call_session's, else 600),
    after the server's Retry-After or else a jittered exponential backoff (first step
    backoff_base_s); a wait that would end past the deadline ends the call instead. Timeouts and
    connection errors are retried up to max_retries times, within the deadline too. The room in
    flight is given up while a call waits, and a retry goes ahead of calls not yet started. A
    400/422 to a structured-output request is retried once as plain text, and that model stays on
    text for the rest of the run. on_result (sync or async) sees each result as it finishes, one
    at a time, a result of `requests` before any follow-up's result waiting with it; an exception
    from it cancels the run and propagates. It may return more requests (follow-ups, e.g. the
    judges of an answer just stored), which join the same pool at once, so no call waits for a
    whole phase to end. on_results, instead of on_result, is given every result waiting at once
    (all of one depth: `requests`' own, or follow-ups', in the order they finished), so it can
    store them together, and returns one list of follow-ups per result (or None); follow_up_specs names the models they may use, checked
    (price, credentials) with the rest before any call. on_start (sync) is told of each call just
    before its first request is sent (a call the budget does not allow is never started), so a
    caller can record it as started; an exception from it ends the run, and False from it leaves the
    call unsent (its result's error_kind is NOT_CALLED).
    """
    session = _session.get()
    if deadline_s is None:
        deadline_s = session.deadline_s if session is not None else DEFAULT_DEADLINE_S
    _check(concurrency, timeout_s, max_retries, deadline_s)
    if on_result is not None and on_results is not None:
        raise EvalledgerError("run_calls takes on_result or on_results, not both")
    if not requests:
        return CallResults()
    specs = [r.spec for r in requests] + list(follow_up_specs)
    if budget is not None and budget.cap_usd is not None:
        budget.check_prices(dict.fromkeys(specs))
    configs = {s.provider: provider_config(s.provider, env) for s in specs}
    secrets = [c.api_key for c in configs.values() if c.api_key != _NO_KEY]
    sdks.preload([sdks.sdk_of(provider) for provider in configs])  # in the order of first need

    gates = {provider: Gate(AdaptiveLimit(provider, start=concurrency or ADAPTIVE_START,
                                          ceiling=concurrency or ADAPTIVE_CEILING, adaptive=concurrency is None))
             for provider in configs}
    clients: dict[str, asyncio.Task] = {}  # one per provider per run, made on first use
    text_only: set[str] = set()  # specs that refused structured output this run

    def client_for(provider: str) -> asyncio.Task:
        if provider not in clients:
            # In a thread: the first client of a provider may wait for its SDK's import.
            clients[provider] = asyncio.ensure_future(asyncio.to_thread(sdks.make_client, configs[provider], timeout_s))
        return clients[provider]

    async def attempt(client: Any, spec: ModelSpec, req: JudgeRequest, structured: bool) -> sdks.Reply:
        try:
            # The SDK's timeout is per phase (connect, read...); this one bounds the whole attempt.
            async with asyncio.timeout(timeout_s):
                return await sdks.attempt(client, spec, req.system, req.user,
                                          json_schema=req.json_schema if structured else None,
                                          max_output_tokens=req.max_output_tokens, temperature=req.temperature,
                                          cache=req.cache)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a provider failure, whatever its shape, is a result
            raise sdks.classify(exc, spec.provider, timeout_s) from None

    async def one(index: int, req: JudgeRequest) -> JudgeCall:
        spec: ModelSpec = req.spec  # type: ignore[assignment]
        result = JudgeCall(spec=spec, key=req.key, index=index)
        gate = gates[spec.provider]
        report = gate.limit.report
        report.calls += 1
        structured = False
        reservation = None
        retries = 0  # of timeouts and connection errors, which max_retries bounds
        http_retries = 0  # of 429s and 5xx, which the deadline bounds
        started = failed_at = None
        try:
            client = await client_for(spec.provider)
            while True:
                epoch = await gate.enter(retry=started is not None)
                try:
                    if failed_at is not None:
                        waited = time.monotonic() - failed_at
                        result.waited_ms += round(waited * 1000)
                        report.waited_s += waited
                    if budget is not None and started is None:
                        est_in = estimate_tokens(req.system) + estimate_tokens(req.user)
                        reservation = budget.reserve(spec, est_in, req.max_output_tokens)
                        if reservation is None:
                            result.error_kind = BUDGET_EXHAUSTED
                            result.error_message = f"skipped: projected cost of {spec.spec} would pass the budget cap"
                            return result
                    if started is None:
                        if on_start is not None and on_start(req) is False:
                            result.error_kind = NOT_CALLED
                            result.error_message = f"skipped: {spec.spec} was not called"
                            return result
                        started = time.monotonic()
                        # Decided now, not when queued: another call may have found the model refuses it.
                        structured = req.json_schema is not None and spec.spec not in text_only
                    result.attempts += 1
                    report.attempts += 1
                    sent_at = time.monotonic()
                    try:
                        reply = await attempt(client, spec, req, structured)
                    except sdks.AttemptError as err:
                        failure = err
                    else:
                        failure = None
                    # Told before the room is given up: a limit that grows lets more calls in at once.
                    if failure is None:
                        gate.limit.succeeded(epoch, time.monotonic() - sent_at)
                    elif failure.status in CONGESTION_STATUSES:
                        gate.limit.congested(epoch, failure.retry_after)
                    elif failure.retryable:
                        gate.limit.troubled(epoch)
                finally:
                    gate.leave()
                if failure is None:
                    result.text, result.parsed = reply.text, reply.parsed
                    result.input_tokens, result.output_tokens = reply.input_tokens, reply.output_tokens
                    result.cached_input_tokens, result.cache_write_tokens = (reply.cached_input_tokens,
                                                                             reply.cache_write_tokens)
                    result.structured = structured
                    return result
                failed_at = time.monotonic()
                if structured and failure.status in (400, 422):
                    text_only.add(spec.spec)
                    structured = False
                    log.info("%s refused structured output (%s); retrying as text", spec.spec, failure.status)
                    continue
                if failure.status == 429:
                    if result.rate_limited == 0:
                        report.rate_limited_calls += 1
                    report.rate_limited_responses += 1
                    result.rate_limited += 1
                message = _one_line(failure.message, secrets)
                wait, why_not = _next_wait(failure, http_retries if failure.http_failure else retries,
                                           max_retries, backoff_base_s, started + deadline_s - failed_at, deadline_s)
                if wait is None:
                    result.error_kind = PROVIDER_ERROR
                    result.error_message = f"{message} (attempt {result.attempts}{why_not})"
                    return result
                if failure.http_failure:
                    http_retries += 1
                else:
                    retries += 1
                log.info("%s: %s; retry in %.2fs", spec.spec, message, wait)
                await asyncio.sleep(wait)
        finally:
            if started is not None:
                result.latency_ms = round((time.monotonic() - started) * 1000)
            result.cost_usd = cost_of(spec, result.input_tokens, result.output_tokens, result.cached_input_tokens,
                                      result.cache_write_tokens)
            if reservation is not None:
                budget.settle(reservation, result.cost_usd)
            if result.error_kind == PROVIDER_ERROR:
                report.failed += 1

    tasks: list[asyncio.Task] = []

    async def handle(batch: list[JudgeCall], depth: int) -> None:
        if on_results is not None:
            asked = on_results(batch)
            if inspect.isawaitable(asked):
                asked = await asked
            asked = list(asked) if asked is not None else [()] * len(batch)
            if len(asked) != len(batch):
                raise EvalledgerError(f"on_results returned {len(asked)} lists of follow-ups for {len(batch)} results")
            for follow_ups in asked:
                for follow_up in follow_ups or ():
                    launch(follow_up, depth + 1)
            return
        for result in batch:
            outcome = on_result(result)
            if inspect.isawaitable(outcome):
                outcome = await outcome
            for follow_up in outcome or ():
                launch(follow_up, depth + 1)

    handoff = _Handoff(handle)

    def launch(req: JudgeRequest, depth: int) -> None:
        tasks.append(asyncio.create_task(one_and_report(len(tasks), req, depth)))

    async def one_and_report(index: int, req: JudgeRequest, depth: int) -> JudgeCall:
        result = await one(index, req)
        if on_result is not None or on_results is not None:
            await handoff.hand(result, depth)
        return result

    for request in requests:
        launch(request, 0)
    try:
        # Follow-ups are launched before the call that asked for them finishes, so the run is over
        # only when no task is left unfinished.
        while pending := [t for t in tasks if not t.done()]:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            failed = next((t for t in done if not t.cancelled() and t.exception() is not None), None)
            if failed is not None:
                raise failed.exception()
        report = CallReport()
        for gate in gates.values():
            if gate.limit.report.calls:
                report.add(gate.limit.report)
        if session is not None:
            for provider_report in report.providers.values():
                session.report.add(provider_report)
        return CallResults((t.result() for t in tasks), report)
    except BaseException:
        # on_result failed or the run was cancelled: stop every call before closing clients.
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        for made in clients.values():
            if made.done() and not made.cancelled() and made.exception() is None:
                await made.result().close()
            else:
                made.cancel()


def _next_wait(failure: sdks.AttemptError, retried: int, max_retries: int, backoff_base_s: float,
               left_s: float, deadline_s: float) -> tuple[float | None, str]:
    """How long to wait before the next attempt, or None and why there is none."""
    if not failure.retryable:
        return None, ""
    if not failure.http_failure and retried >= max_retries:
        return None, ""  # a timeout or connection error, retried max_retries times already
    if failure.retry_after is None:
        wait = _backoff(retried + 1, backoff_base_s)
    else:
        # Never earlier than asked; a little later so a burst of 429s spreads out.
        wait = failure.retry_after * random.uniform(1.0, 1.1)
    if wait > left_s:
        if failure.retry_after is not None and 0 < left_s < failure.retry_after:
            return None, f"; Retry-After {failure.retry_after:g}s is past the {deadline_s:g}s deadline"
        return None, f"; still failing at the {deadline_s:g}s deadline"
    return wait, ""
