"""The provider SDKs, imported only when a run first calls their provider: one attempt each.

Importing `anthropic` costs about 2 s, `openai` about 0.7 s and `google.genai` (Gemini's own API,
for its batch mode only: judges/batch.py) about 1.3 s, so nothing imports them at module level. A run of calls asks `load` for each provider's client in the order of its first
request; one background thread imports the SDKs in that order (imports run one at a time, so two
SDKs sharing pydantic and httpx2 never race over a half-imported module), while the event loop
keeps serving the providers whose SDK is ready. A panel without an Anthropic model never imports
`anthropic`.
"""

from __future__ import annotations

import concurrent.futures
import email.utils
import functools
import hashlib
import importlib
import json
import re
import ssl
import threading
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Sequence

from .repair import repair_json
from .specs import _PROVIDERS, ModelSpec, ProviderConfig

_imports: dict[str, concurrent.futures.Future] = {}
_imports_lock = threading.Lock()
_one_import_at_a_time = threading.Lock()


def preload(sdk_names: Sequence[str]) -> None:
    """Start importing these SDKs ("openai", "anthropic"), in this order, each once per process."""
    with _imports_lock:
        todo = [name for name in dict.fromkeys(sdk_names) if name not in _imports]
        for name in todo:
            _imports[name] = concurrent.futures.Future()
    if todo:
        threading.Thread(target=_import_in_order, args=(todo,), name="evalledger-sdk-import", daemon=True).start()


def _import_in_order(names: list[str]) -> None:
    with _one_import_at_a_time:
        for name in names:
            future = _imports[name]
            try:
                module = importlib.import_module(name)
                # Before the next SDK: the first client needs it (loading the CA store is
                # hundreds of ms on a busy machine), and the next import would slow it down.
                _tls_context()
            except BaseException as exc:  # handed to whoever awaits the SDK
                future.set_exception(exc)
            else:
                future.set_result(module)


# Gemini's own SDK: only Gemini's batch mode goes through it (its synchronous calls go through the
# OpenAI-compatible endpoint and the openai SDK).
GEMINI_SDK = "google.genai"


def sdk_of(provider: str) -> str:
    """The SDK a provider is called through."""
    return _PROVIDERS[provider].sdk


def make_client(cfg: ProviderConfig, timeout_s: float) -> Any:
    """The SDK's async client for one provider (blocks until its SDK is imported: call it in a thread)."""
    preload([sdk_of(cfg.provider)])
    sdk = _imports[sdk_of(cfg.provider)].result()
    client_class = sdk.AsyncAnthropic if sdk.__name__ == "anthropic" else sdk.AsyncOpenAI
    # max_retries=0: the retry policy and the attempt count are ours, not the SDK's.
    return client_class(api_key=cfg.api_key, base_url=cfg.base_url, max_retries=0, timeout=timeout_s,
                        http_client=sdk.DefaultAsyncHttpxClient(verify=_tls_context()))


def make_gemini_client(cfg: ProviderConfig, timeout_s: float) -> Any:
    """The google-genai SDK's client for Gemini's own API at cfg.base_url (blocks until the SDK is
    imported: call it in a thread). Its retries are off, as the other SDKs' are."""
    preload([GEMINI_SDK])
    genai = _imports[GEMINI_SDK].result()
    return genai.Client(api_key=cfg.api_key, vertexai=False,
                        http_options={"base_url": cfg.base_url, "timeout": max(1, round(timeout_s * 1000)),
                                      "async_client_args": {"verify": _tls_context()}})


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # The SDKs' own default (httpx2's), built once: loading the CA store costs ~50 ms of CPU per
    # client.
    import httpx2  # the HTTP stack both SDKs are built on

    return httpx2.create_ssl_context()


# --- one attempt ---------------------------------------------------------------------------


@dataclass
class Reply:
    """What one answered attempt said, its usage counted one way whatever the provider reports:
    input_tokens is every prompt token, of which cached_input_tokens were read from the provider's
    prompt cache and cache_write_tokens written to it.

    OpenAI (and the servers that speak its API, Gemini's included) counts cached tokens inside
    prompt_tokens (usage.prompt_tokens_details.cached_tokens); Anthropic reports its cache reads
    and writes beside input_tokens (cache_read_input_tokens, cache_creation_input_tokens), so they
    are added to it here, once.
    """

    text: str
    parsed: dict | None
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0


