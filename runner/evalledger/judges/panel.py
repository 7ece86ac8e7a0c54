"""The judge panel, shared by every suite: live or recorded judges, concurrent calls, progress.

`Panel` is the one entry point a suite's run uses: it is built from the run's options (the models,
live or recorded, the budget, how calls are made), and the suite passes in only what is its own
(its prompts and schema, what a call's result stores, what a progress line says).

Each panel model is judged live when the environment has credentials for its provider (see
specs.has_live_credentials), else from the recorded replies shipped with evalledger
(fixtures/recorded_judges.json): offline by default. A recorded reply is looked up by model and
by the SHA-256 of the rendered prompt, falling back to the model's default reply; a model with
neither a key nor a recording is an error before any call. Every result, live or recorded,
goes through the same on_result callback (which INSERTs it) as soon as it exists.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import math
import os
import sys
import time
from decimal import Decimal
from importlib import resources
from typing import Any, Callable, Iterable, Mapping, Sequence, TextIO

from evalledger.core.errors import EvalledgerError

from . import LIVE, RECORDED, context, money, sdks
from .pricing import Budget
from .repair import repair_json
from .providers import NOT_CALLED, CallResults, JudgeCall, JudgeRequest, run_calls
from .specs import _PROVIDERS, ModelSpec, has_live_credentials, parse_model_spec

# Each judged suite ships its recorded replies as this file of its own package.
RECORDED_FILE = "fixtures/recorded_judges.json"
_RAW_EXCERPT = 2000


def parse_panel(text: str | Sequence[str]) -> list[ModelSpec]:
    """'a,b,c' (or a list) as model specs; empty entries and duplicates are errors."""
    items = text.split(",") if isinstance(text, str) else list(text)
    specs = [parse_model_spec(item) for item in items if item.strip()]
    if not specs:
        raise EvalledgerError("--models: the panel needs at least one model")
    seen: set[str] = set()
    for spec in specs:
        if spec.spec in seen:
            raise EvalledgerError(f"--models: {spec.spec} is on the panel twice")
        seen.add(spec.spec)
    return specs


def prompt_sha256(system: str, user: str) -> str:
    """The key of a rendered prompt in the recordings."""
    return hashlib.sha256(f"{system}\x00{user}".encode("utf-8")).hexdigest()


@functools.cache
def recordings(suite: str) -> dict:
    """A suite package's recorded replies: {spec: {"by_prompt_sha256": {...}, "default": {...}}}."""
    data = json.loads(resources.files(suite).joinpath(RECORDED_FILE).read_text("utf-8"))
    return data["models"]


