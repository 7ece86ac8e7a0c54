"""Judge calls through the official SDKs: retry, timeout, structured output, budget."""

from __future__ import annotations

import asyncio
import email.utils
import functools
import inspect
import json
import logging
import random
import re
import ssl
import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import anthropic
import openai

from evalledger.core.errors import EvalledgerError
from .repair import repair_json
from .specs import _NO_KEY, _PROVIDERS, ModelSpec, ProviderConfig, _as_spec, provider_config
from .pricing import Budget, cost_of, estimate_tokens

log = logging.getLogger(__name__)

PROVIDER_ERROR = "provider_error"
BUDGET_EXHAUSTED = "budget_exhausted"

# A Retry-After longer than this is a quota, not a hiccup: give up rather than stall the run.
MAX_RETRY_AFTER_S = 60.0
MAX_BACKOFF_S = 8.0
_MESSAGE_MAX = 300


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # The SDKs' own default (httpx2's), built once: loading the CA store costs ~50 ms of
    # CPU per client, which would stall the event loop at the start of every run.
    import httpx2  # the HTTP stack both SDKs are built on

    return httpx2.create_ssl_context()


def _make_client(cfg: ProviderConfig, timeout_s: float) -> Any:
    sdk = anthropic if _PROVIDERS[cfg.provider].sdk == "anthropic" else openai
    client_class = anthropic.AsyncAnthropic if sdk is anthropic else openai.AsyncOpenAI
    # max_retries=0: the retry policy and the attempt count are ours, not the SDK's.
    return client_class(api_key=cfg.api_key, base_url=cfg.base_url, max_retries=0, timeout=timeout_s,
                        http_client=sdk.DefaultAsyncHttpxClient(verify=_tls_context()))


# --- requests and results ----------------------------------------------------------------


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", _as_spec(self.spec))


@dataclass
class JudgeCall:
    """What one judge call produced; error_kind is None on success.

    latency_ms runs from the first request sent to the outcome, retries and waits
    included; attempts counts HTTP requests made.
    """

    spec: ModelSpec
    text: str = ""
    parsed: dict | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 0
    error_kind: str | None = None
    error_message: str | None = None
    cost_usd: float | None = None
    structured: bool = False
    key: Hashable | None = None
    index: int = -1

    @property
    def ok(self) -> bool:
        return self.error_kind is None


@dataclass
class _Reply:
    text: str
    parsed: dict | None
    input_tokens: int
    output_tokens: int