class AttemptError(Exception):
    """An attempt failed; retryable says whether another attempt may help, congestion whether the
    provider asked us to slow down (429, 503, 529)."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None,
                 retry_after: float | None = None, timeout: bool = False):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.timeout = timeout

    @property
    def http_failure(self) -> bool:
        """A 429 or 5xx: the provider answered and said 'later'. Retried until the deadline."""
        return self.status is not None and (self.status == 429 or self.status >= 500)


def _schema_name(schema: dict) -> str:
    title = schema.get("title")
    name = re.sub(r"[^A-Za-z0-9_-]", "_", title)[:64] if isinstance(title, str) and title else ""
    return name or "verdict"


def prompt_cache_key(system: str, json_schema: dict | None) -> str:
    """OpenAI's prompt_cache_key for the calls that share this system text and output schema: the
    same for every call of a run that shares them, so the provider routes them to one cache."""
    shared = system + "\x00" + (json.dumps(json_schema, sort_keys=True) if json_schema is not None else "")
    return "evalledger-" + hashlib.sha256(shared.encode("utf-8")).hexdigest()[:32]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


async def attempt(client: Any, spec: ModelSpec, system: str, user: str, *, json_schema: dict | None,
                  max_output_tokens: int, temperature: float | None, cache: bool = True) -> Reply:
    """One request through the provider's SDK; raises whatever the SDK raises.

    What the run's calls share comes first (the output schema, the system text), the item last
    (the user message). With cache, Anthropic is told to cache that shared prefix (cache_control
    on the system text: the tools that carry the schema come before it); OpenAI caches a prefix of
    1,024 tokens or more by itself, and is given a prompt_cache_key that is the same for every call
    sharing the system text and schema."""
    if sdk_of(spec.provider) == "anthropic":
        return await _attempt_anthropic(client, spec, system, user, json_schema, max_output_tokens, cache)
    return await _attempt_openai(client, spec, system, user, json_schema, max_output_tokens, temperature, cache)


def openai_request(spec: ModelSpec, system: str, user: str, json_schema: dict | None, max_output_tokens: int,
                   temperature: float | None, cache: bool) -> dict[str, Any]:
    """The body of one Chat Completions request (the arguments of client.chat.completions.create):
    sent as it is, or as one line of a batch (judges/batch.py)."""
    messages = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": user})
    kwargs: dict[str, Any] = {"model": spec.model, "messages": messages}
    # OpenAI deprecated max_tokens (its reasoning models refuse it); compatible servers
    # (Gemini, vLLM, Ollama) all understand max_tokens.
    kwargs["max_completion_tokens" if spec.provider == "openai" else "max_tokens"] = max_output_tokens
    if temperature is not None:
        kwargs["temperature"] = temperature
    if json_schema is not None:
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": _schema_name(json_schema), "schema": json_schema, "strict": True},
        }
    if cache and spec.provider == "openai":
        # OpenAI's own parameter: the servers that speak its API (Gemini's, vLLM) may refuse it.
        kwargs["prompt_cache_key"] = prompt_cache_key(system, json_schema)
    return kwargs


def openai_reply(resp: Any) -> Reply:
    """A Chat Completions response (the SDK's ChatCompletion, from a call or a batch's results) as a Reply."""
    message = resp.choices[0].message if resp.choices else None
    text = (message.content or getattr(message, "refusal", None) or "") if message else ""
    usage = resp.usage
    prompt = _count(usage.prompt_tokens) if usage else 0
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    # Inside prompt_tokens already; never more than it.
    cached = min(prompt, _count(getattr(details, "cached_tokens", None)))
    return Reply(
        text=text,
        parsed=repair_json(text),
        input_tokens=prompt,
        output_tokens=_count(usage.completion_tokens) if usage else 0,
        cached_input_tokens=cached,
    )


async def _attempt_openai(client: Any, spec: ModelSpec, system: str, user: str, json_schema: dict | None,
                          max_output_tokens: int, temperature: float | None, cache: bool) -> Reply:
    kwargs = openai_request(spec, system, user, json_schema, max_output_tokens, temperature, cache)
    return openai_reply(await client.chat.completions.create(**kwargs))


def anthropic_request(spec: ModelSpec, system: str, user: str, json_schema: dict | None, max_output_tokens: int,
                      cache: bool) -> dict[str, Any]:
    """The params of one Messages request (the arguments of client.messages.create): sent as they
    are, or as one request of a Message Batch (judges/batch.py)."""
    kwargs: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": max_output_tokens,
        "messages": [{"role": "user", "content": user}],
    }
    if system and cache:
        # The breakpoint after the shared prefix (tools, then system): a prefix shorter than the
        # model's minimum is simply not cached, and costs nothing more.
        kwargs["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    elif system:
        kwargs["system"] = system
    # No temperature: the Messages API of SDK 2.x has no such parameter any more.
    if json_schema is not None:
        # Anthropic's structured output: one tool whose input is the verdict, forced.
        name = _schema_name(json_schema)
        kwargs["tools"] = [{"name": name, "description": "Record your verdict.", "input_schema": json_schema}]
        kwargs["tool_choice"] = {"type": "tool", "name": name}
    return kwargs


def anthropic_reply(resp: Any, json_schema: dict | None) -> Reply:
    """A Messages response (the SDK's Message, from a call or a batch's results) as a Reply."""
    name = _schema_name(json_schema) if json_schema is not None else None
    texts: list[str] = []
    parsed = None
    for block in resp.content or ():
        if block.type == "tool_use" and block.name == name and isinstance(block.input, dict):
            parsed = dict(block.input)
        elif block.type == "text":
            texts.append(block.text)
    text = json.dumps(parsed) if parsed is not None else "".join(texts)
    usage = resp.usage
    read = _count(getattr(usage, "cache_read_input_tokens", None)) if usage else 0
    written = _count(getattr(usage, "cache_creation_input_tokens", None)) if usage else 0
    return Reply(
        text=text,
        parsed=parsed if parsed is not None else repair_json(text),
        # Anthropic's input_tokens are those after the last cache breakpoint: the cache's reads and
        # writes come on top.
        input_tokens=(_count(usage.input_tokens) + read + written) if usage else 0,
        output_tokens=_count(usage.output_tokens) if usage else 0,
        cached_input_tokens=read,
        cache_write_tokens=written,
    )


async def _attempt_anthropic(client: Any, spec: ModelSpec, system: str, user: str, json_schema: dict | None,
                             max_output_tokens: int, cache: bool) -> Reply:
    kwargs = anthropic_request(spec, system, user, json_schema, max_output_tokens, cache)
    return anthropic_reply(await client.messages.create(**kwargs), json_schema)


def gemini_request(spec: ModelSpec, system: str, user: str, json_schema: dict | None, max_output_tokens: int,
                   temperature: float | None) -> dict[str, Any]:
    """One request to Gemini's own API (an inlined request of its batch mode: the google-genai SDK's
    InlinedRequest): what an OpenAI-compatible call to Gemini sends (openai_request), in the native
    API's words. The shared part (system instruction, output schema) comes before the item (the
    user content), as Gemini's implicit cache reads a repeated prefix."""
    config: dict[str, Any] = {"max_output_tokens": max_output_tokens}
    if system:
        config["system_instruction"] = system
    if temperature is not None:
        config["temperature"] = temperature
    if json_schema is not None:
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = json_schema
    return {"contents": [{"role": "user", "parts": [{"text": user}]}], "config": config}