def resolve_modes(specs: Iterable[ModelSpec], suite: str, mode: str = "auto",
                  env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Per model: live or recorded, or raise naming what is missing.

    auto is live: a model without its API key stops the run before anything is written, naming
    the keys that would make it live. The recorded replies were written for the demo's own corpus,
    so they judge only when asked for by name (--judges recorded, as the demo does): a user's
    corpus is never passed by canned replies that never read it.
    """
    env = os.environ if env is None else env
    specs = list(specs)
    modes = {}
    if mode == "auto":
        missing = [f"{s.spec} (set {' or '.join(_PROVIDERS[s.provider].key_vars)})" for s in specs
                   if not has_live_credentials(s, env)]
        if missing:
            raise EvalledgerError(
                f"no API key for {', '.join(missing)}: set {'it' if len(missing) == 1 else 'them'} for live judges, "
                f"or pass --judges recorded to use the replies recorded with evalledger's demo (written for the "
                f"demo's corpus, not yours)")
    for spec in specs:
        live = has_live_credentials(spec, env)
        recorded = spec.spec in recordings(suite)
        if mode == LIVE and not live:
            info = _PROVIDERS[spec.provider]
            raise EvalledgerError(f"--judges live: no credentials for {spec.spec}: set {' or '.join(info.key_vars)}")
        if mode == RECORDED and not recorded:
            raise EvalledgerError(f"--judges recorded: no recorded replies for {spec.spec} in {RECORDED_FILE}")
        modes[spec.spec] = RECORDED if mode == RECORDED else LIVE
    # The run will call these providers: their SDKs start importing now, in a background thread,
    # while the command reads its input and opens its run (seconds saved before the first call).
    sdks.preload([sdks.sdk_of(s.provider) for s in specs if modes[s.spec] == LIVE])
    return modes


def describe_modes(specs: Sequence[ModelSpec], modes: Mapping[str, str]) -> str | None:
    """The line that says which judges answer from recordings rather than live (None: all live)."""
    recorded = [s.spec for s in specs if modes[s.spec] == RECORDED]
    if not recorded:
        return None
    if len(recorded) == len(specs):
        # Recorded replies judge only when asked for by name (resolve_modes): that is the reason.
        return ("judges: recorded replies shipped with evalledger, not live calls "
                "(asked for with --judges recorded; leave it out for live judges)")
    return f"judges: recorded replies for {', '.join(recorded)} (no API key), live calls for the rest"


def recorded_call(req: JudgeRequest, index: int, suite: str) -> JudgeCall:
    """A recorded reply as a JudgeCall: parsed like a live one, costing nothing."""
    spec: ModelSpec = req.spec  # type: ignore[assignment]
    entry = recordings(suite)[spec.spec]
    reply = entry.get("by_prompt_sha256", {}).get(prompt_sha256(req.system, req.user)) or entry["default"]
    text = reply["text"]
    return JudgeCall(spec=spec, text=text, parsed=repair_json(text), input_tokens=int(reply.get("input_tokens", 0)),
                     output_tokens=int(reply.get("output_tokens", 0)), latency_ms=0, attempts=0, cost_usd=0.0,
                     key=req.key, index=index)


async def run_panel(
    requests: Sequence[JudgeRequest],
    modes: Mapping[str, str],
    *,
    suite: str,
    on_result: Callable[[JudgeCall], Any],
    concurrency: int | None = None,
    timeout_s: float,
    max_retries: int = 3,
    budget: Budget | None,
    deadline_s: float | None = None,
    on_start: Callable[[JudgeRequest], Any] | None = None,
) -> CallResults:
    """Recorded replies first (instant), then the live calls (run_calls: concurrency None adapts
    per provider, N is a ceiling); each result goes to on_result as it arrives, and each live call
    to on_start just before it is sent. The results' `report` says what the live calls met (rate
    limits, waits, limits in flight)."""
    recorded = [r for r in requests if modes[r.spec.spec] == RECORDED]  # type: ignore[union-attr]
    live = [r for r in requests if modes[r.spec.spec] == LIVE]  # type: ignore[union-attr]
    results = CallResults()
    for index, req in enumerate(recorded):
        call = recorded_call(req, index, suite)
        on_result(call)
        results.append(call)
    if live:
        made = await run_calls(live, concurrency=concurrency, timeout_s=timeout_s, max_retries=max_retries,
                               budget=budget, on_result=on_result, deadline_s=deadline_s, on_start=on_start)
        results += made
        results.report = made.report
    return results


def json_safe(value: Any) -> Any:
    """A parsed reply PostgreSQL's jsonb accepts: NaN and infinities become strings (so the
    database rules them out of scale), NUL characters are dropped."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def raw_excerpt(call: JudgeCall) -> str | None:
    """The start of a reply that did not parse, kept for diagnosis."""
    if call.parsed is not None or not call.text:
        return None
    return call.text[:_RAW_EXCERPT].replace("\x00", "")