class _AttemptError(Exception):
    """An attempt failed; retryable says whether another attempt may help."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


# --- one attempt -------------------------------------------------------------------------


def _schema_name(schema: dict) -> str:
    title = schema.get("title")
    name = re.sub(r"[^A-Za-z0-9_-]", "_", title)[:64] if isinstance(title, str) and title else ""
    return name or "verdict"


async def _attempt_openai(client: Any, spec: ModelSpec, req: JudgeRequest, structured: bool) -> _Reply:
    messages = []
    if req.system:
        messages.append({"role": "system", "content": req.system})
    messages.append({"role": "user", "content": req.user})
    kwargs: dict[str, Any] = {"model": spec.model, "messages": messages}
    # OpenAI deprecated max_tokens (its reasoning models refuse it); compatible servers
    # (Gemini, vLLM, Ollama) all understand max_tokens.
    kwargs["max_completion_tokens" if spec.provider == "openai" else "max_tokens"] = req.max_output_tokens
    if req.temperature is not None:
        kwargs["temperature"] = req.temperature
    if structured:
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": _schema_name(req.json_schema), "schema": req.json_schema, "strict": True},
        }
    resp = await client.chat.completions.create(**kwargs)
    message = resp.choices[0].message if resp.choices else None
    text = (message.content or getattr(message, "refusal", None) or "") if message else ""
    usage = resp.usage
    return _Reply(
        text=text,
        parsed=repair_json(text),
        input_tokens=(usage.prompt_tokens or 0) if usage else 0,
        output_tokens=(usage.completion_tokens or 0) if usage else 0,
    )


async def _attempt_anthropic(client: Any, spec: ModelSpec, req: JudgeRequest, structured: bool) -> _Reply:
    kwargs: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": req.max_output_tokens,
        "messages": [{"role": "user", "content": req.user}],
    }
    if req.system:
        kwargs["system"] = req.system
    # No temperature: the Messages API of SDK 2.x has no such parameter any more.
    name = None
    if structured:
        # Anthropic's structured output: one tool whose input is the verdict, forced.
        name = _schema_name(req.json_schema)
        kwargs["tools"] = [{"name": name, "description": "Record your verdict.", "input_schema": req.json_schema}]
        kwargs["tool_choice"] = {"type": "tool", "name": name}
    resp = await client.messages.create(**kwargs)
    texts: list[str] = []
    parsed = None
    for block in resp.content or ():
        if block.type == "tool_use" and block.name == name and isinstance(block.input, dict):
            parsed = dict(block.input)
        elif block.type == "text":
            texts.append(block.text)
    text = json.dumps(parsed) if parsed is not None else "".join(texts)
    usage = resp.usage
    return _Reply(
        text=text,
        parsed=parsed if parsed is not None else repair_json(text),
        input_tokens=(usage.input_tokens or 0) if usage else 0,
        output_tokens=(usage.output_tokens or 0) if usage else 0,
    )


def _retry_after(headers: Any) -> float | None:
    """Seconds from retry-after-ms, or Retry-After as seconds or an HTTP date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_detail(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        if isinstance(inner.get("message"), str):
            return inner["message"]
    return str(exc)


def _classify(exc: BaseException, timeout_s: float) -> _AttemptError:
    if isinstance(exc, (openai.APIStatusError, anthropic.APIStatusError)):
        status = exc.status_code
        retryable = status in (408, 429) or status >= 500
        return _AttemptError(
            f"HTTP {status}: {_error_detail(exc)}",
            retryable=retryable,
            status=status,
            retry_after=_retry_after(getattr(exc.response, "headers", None)),
        )
    if isinstance(exc, (TimeoutError, openai.APITimeoutError, anthropic.APITimeoutError)):
        return _AttemptError(f"timeout after {timeout_s:g}s", retryable=True)
    if isinstance(exc, (openai.APIConnectionError, anthropic.APIConnectionError)):
        cause = exc.__cause__ or exc
        return _AttemptError(f"connection error: {type(cause).__name__}: {cause}", retryable=True)
    return _AttemptError(f"{type(exc).__name__}: {exc}", retryable=False)


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


# --- the run -----------------------------------------------------------------------------


async def run_calls(
    requests: Sequence[JudgeRequest],
    *,
    concurrency: int,
    timeout_s: float,
    max_retries: int,
    budget: Budget | None = None,
    on_result: Callable[[JudgeCall], Any] | None = None,
    env: Mapping[str, str] | None = None,
    backoff_base_s: float = 0.5,
    follow_up_specs: Sequence[ModelSpec] = (),
    on_start: Callable[[JudgeRequest], Any] | None = None,
) -> list[JudgeCall]:
    """Make every judge call, at most `concurrency` in flight, and return results in request order.

    Provider failures never raise: the result carries error_kind "provider_error" (or
    "budget_exhausted" for a call the budget did not allow). Raises EvalledgerError before
    any call for a missing price (when the budget has a cap) or missing credentials.
    timeout_s bounds each HTTP attempt; 408/429/5xx, timeouts and connection errors are
    retried up to max_retries times with jittered exponential backoff (first step
    backoff_base_s), or after the server's Retry-After; a Retry-After over a minute
    ends the call instead. The concurrency slot is released while a call waits to
    retry. A 400/422 to a structured-output request is retried once as plain text, and
    that model stays on text for the rest of the run. on_result (sync or async) sees
    each result as it finishes, one at a time; an exception from it cancels the run and
    propagates. It may return more requests (follow-ups, e.g. the judges of an answer just
    stored), which join the same pool at once, so no call waits for a whole phase to end;
    follow_up_specs names the models they may use, checked (price, credentials) with the rest
    before any call. Results come back in the order the requests were made. on_start (sync) is
    told of each call just before its first request is sent (a call the budget does not allow is
    never started), so a caller can record it as started; an exception from it ends the run.
    """
    if concurrency < 1:
        raise EvalledgerError(f"concurrency must be at least 1, got {concurrency}")
    if not timeout_s > 0:
        raise EvalledgerError(f"timeout must be positive, got {timeout_s}")
    if max_retries < 0:
        raise EvalledgerError(f"max_retries must be 0 or more, got {max_retries}")
    if not requests:
        return []
    specs = [r.spec for r in requests] + list(follow_up_specs)
    if budget is not None and budget.cap_usd is not None:
        budget.check_prices(dict.fromkeys(specs))
    configs = {s.provider: provider_config(s.provider, env) for s in specs}
    secrets = [c.api_key for c in configs.values() if c.api_key != _NO_KEY]

    clients: dict[str, Any] = {}  # one per provider per run, made on first use
    text_only: set[str] = set()  # specs that refused structured output this run
    semaphore = asyncio.Semaphore(concurrency)
    result_lock = asyncio.Lock()

    def client_for(provider: str) -> Any:
        if provider not in clients:
            clients[provider] = _make_client(configs[provider], timeout_s)
        return clients[provider]

    async def attempt(spec: ModelSpec, req: JudgeRequest, structured: bool) -> _Reply:
        client = client_for(spec.provider)
        call = _attempt_anthropic if _PROVIDERS[spec.provider].sdk == "anthropic" else _attempt_openai
        try:
            # The SDK's timeout is per phase (connect, read...); this one bounds the whole attempt.
            async with asyncio.timeout(timeout_s):
                return await call(client, spec, req, structured)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a provider failure, whatever its shape, is a result
            raise _classify(exc, timeout_s) from None

    async def one(index: int, req: JudgeRequest) -> JudgeCall:
        spec: ModelSpec = req.spec  # type: ignore[assignment]
        result = JudgeCall(spec=spec, key=req.key, index=index)
        structured = False
        reservation = None
        retries = 0
        started = None
        try:
            while True:
                async with semaphore:
                    if budget is not None and started is None:
                        est_in = estimate_tokens(req.system) + estimate_tokens(req.user)
                        reservation = budget.reserve(spec, est_in, req.max_output_tokens)
                        if reservation is None:
                            result.error_kind = BUDGET_EXHAUSTED
                            result.error_message = f"skipped: projected cost of {spec.spec} would pass the budget cap"
                            return result
                    if started is None:
                        if on_start is not None:
                            on_start(req)
                        started = time.monotonic()
                        # Decided now, not when queued: another call may have found the model refuses it.
                        structured = req.json_schema is not None and spec.spec not in text_only
                    result.attempts += 1
                    try:
                        reply = await attempt(spec, req, structured)
                    except _AttemptError as err:
                        failure = err
                    else:
                        failure = None
                if failure is None:
                    result.text, result.parsed = reply.text, reply.parsed
                    result.input_tokens, result.output_tokens = reply.input_tokens, reply.output_tokens
                    result.structured = structured
                    return result
                if structured and failure.status in (400, 422):
                    text_only.add(spec.spec)
                    structured = False
                    log.info("%s refused structured output (%s); retrying as text", spec.spec, failure.status)
                    continue
                wait = None
                if failure.retryable and retries < max_retries:
                    if failure.retry_after is None:
                        wait = _backoff(retries + 1, backoff_base_s)
                    elif failure.retry_after <= MAX_RETRY_AFTER_S:
                        # Never earlier than asked; a little later so a burst of 429s spreads out.
                        wait = failure.retry_after * random.uniform(1.0, 1.1)
                message = _one_line(failure.message, secrets)
                if wait is None:
                    result.error_kind = PROVIDER_ERROR
                    if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER_S:
                        message += f" (Retry-After {failure.retry_after:.0f}s is over {MAX_RETRY_AFTER_S:.0f}s)"
                    result.error_message = f"{message} (attempt {result.attempts})"
                    return result
                retries += 1
                log.info("%s: %s; retry %d/%d in %.2fs", spec.spec, message, retries, max_retries, wait)
                await asyncio.sleep(wait)
        finally:
            if started is not None:
                result.latency_ms = round((time.monotonic() - started) * 1000)
            result.cost_usd = cost_of(spec, result.input_tokens, result.output_tokens)
            if reservation is not None:
                budget.settle(reservation, result.cost_usd)

    tasks: list[asyncio.Task] = []

    def launch(req: JudgeRequest) -> None:
        tasks.append(asyncio.create_task(one_and_report(len(tasks), req)))

    async def one_and_report(index: int, req: JudgeRequest) -> JudgeCall:
        result = await one(index, req)
        if on_result is not None:
            async with result_lock:  # one at a time: a caller may share one DB connection
                outcome = on_result(result)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
                for follow_up in outcome or ():
                    launch(follow_up)
        return result

    for request in requests:
        launch(request)
    try:
        # Follow-ups are launched before the call that asked for them finishes, so the run is over
        # only when no task is left unfinished.
        while pending := [t for t in tasks if not t.done()]:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            failed = next((t for t in done if not t.cancelled() and t.exception() is not None), None)
            if failed is not None:
                raise failed.exception()
        return [t.result() for t in tasks]
    except BaseException:
        # on_result failed or the run was cancelled: stop every call before closing clients.
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        for client in clients.values():
            await client.close()