def gemini_reply(resp: Any) -> Reply:
    """A GenerateContentResponse of Gemini's own API (the google-genai SDK's, from a batch's inlined
    responses) as a Reply. Gemini counts cached tokens inside promptTokenCount
    (cachedContentTokenCount), as OpenAI does; a thinking model's thoughts (thoughtsTokenCount) are
    billed as output."""
    candidate = resp.candidates[0] if resp.candidates else None
    parts = (candidate.content.parts or []) if candidate is not None and candidate.content is not None else []
    text = "".join(p.text for p in parts if p.text and not p.thought)
    usage = resp.usage_metadata
    prompt = _count(usage.prompt_token_count) if usage else 0
    return Reply(
        text=text,
        parsed=repair_json(text),
        input_tokens=prompt,
        output_tokens=(_count(usage.candidates_token_count) + _count(usage.thoughts_token_count)) if usage else 0,
        cached_input_tokens=min(prompt, _count(usage.cached_content_token_count)) if usage else 0,
    )


# --- what a failure means --------------------------------------------------------------------


def retry_after(headers: Any) -> float | None:
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


def classify(exc: BaseException, provider: str, timeout_s: float) -> AttemptError:
    """An exception from one attempt through the provider's SDK, as what it means for a retry."""
    sdk = _loaded(sdk_of(provider))
    if sdk is not None and isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        return AttemptError(
            f"HTTP {status}: {_error_detail(exc)}",
            retryable=status in (408, 429) or status >= 500,
            status=status,
            retry_after=retry_after(getattr(exc.response, "headers", None)),
        )
    if isinstance(exc, TimeoutError) or (sdk is not None and isinstance(exc, sdk.APITimeoutError)):
        return AttemptError(f"timeout after {timeout_s:g}s", retryable=True, timeout=True)
    if sdk is not None and isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        return AttemptError(f"connection error: {type(cause).__name__}: {cause}", retryable=True)
    return AttemptError(f"{type(exc).__name__}: {exc}", retryable=False)


def _loaded(name: str) -> ModuleType | None:
    future = _imports.get(name)
    return future.result() if future is not None and future.done() and future.exception() is None else None