class Progress:
    """Calls done and cost so far: a bar redrawn on a terminal, else nothing (plain lines are
    the caller's)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.done = 0
        self.cost = 0.0
        self.label = ""
        self._last = 0.0

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self._draw(force=True)

    def advance(self, cost: float | None) -> None:
        self.done += 1
        self.cost += cost or 0.0
        self._draw(force=self.done == self.total)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.05:
            return
        self._last = now
        width = 24
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} calls  ${self.cost:.4f}\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def run_sync(coro) -> Any:
    """Run a coroutine to completion from synchronous code."""
    return asyncio.run(coro)


class Panel:
    """The judges of one run: which models (--models), live or recorded (--judges), the budget they
    spend from (--budget-usd), how their calls are made (--concurrency, --timeout, --retries), and
    the suite package whose recorded replies answer for them.

    Everything is checked when it is built, before the run writes a row or makes a call: the panel
    parses, every model has a price when the budget has a cap, every live model its API key.
    A budget passed in whole is shared with calls outside the panel (brain-eval's brain under
    test): its caller owns it, and the calls check its prices before the first of them is made.
    """

    def __init__(self, models: str | Sequence[str], *, suite: str, judges: str = "auto",
                 budget_usd: float | None = None, budget: Budget | None = None, concurrency: int | None = None,
                 timeout_s: float = 120.0, max_retries: int = 3, progress_stream: TextIO | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.suite = suite
        self.specs = parse_panel(models)
        if budget is None:
            budget = Budget(budget_usd)
            if budget.cap_usd is not None:
                budget.check_prices(self.specs)  # before any call, and before any row
        self.budget = budget
        self.modes = resolve_modes(self.specs, suite, judges, env)
        self.concurrency, self.timeout_s, self.max_retries = concurrency, timeout_s, max_retries
        self.progress = Progress(len(self.specs), progress_stream)

    @property
    def models(self) -> list[str]:
        """The panel's model specs, in the order given."""
        return [s.spec for s in self.specs]

    @property
    def judges(self) -> str:
        """How the run is judged, as its identity records it: recorded only when every judge is."""
        return RECORDED if all(m == RECORDED for m in self.modes.values()) else LIVE

    def recorded(self, model: str) -> bool:
        """Whether this model of the panel answers from its recorded replies."""
        return self.modes[model] == RECORDED

    def describe(self) -> str | None:
        """The line that says which judges answer from recordings (None: all live)."""
        return describe_modes(self.specs, self.modes)

    def check_prompt(self, system: str, user: str, *, max_output_tokens: int, max_chars: int | None,
                     warn: Callable[[str], None], what: str) -> None:
        """Refuse a prompt over max_chars (default context.DEFAULT_MAX_PROMPT_CHARS), naming `what` to
        shrink; warn about each model whose context it would not fit."""
        context.check_prompt(self.specs, system, user, max_output_tokens=max_output_tokens,
                             max_chars=max_chars or context.DEFAULT_MAX_PROMPT_CHARS, warn=warn, what=what)

    def requests(self, system: str, user: str, *, json_schema: dict,
                 max_output_tokens: int = JudgeRequest.max_output_tokens,
                 models: Iterable[str] | None = None, key: Callable[[ModelSpec], Any] = lambda spec: spec.spec,
                 cache: bool = True) -> list[JudgeRequest]:
        """One request per panel model (or per model of `models`, in the panel's order) for one prompt.
        cache marks the system text for the providers' prompt caches (JudgeRequest.cache): leave it
        on when the run sends it to a model more than once."""
        wanted = None if models is None else set(models)
        return [JudgeRequest(s, system=system, user=user, json_schema=json_schema, max_output_tokens=max_output_tokens,
                             key=key(s), cache=cache) for s in self.specs if wanted is None or s.spec in wanted]

    def recorded_call(self, request: JudgeRequest, index: int) -> JudgeCall:
        """A model's recorded reply to one request, as a call that cost nothing."""
        return recorded_call(request, index, self.suite)

    async def calls(self, requests: Sequence[JudgeRequest], *, on_result: Callable[[JudgeCall], Any],
                    on_results: Callable[[list[JudgeCall]], Any] | None = None,
                    on_start: Callable[[JudgeRequest], Any] | None = None) -> CallResults:
        """Recorded replies first, each to on_result; then the live calls with the panel's settings,
        each result to on_result as it arrives (or, given on_results, each batch that arrived
        together to it), each live call to on_start just before it is sent."""
        if on_results is None:
            return await run_panel(requests, self.modes, suite=self.suite, on_result=on_result, on_start=on_start,
                                   concurrency=self.concurrency, timeout_s=self.timeout_s,
                                   max_retries=self.max_retries, budget=self.budget)
        results = CallResults()
        for index, request in enumerate(r for r in requests if self.recorded(r.spec.spec)):  # type: ignore[union-attr]
            call = self.recorded_call(request, index)
            on_result(call)
            results.append(call)
        live = [r for r in requests if not self.recorded(r.spec.spec)]  # type: ignore[union-attr]
        if live:
            made = await run_calls(live, concurrency=self.concurrency, timeout_s=self.timeout_s,
                                   max_retries=self.max_retries, budget=self.budget, on_results=on_results,
                                   on_start=on_start)
            results += made
            results.report = made.report
        return results

    def judge(self, requests: Sequence[JudgeRequest], *, label: str,
              on_result: Callable[[JudgeCall, bool], str | None],
              on_start: Callable[[JudgeRequest, Decimal], Any] | None = None,
              say: Callable[[str], None] = lambda line: None) -> CallResults:
        """Make the requests' calls, drawing the progress bar as label; each result goes to
        on_result(call, recorded) as it arrives, which stores it and returns its line (said where no
        bar is drawn); each live call to on_start(request, projected cost) just before it is sent,
        which returns False to leave it unsent (what is stored says it is not wanted any more)."""

        def started(request: JudgeRequest) -> Any:
            return on_start(request, money.estimate(request.spec, request.system, request.user,  # type: ignore[misc]
                                                    request.max_output_tokens))

        def arrived(call: JudgeCall) -> None:
            if call.error_kind == NOT_CALLED:
                self.progress.advance(call.cost_usd)
                return
            line = on_result(call, self.recorded(call.spec.spec))  # type: ignore[union-attr]
            self.progress.advance(call.cost_usd)
            if line and not self.progress.enabled:
                say(line)

        self.progress.start(label, len(requests))
        try:
            return run_sync(self.calls(requests, on_result=arrived, on_start=started if on_start else None))
        finally:
            self.progress.finish()

    def batchable(self, requests: Sequence[JudgeRequest]) -> list[JudgeRequest]:
        """The requests a batch may carry: live ones, to a provider with a batch API (judges/batch.py)."""
        from .batch import BATCH_PROVIDERS

        return [r for r in requests if not self.recorded(r.spec.spec)  # type: ignore[union-attr]
                and r.spec.provider in BATCH_PROVIDERS]  # type: ignore[union-attr]

    def batch(self, requests: Sequence[JudgeRequest], *, conn: Any, suite: str, run_key: str,
              item: Callable[[JudgeRequest], str], on_submit: Callable[[JudgeRequest, Decimal], Any],
              on_result: Callable[[JudgeCall], str | None], options: Any,
              say: Callable[[str], None] = lambda line: None, store_failures: bool = True,
              one_by_one: Callable[[list[JudgeRequest]], Any] | None = None) -> list[JudgeRequest]:
        """Make the live requests to providers with a batch API through it (judges/batch.py: the run's
        batches are in the ledger before the runner waits, on conn, and resumed when the same run
        comes again); return the requests left to `judge` one by one: what a batch failed with
        --batch-fallback sync (store_failures False: a failure that is retried is not given to
        on_result, only its retry's outcome), and the requests no batch carries (recorded judges,
        providers without a batch API) unless one_by_one asks those itself: it is given them once the
        run's resumed batches are held against the budget (BatchRun.run), before the batches are
        waited for, so that they are asked only as far as the budget holds beside them."""
        from . import batch

        batchable = self.batchable(requests)
        rest = [r for r in requests if r not in batchable]
        first = (lambda: one_by_one(rest)) if one_by_one is not None else None
        left = [] if one_by_one is not None else rest
        if not batchable:
            if first is not None:
                first()
            return left
        runner = batch.BatchRun(batch.Ledger(conn, suite, run_key), item=item, on_submit=on_submit, store=on_result,
                                say=say, options=options, timeout_s=self.timeout_s, store_failures=store_failures,
                                budget=self.budget)
        return left + runner.run(batchable, before=first)
