"""A local HTTP stand-in for the OpenAI Chat Completions and Anthropic Messages APIs, and the
providers' batch APIs: OpenAI's Batch API (files and batches), Anthropic's Message Batches and
Gemini's batch mode (its own API, under /google/: GOOGLE_GEMINI_BASE_URL)."""

from __future__ import annotations

import collections
import copy
import itertools
import json
import math
import random
import re
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from . import steps as st

# Seed 000's rubric, used when a request carries no schema to read dimensions from.
DEFAULT_DIMENSIONS = ("accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density")

# Fake keys, recognisable in assertions that a key never leaks.
FAKE_KEYS = {
    "openai": "sk-standin-openai-7f3a9c1e5b2d4f60",
    "anthropic": "sk-ant-standin-2e8d6b4a0c9f1e37",
    "google": "AIzaStandinGoogle9d41c7e2b5a8f036",
    "compat": "sk-standin-compat-5c0e9a3f7b1d2e84",
}
_AUTH_HEADERS = {"authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization"}

Responder = Callable[[str, str, str], "dict | str"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received; auth header values are replaced by '<redacted>'."""

    api: str  # "openai", "anthropic" or "gemini" (Gemini's own API: its batches' requests)
    path: str
    model: str
    headers: dict[str, str]
    body: dict
    system: str
    user: str
    schema: dict | None  # the structured-output schema sent, if any
    key_name: str | None  # which FAKE_KEYS entry authenticated it, if any
    received_at: float


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _with_trailing_commas(payload: dict) -> str:
    # indent puts every closing bracket on its own line; add a comma to the line before.
    return re.sub(r"([^\s\[{,])(\n\s*[}\]])", r"\1,\2", json.dumps(payload, indent=2))


class StandIn:
    """The stand-in server plus its script: start() once, reset() between tests.

    Per model (or "*" for any model) a queue of scripted Steps is served first, then the
    model's default Step (ok()). Valid verdicts come from `responder(model, system, user)`
    when set (a dict, or a str sent verbatim), else are generated from the request's
    schema (numbers get `score`, clamped to the schema's bounds), else are
    {"scores": {dim: score for dim in dimensions}, "narrative": ..., "confidence": ...}.

    Usage is reported the way each provider reports it, its prompt cache included (prompt_cache,
    on by default): OpenAI's (and Gemini's OpenAI-compatible) usage.prompt_tokens_details.cached_tokens
    inside prompt_tokens, Gemini's own usageMetadata.cachedContentTokenCount inside promptTokenCount,
    Anthropic's cache_read_input_tokens and cache_creation_input_tokens beside input_tokens (see
    _cache_usage). Scripted usage (ok(usage=...), fixed_usage) reports no cache.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)
        self._wake = threading.Event()
        self._generation = 0
        self.reset()

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> "StandIn":
        server = _Server(("127.0.0.1", 0), _Handler)
        server.standin = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="provider-standin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._wake.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "StandIn":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget scripts, records and settings; release any hanging request."""
        with self._lock:
            self._wake.set()
            self._wake = threading.Event()
            self._scripts: dict[str, collections.deque[st.Step]] = collections.defaultdict(collections.deque)
            self._defaults: dict[str, st.Step] = {}
            self._requests: list[RecordedRequest] = []
            self._in_flight = 0
            self._max_in_flight = 0
            self._in_flight_by_model: collections.Counter[str] = collections.Counter()
            self._max_in_flight_by_model: dict[str, int] = {}
            self._statuses: collections.Counter[int] = collections.Counter()
            self._first_at: float | None = None
            self._first_at_by_model: dict[str, float] = {}
            self._last_done_at: float | None = None
            self._throttle: tuple[float, float, random.Random] | None = None
            self._burst: tuple[float, float | None, float | None] | None = None
            self._met: set[str] = set()
            # A request of before the reset (a hanging one it released) must not count down the new
            # counts: that left a model's peak at 0 for the next test.
            self._generation += 1
        self.responder: Responder | None = None
        self.dimensions: tuple[str, ...] = DEFAULT_DIMENSIONS
        self.score: float = 8
        # A judge with known noise: a model named here answers this score instead of `score` (a test
        # plants each judge's deviation from the true score, so the noise it measures is known).
        self.score_by_model: dict[str, float] = {}
        self.latency_s: float = 0.0
        self.fixed_usage: tuple[int, int] | None = None
        # A server that works on `capacity` requests at a time: beyond it, each one's latency grows
        # with the requests in flight (latency x in_flight / capacity), as a provider that queues.
        self.capacity: int | None = None
        # A provider's own concurrency limit: a request beyond it is answered 429 with this Retry-After.
        self.concurrency_limit: int | None = None
        self.concurrency_retry_after: float = 1.0
        # When set, every request waits for this event before it is answered (at most a minute).
        self.gate: threading.Event | None = None
        # Per model, hold its requests until this many of them are in flight together (at most
        # `rendezvous_timeout_s`): a test of concurrency that does not hang on the machine's speed.
        self.rendezvous_by_model: dict[str, int] = {}
        self.rendezvous_timeout_s: float = 20.0
        # The providers' prompt caches (see _cache_usage): on unless a test turns them off.
        self.prompt_cache: bool = True
        self._prompts_seen: dict[str, list[str]] = collections.defaultdict(list)
        self._prefixes_cached: dict[str, set[str]] = collections.defaultdict(set)
        # OpenAI's Batch API (see _batch_post): a batch is answered batch_delay_s after it is created,
        # each of its lines served as one Chat Completions request (recorded, scripted, cached alike).
        # The delay is read when the batch is polled: a test that kept a batch pending while it killed
        # the command sets it to 0 and the resumed command finds the batch ended, not 30 s later.
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.batch_creates: list[str] = []  # each batch created, in order
        self.batch_delay_s: float = 0.0
        # Per model, how many of its batch lines fail (HTTP 500 in the error file) or expire (the
        # batch ends expired, those lines in the error file as batch_expired), the first ones first.
        self.batch_fail: collections.Counter[str] = collections.Counter()
        self.batch_expire: collections.Counter[str] = collections.Counter()
        # When set, a batch create (after the batch exists) and a file's content wait for it (Gemini's
        # batch: the poll that answers with its responses inlined). With batch_hold_api set, only
        # that API's batches wait ("openai", "anthropic" or "gemini"), and only its reads are counted.
        self.batch_hold_create: threading.Event | None = None
        self.batch_hold_content: threading.Event | None = None
        self.batch_hold_api: str | None = None
        self.batch_content_reads = 0
        # Gemini's and Anthropic's batches listed (GET batches, GET messages/batches): how many times.
        self.batch_lists = 0

    # --- addresses -------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "stand-in not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    @property
    def gemini_base_url(self) -> str:
        """Gemini's own API (the google-genai SDK's base URL; it adds the API version)."""
        return f"{self.url}/google/"

    def env(self) -> dict[str, str]:
        """Environment variables pointing every provider of evalledger at this server."""
        v1 = self.openai_base_url
        return {
            "OPENAI_API_KEY": FAKE_KEYS["openai"],
            "OPENAI_BASE_URL": v1,
            "ANTHROPIC_API_KEY": FAKE_KEYS["anthropic"],
            "ANTHROPIC_BASE_URL": self.anthropic_base_url,
            "GEMINI_API_KEY": FAKE_KEYS["google"],
            "GEMINI_BASE_URL": v1,
            "GOOGLE_GEMINI_BASE_URL": self.gemini_base_url,
            "VLLM_BASE_URL": v1,
            "OLLAMA_BASE_URL": v1,
            "COMPAT_BASE_URL": v1,
            "COMPAT_API_KEY": FAKE_KEYS["compat"],
        }

    def install_env(self, monkeypatch: Any) -> None:
        """Set env() with pytest's monkeypatch (undone after the test)."""
        for name, value in self.env().items():
            monkeypatch.setenv(name, value)

    # --- script ----------------------------------------------------------------------

    def script(self, model: str, *script_steps: st.Step) -> None:
        """Queue steps for a model ("*": any model without its own queue), served in order."""
        with self._lock:
            self._scripts[model].extend(script_steps)

    def set_default(self, model: str, step: st.Step) -> None:
        """What a model ("*": any model) gets once its queue is empty."""
        with self._lock:
            self._defaults[model] = step

    def throttle(self, fraction: float, retry_after: float | None = 1, *, seed: int = 20) -> None:
        """Answer this share of requests (drawn with a seeded random) 429 with Retry-After, before any script."""
        with self._lock:
            self._throttle = (fraction, retry_after, random.Random(seed))

    def rate_limit_for(self, seconds: float, retry_after: float | None = 1) -> None:
        """A burst: every request for `seconds` from the next one on is answered 429 with Retry-After."""
        with self._lock:
            self._burst = (seconds, retry_after, None)

    def _refusal(self, model: str) -> st.Step | None:
        """The 429 the provider's limits give this request (already counted in flight), if any."""
        with self._lock:
            if self.concurrency_limit is not None and self._in_flight > self.concurrency_limit:
                return st.rate_limited(self.concurrency_retry_after)
            if self._burst is not None:
                seconds, retry_after, since = self._burst
                if since is None:
                    self._burst = (seconds, retry_after, time.monotonic())
                if time.monotonic() < self._burst[2] + seconds:
                    return st.rate_limited(retry_after)
            if self._throttle is not None and self._throttle[2].random() < self._throttle[0]:
                return st.rate_limited(self._throttle[1])
        return None

    def _next_step(self, model: str) -> st.Step:
        with self._lock:
            for name in (model, "*"):
                if self._scripts.get(name):
                    return self._scripts[name].popleft()
            return self._defaults.get(model) or self._defaults.get("*") or st.ok()

    # --- records ---------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, model: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.model == model]

    @property
    def max_in_flight(self) -> int:
        return self._max_in_flight

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def max_in_flight_by_model(self) -> dict[str, int]:
        with self._lock:
            return dict(self._max_in_flight_by_model)

    def stats(self) -> dict:
        """Requests, statuses, the most in flight, and when the first came (of all, and of each model)
        and the last was answered (time.monotonic, comparable across processes on one machine)."""
        with self._lock:
            return {"requests": len(self._requests), "statuses": dict(self._statuses),
                    "max_in_flight": self._max_in_flight, "max_in_flight_by_model": dict(self._max_in_flight_by_model),
                    "first_at": self._first_at, "first_at_by_model": dict(self._first_at_by_model),
                    "last_done_at": self._last_done_at}

    # --- serving ---------------------------------------------------------------------

    def _record(self, api: str, path: str, headers: Any, body: dict) -> tuple[RecordedRequest, str | None]:
        received_key = None
        redacted: dict[str, str] = {}
        for name, value in headers.items():
            lname = name.lower()
            if lname in _AUTH_HEADERS:
                received_key = value.removeprefix("Bearer ").strip()
                value = "<redacted>"
            redacted[lname] = value
        key_name = next((n for n, k in FAKE_KEYS.items() if k == received_key), None)
        if api == "openai":
            messages = body.get("messages") or []
            system = "".join(_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
            user = "".join(_text_of(m.get("content")) for m in messages if m.get("role") == "user")
            rf = body.get("response_format") or {}
            schema = (rf.get("json_schema") or {}).get("schema") if rf.get("type") == "json_schema" else None
        elif api == "gemini":
            system = "".join(_text_of(p.get("text")) for p in (body.get("systemInstruction") or {}).get("parts") or [])
            user = "".join(_text_of(p.get("text")) for c in body.get("contents") or [] if c.get("role", "user") == "user"
                           for p in c.get("parts") or [])
            schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
        else:
            system = _text_of(body.get("system"))
            user = "".join(_text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user")
            schema = None
            forced = _forced_tool(body)
            if forced is not None:
                schema = forced.get("input_schema")
        rec = RecordedRequest(
            api=api,
            path=path,
            model=str(body.get("model", "")),
            headers=redacted,
            body=body,
            system=system,
            user=user,
            schema=schema,
            key_name=key_name,
            received_at=time.monotonic(),
        )
        with self._lock:
            self._requests.append(rec)
        return rec, received_key

    def handle(self, api: str, path: str, headers: Any, body: dict) -> tuple[int, dict[str, str], bytes] | None:
        """Serve one API request; None means drop the connection without answering."""
        rec, received_key = self._record(api, path, headers, body)
        wake = self._wake
        with self._lock:
            generation = self._generation
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._in_flight_by_model[rec.model] += 1
            self._max_in_flight_by_model[rec.model] = max(self._max_in_flight_by_model.get(rec.model, 0),
                                                          self._in_flight_by_model[rec.model])
            if self._first_at is None:
                self._first_at = rec.received_at
            self._first_at_by_model.setdefault(rec.model, rec.received_at)
            queued = self._in_flight / self.capacity if self.capacity else 1.0
        status = None
        try:
            gate = self.gate
            if gate is not None:
                gate.wait(60)
            self._rendezvous(rec.model)
            refusal = self._refusal(rec.model)  # a provider's 429 comes at once
            step = refusal or self._next_step(rec.model)
            if step.hang_s:
                wake.wait(step.hang_s)
                return None
            delay = 0.0 if refusal else step.latency_s or self.latency_s * max(1.0, queued)
            if delay:
                wake.wait(delay)
            status = step.status
            if step.status != 200:
                message = step.error_message
                if step.echo_key:
                    message += f" Key provided: {received_key}"
                return step.status, dict(step.headers), _error_body(api, step.status, message)
            return 200, dict(step.headers), self._reply(api, rec, body, step)
        finally:
            # Decrement before the response is written: the client's next request must
            # not see this one still counted, or the bound would look broken.
            with self._lock:
                if generation == self._generation:
                    self._in_flight -= 1
                    self._in_flight_by_model[rec.model] -= 1
                    if status is not None:
                        self._statuses[status] += 1
                    self._last_done_at = time.monotonic()

    def _rendezvous(self, model: str) -> None:
        wanted = self.rendezvous_by_model.get(model)
        if not wanted:
            return
        with self._arrived:
            if self._in_flight_by_model[model] >= wanted:
                self._met.add(model)
                self._arrived.notify_all()
            self._arrived.wait_for(lambda: model in self._met, self.rendezvous_timeout_s)
            self._met.add(model)  # met or given up: later requests of the model are not held

    def _payload(self, rec: RecordedRequest) -> dict | str:
        if self.responder is not None:
            return self.responder(rec.model, rec.system, rec.user)
        score = self.score_by_model.get(rec.model, self.score)
        if rec.schema:
            generated = self._instance(rec.schema, None, score)
            if isinstance(generated, dict):
                return generated
        return {
            "scores": {d: score for d in self.dimensions},
            "narrative": "Stand-in verdict.",
            "confidence": 0.8,
        }

    def _instance(self, schema: Any, name: str | None, score: float | None = None) -> Any:
        """A value satisfying a (simple) JSON schema, numbers set to `score` (the stand-in's, by default)."""
        score = self.score if score is None else score
        if not isinstance(schema, dict):
            return score
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind == "object" or "properties" in schema:
            return {k: self._instance(v, k, score) for k, v in (schema.get("properties") or {}).items()}
        if kind == "array":
            return [self._instance(schema.get("items"), name, score) for _ in range(schema.get("minItems", 1))]
        if kind in ("number", "integer"):
            value = score
            if "maximum" in schema:
                value = min(value, schema["maximum"])
            if "minimum" in schema:
                value = max(value, schema["minimum"])
            return int(value) if kind == "integer" else value
        if kind == "string":
            return f"Stand-in {name or 'text'}."
        if kind == "boolean":
            return False
        return None

    def _reply(self, api: str, rec: RecordedRequest, body: dict, step: st.Step) -> bytes:
        payload: dict | str = step.raw_text if step.render == st.RAW else self._payload(rec)
        if isinstance(payload, dict):
            payload = copy.deepcopy(payload)
            if step.mutate is not None:
                step.mutate(payload)
        tool = _forced_tool(body) if api == "anthropic" else None
        as_tool = isinstance(payload, dict) and step.render == st.STRUCTURED and tool is not None
        if isinstance(payload, str):
            text = payload
        elif step.render == st.FENCED:
            text = "Here is my verdict:\n```json\n" + json.dumps(payload, indent=2) + "\n```\n"
        elif step.render == st.TRAILING_COMMA:
            text = _with_trailing_commas(payload)
        elif step.render == st.PROSE:
            text = (
                "I read the item carefully; my assessment follows.\n"
                + json.dumps(payload)
                + "\nLet me know if {anything} needs another look."
            )
        else:
            text = json.dumps(payload)
        scripted = step.usage or self.fixed_usage
        usage = scripted or (
            # Roughly what a tokenizer says: 4 characters a token, plus per-message overhead.
            math.ceil((len(rec.system) + len(rec.user)) / 4) + 7,
            max(1, math.ceil(len(text) / 4)),
        )
        cached, written = (0, 0) if scripted or not self.prompt_cache else self._cache_usage(api, rec, body)
        n = next(self._ids)
        if api == "gemini":
            usage_meta: dict[str, Any] = {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1],
                                          "totalTokenCount": sum(usage)}
            if cached:
                # Inside promptTokenCount, as Gemini counts it; left out when nothing was cached.
                usage_meta["cachedContentTokenCount"] = cached
            return json.dumps({
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": usage_meta, "modelVersion": rec.model, "responseId": f"standin{n}",
            }).encode()
        if api == "openai":
            usage_json: dict[str, Any] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                          "total_tokens": sum(usage)}
            if not scripted:
                # OpenAI (and Gemini's OpenAI-compatible API) count cached tokens inside prompt_tokens.
                usage_json["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
            return json.dumps(
                {
                    "id": f"chatcmpl-standin{n}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": rec.model,
                    "system_fingerprint": "fp_standin",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text, "refusal": None},
                            "logprobs": None,
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage_json,
                }
            ).encode()
        if as_tool:
            content = [{"type": "tool_use", "id": f"toolu_standin{n}", "name": tool["name"], "input": payload}]
        else:
            content = [{"type": "text", "text": text}]
        return json.dumps(
            {
                "id": f"msg_standin{n}",
                "type": "message",
                "role": "assistant",
                "model": rec.model,
                "content": content,
                "stop_reason": "tool_use" if as_tool else "end_turn",
                "stop_sequence": None,
                # Anthropic reports the cache's reads and writes beside input_tokens, which counts only
                # the prompt after the cache breakpoint.
                "usage": {"input_tokens": usage[0] - cached - written, "output_tokens": usage[1],
                          "cache_read_input_tokens": cached, "cache_creation_input_tokens": written},
            }
        ).encode()

    def _cache_usage(self, api: str, rec: RecordedRequest, body: dict) -> tuple[int, int]:
        """(cached, written) prompt tokens, as the provider's prompt cache would count them.

        OpenAI (and Gemini through its OpenAI-compatible API) cache by themselves: the longest
        prefix this prompt shares with an earlier prompt to the same model is read from the cache
        when it is 1,024 tokens or more, in steps of 128 tokens; nothing is billed for writing.
        Gemini's own API (implicit caching) reads the whole shared prefix once it is 1,024 tokens or
        more.
        Anthropic caches only the prefix a cache_control breakpoint ends (here: the system text),
        when it is 1,024 tokens or more: written by the first request, read by the next ones.
        """
        prompt = rec.system + rec.user
        with self._lock:
            if api in ("openai", "gemini"):
                seen = self._prompts_seen[rec.model]
                common = max((len(_common_prefix(prompt, earlier)) for earlier in seen), default=0)
                seen.append(prompt)
                tokens = common // 4
                if tokens < 1024:
                    return 0, 0
                return (tokens // 128 * 128 if api == "openai" else tokens), 0
            system = body.get("system")
            marked = isinstance(system, list) and any(isinstance(b, dict) and b.get("cache_control") for b in system)
            tokens = math.ceil(len(rec.system) / 4)
            if not marked or tokens < 1024:
                return 0, 0
            if rec.system in self._prefixes_cached[rec.model]:
                return tokens, 0
            self._prefixes_cached[rec.model].add(rec.system)
            return 0, tokens


    # --- OpenAI's Batch API ------------------------------------------------------------------

    def batch_post(self, path: str, headers: Any, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """POST /v1/files (multipart, purpose batch), /v1/batches, /v1/batches/{id}/cancel."""
        if path.endswith("/files"):
            content = _multipart_file(headers.get("Content-Type", ""), raw)
            with self._lock:
                file_id = f"file-standin{next(self._ids)}"
                self.files[file_id] = content
            return 200, {}, json.dumps({"id": file_id, "object": "file", "bytes": len(content),
                                        "created_at": int(time.time()), "filename": "batch.jsonl",
                                        "purpose": "batch", "status": "processed"}).encode()
        body = json.loads(raw or b"{}")
        if path.endswith("/cancel"):
            batch_id = path.rsplit("/", 2)[-2]
            with self._lock:
                batch = self.batches.get(batch_id)
                if batch is None:
                    return 404, {}, _error_body("openai", 404, f"no batch {batch_id}")
                if batch["status"] not in ("completed", "failed", "expired", "cancelled"):
                    batch["status"] = "cancelled"
                    batch["cancelled_at"] = int(time.time())
                return 200, {}, json.dumps(self._batch_json(batch)).encode()
        with self._lock:
            if body.get("input_file_id") not in self.files:
                return 400, {}, _error_body("openai", 400, "input_file_id: no such file")
            batch_id = f"batch_standin{next(self._ids)}"
            lines = [json.loads(line) for line in self.files[body["input_file_id"]].decode().splitlines() if line.strip()]
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": body.get("endpoint"),
                                      "input_file_id": body["input_file_id"],
                                      "completion_window": body.get("completion_window", "24h"),
                                      "status": "validating", "created_at": int(time.time()),
                                      "metadata": body.get("metadata"), "_lines": lines,
                                      "_born": time.monotonic()}
            self.batch_creates.append(batch_id)
            answer = json.dumps(self._batch_json(self.batches[batch_id])).encode()
        self._hold(self.batch_hold_create, "openai")
        return 200, {}, answer

    def batch_get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """GET /v1/batches, /v1/batches/{id}, /v1/files/{id}/content."""
        if path.endswith("/content"):
            file_id = path.rsplit("/", 2)[-2]
            self._hold(self.batch_hold_content, "openai", read=True)
            with self._lock:
                content = self.files.get(file_id)
            if content is None:
                return 404, {}, _error_body("openai", 404, f"no file {file_id}")
            return 200, {}, content
        if path.endswith("/batches"):
            with self._lock:
                mine = [b for b in reversed(list(self.batches.values())) if "_api" not in b]  # OpenAI's
                for batch in mine:
                    self._advance(batch)
                data = [self._batch_json(b) for b in mine]
            return 200, {}, json.dumps({"object": "list", "data": data, "has_more": False,
                                        "first_id": data[0]["id"] if data else None,
                                        "last_id": data[-1]["id"] if data else None}).encode()
        batch_id = path.rsplit("/", 1)[-1]
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, {}, _error_body("openai", 404, f"no batch {batch_id}")
            due = batch["status"] in ("validating", "in_progress") and self._batch_due(batch)
            if not due:
                self._advance(batch)
                return 200, {}, json.dumps(self._batch_json(batch)).encode()
            batch["status"] = "finalizing"  # answered below, outside the lock
        self._run_batch(batch)
        with self._lock:
            return 200, {}, json.dumps(self._batch_json(batch)).encode()

    # --- Anthropic's Message Batches ------------------------------------------------------------

    def message_batch_post(self, path: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """POST /v1/messages/batches, /v1/messages/batches/{id}/cancel."""
        if path.endswith("/cancel"):
            batch_id = path.rsplit("/", 2)[-2]
            with self._lock:
                batch = self.batches.get(batch_id)
                if batch is None:
                    return 404, {}, _error_body("anthropic", 404, f"no batch {batch_id}")
                if batch["status"] not in ("completed", "failed", "expired", "cancelled"):
                    batch["status"] = "cancelled"
                    batch["_cancelled"] = True
                return 200, {}, json.dumps(self._message_batch_json(batch)).encode()
        body = json.loads(raw or b"{}")
        with self._lock:
            batch_id = f"msgbatch_standin{next(self._ids)}"
            lines = [{"custom_id": r["custom_id"], "body": r["params"]} for r in body.get("requests") or []]
            self.batches[batch_id] = {"id": batch_id, "status": "in_progress", "_api": "anthropic", "_lines": lines,
                                      "_created": _rfc3339(), "_born": time.monotonic()}
            self.batch_creates.append(batch_id)
            answer = json.dumps(self._message_batch_json(self.batches[batch_id])).encode()
        self._hold(self.batch_hold_create, "anthropic")
        return 200, {}, answer

    def message_batch_get(self, path: str, query: str = "") -> tuple[int, dict[str, str], bytes]:
        """GET /v1/messages/batches (newest first; limit, after_id), /v1/messages/batches/{id}, its
        /results (JSONL)."""
        if path.endswith("/messages/batches"):
            import urllib.parse

            params = urllib.parse.parse_qs(query)
            limit = int((params.get("limit") or ["20"])[0])
            after = (params.get("after_id") or [None])[0]
            with self._lock:
                self.batch_lists += 1
                mine = [b for b in reversed(list(self.batches.values())) if b.get("_api") == "anthropic"]
                start = next((n + 1 for n, b in enumerate(mine) if b["id"] == after), 0) if after else 0
                page = [self._message_batch_json(b) for b in mine[start:start + limit]]
            return 200, {}, json.dumps({"data": page, "has_more": start + limit < len(mine),
                                        "first_id": page[0]["id"] if page else None,
                                        "last_id": page[-1]["id"] if page else None}).encode()
        if path.endswith("/results"):
            batch_id = path.rsplit("/", 2)[-2]
            self._hold(self.batch_hold_content, "anthropic", read=True)
            with self._lock:
                batch = self.batches.get(batch_id)
                rows = list(batch.get("_results", [])) if batch else None
            if rows is None:
                return 404, {}, _error_body("anthropic", 404, f"no batch {batch_id}")
            return 200, {}, "".join(json.dumps(r) + "\n" for r in rows).encode()
        batch_id = path.rsplit("/", 1)[-1]
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, {}, _error_body("anthropic", 404, f"no batch {batch_id}")
            due = batch["status"] == "in_progress" and self._batch_due(batch)
            if not due:
                return 200, {}, json.dumps(self._message_batch_json(batch)).encode()
            batch["status"] = "finalizing"
        self._run_batch(batch)
        with self._lock:
            return 200, {}, json.dumps(self._message_batch_json(batch)).encode()

    def _message_batch_json(self, batch: dict) -> dict:
        results = batch.get("_results", [])
        ended = batch["status"] in ("completed", "expired", "cancelled")
        kinds = collections.Counter(r["result"]["type"] for r in results)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        created = batch.get("_created", now)
        return {"id": batch["id"], "type": "message_batch",
                "processing_status": "ended" if ended else ("canceling" if batch.get("_cancelled") else "in_progress"),
                "request_counts": {"processing": 0 if ended else len(batch["_lines"]),
                                   "succeeded": kinds["succeeded"], "errored": kinds["errored"],
                                   "canceled": kinds["canceled"] + (len(batch["_lines"]) if batch.get("_cancelled")
                                                                    and not results else 0),
                                   "expired": kinds["expired"]},
                "created_at": created, "expires_at": now, "ended_at": now if ended else None, "archived_at": None,
                "cancel_initiated_at": now if batch.get("_cancelled") else None,
                "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None}

    def _hold(self, hold: threading.Event | None, api: str, read: bool = False) -> None:
        """Wait for a test's hold (at most a minute) if it holds this API's batches; count a read of results."""
        if self.batch_hold_api not in (None, api):
            return
        if read:
            with self._lock:
                self.batch_content_reads += 1
        if hold is not None:
            hold.wait(60)

    # --- Gemini's batch mode (its own API, as the google-genai SDK calls it) ---------------------

    def _gemini_key(self, headers: Any) -> tuple[int, dict[str, str], bytes] | None:
        if headers.get("x-goog-api-key") != FAKE_KEYS["google"]:
            return 401, {}, _error_body("gemini", 401, "API key not valid. Please pass a valid API key.")
        return None

    def gemini_batch_post(self, path: str, headers: Any, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """POST /google/{version}/models/{model}:batchGenerateContent (the requests inlined),
        /google/{version}/batches/{id}:cancel."""
        refused = self._gemini_key(headers)
        if refused is not None:
            return refused
        if path.endswith(":cancel"):
            name = "batches/" + path.rsplit("/", 1)[-1].removesuffix(":cancel")
            with self._lock:
                batch = self.batches.get(name)
                if batch is None:
                    return 404, {}, _error_body("gemini", 404, f"no batch {name}")
                if batch["status"] in ("pending", "running"):
                    batch["status"] = "cancelled"
                    batch["_cancelled"] = True
                    batch["_ended"] = _rfc3339()
            return 200, {}, b"{}"
        match = re.search(r"/models/([^/:]+):batchGenerateContent$", path)
        if match is None:
            return 404, {}, _error_body("gemini", 404, f"no such method {path}")
        model = match.group(1)
        body = json.loads(raw or b"{}")
        spec = body.get("batch") or {}
        inline = ((spec.get("inputConfig") or {}).get("requests") or {}).get("requests")
        if not inline:
            return 400, {}, _error_body("gemini", 400, "batch.input_config.requests: no requests inlined")
        with self._lock:
            name = f"batches/standin{next(self._ids)}"
            lines = [{"model": model, "metadata": r.get("metadata"), "body": {**(r.get("request") or {}), "model": model}}
                     for r in inline]
            self.batches[name] = {"id": name, "status": "pending", "_api": "gemini", "_lines": lines,
                                  "_model": model, "_display_name": spec.get("displayName"), "_created": _rfc3339(),
                                  "_born": time.monotonic()}
            self.batch_creates.append(name)
            answer = json.dumps(self._gemini_batch_json(self.batches[name])).encode()
        self._hold(self.batch_hold_create, "gemini")
        return 200, {}, answer

    def gemini_batch_get(self, path: str, headers: Any, query: str) -> tuple[int, dict[str, str], bytes]:
        """GET /google/{version}/batches (pageSize, pageToken), /google/{version}/batches/{id}: a
        finished batch carries its responses inline."""
        import urllib.parse

        refused = self._gemini_key(headers)
        if refused is not None:
            return refused
        if path.endswith("/batches"):
            params = urllib.parse.parse_qs(query)
            size = int((params.get("pageSize") or ["50"])[0])
            start = int((params.get("pageToken") or ["0"])[0])
            with self._lock:
                self.batch_lists += 1
                mine = [b for b in reversed(list(self.batches.values())) if b.get("_api") == "gemini"]
                for batch in mine:
                    self._advance(batch)
                page = [self._gemini_batch_json(b) for b in mine[start:start + size]]
            answer: dict[str, Any] = {"operations": page}
            if start + size < len(mine):
                answer["nextPageToken"] = str(start + size)
            return 200, {}, json.dumps(answer).encode()
        name = "batches/" + path.rsplit("/", 1)[-1]
        with self._lock:
            batch = self.batches.get(name)
            if batch is None or batch.get("_api") != "gemini":
                return 404, {}, _error_body("gemini", 404, f"no batch {name}")
            due = batch["status"] in ("pending", "running") and self._batch_due(batch)
            if not due:
                self._advance(batch)
                ended = batch["status"] not in ("pending", "running")
                answer_now = None if ended else json.dumps(self._gemini_batch_json(batch)).encode()
            else:
                batch["status"] = "finalizing"
                answer_now = None
        if answer_now is not None:
            return 200, {}, answer_now
        if due:
            self._run_batch(batch)
        self._hold(self.batch_hold_content, "gemini", read=True)  # the answer that carries the responses
        with self._lock:
            return 200, {}, json.dumps(self._gemini_batch_json(batch)).encode()

    def _gemini_batch_json(self, batch: dict) -> dict:
        """The batch as Gemini's API answers it: a long-running operation whose metadata is the batch."""
        state = {"pending": "BATCH_STATE_PENDING", "running": "BATCH_STATE_RUNNING", "finalizing": "BATCH_STATE_RUNNING",
                 "completed": "BATCH_STATE_SUCCEEDED", "expired": "BATCH_STATE_EXPIRED",
                 "cancelled": "BATCH_STATE_CANCELLED"}[batch["status"]]
        results = batch.get("_results")
        ok = sum(1 for r in results or () if "response" in r)
        done = state not in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING")
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{batch['_model']}", "name": batch["id"], "state": state,
            "createTime": batch["_created"], "updateTime": batch.get("_ended") or batch["_created"],
            "batchStats": {"requestCount": str(len(batch["_lines"])),
                           "successfulRequestCount": str(ok), "failedRequestCount": str(len(results or ()) - ok),
                           "pendingRequestCount": "0" if done else str(len(batch["_lines"]))}}
        if batch.get("_display_name") is not None:
            metadata["displayName"] = batch["_display_name"]
        if done:
            metadata["endTime"] = batch.get("_ended") or batch["_created"]
        if results is not None:
            metadata["output"] = {"inlinedResponses": {"inlinedResponses": results}}
        return {"name": batch["id"], "metadata": metadata, "done": done}

    def _run_gemini_batch(self, batch: dict) -> None:
        """Serve each inlined request as a request of Gemini's own API; a batch with a line drawn to
        expire ends expired with no responses at all (as Gemini documents: an expired batch has no
        results to retrieve), its lines not served."""
        drawn = []
        with self._lock:
            for line in batch["_lines"]:
                model = line["model"]
                expire = self.batch_expire[model] > 0
                fail = not expire and self.batch_fail[model] > 0
                if expire:
                    self.batch_expire[model] -= 1
                elif fail:
                    self.batch_fail[model] -= 1
                drawn.append((line, expire, fail))
        if any(expire for _, expire, _ in drawn):
            with self._lock:
                batch["status"] = "expired"
                batch["_ended"] = _rfc3339()
            return
        results = []
        for line, _, fail in drawn:
            row: dict[str, Any] = {"metadata": line["metadata"]} if line.get("metadata") is not None else {}
            if fail:
                row["error"] = json.loads(_error_body("gemini", 500, "stand-in batch failure"))["error"]
            else:
                answer = self.handle("gemini", f"/models/{line['model']}:generateContent", {}, line["body"])
                status, _, payload = answer if answer is not None else (500, {}, _error_body("gemini", 500, "dropped"))
                if status == 200:
                    row["response"] = json.loads(payload)
                else:
                    row["error"] = json.loads(payload)["error"]
            results.append(row)
        with self._lock:
            batch["_results"] = results
            batch["status"] = "completed"
            batch["_ended"] = _rfc3339()

    def _advance(self, batch: dict) -> None:
        if batch["status"] == "pending":  # Gemini's
            batch["status"] = "running"
        if batch["status"] == "validating":
            batch["status"] = "in_progress"
            batch["in_progress_at"] = int(time.time())

    def _run_batch(self, batch: dict) -> None:
        """Serve each line as a request, then write the output and error files."""
        if batch.get("_api") == "anthropic":
            self._run_message_batch(batch)
            return
        if batch.get("_api") == "gemini":
            self._run_gemini_batch(batch)
            return
        out, errors = [], []
        expired = False
        for line in batch["_lines"]:
            body = line.get("body") or {}
            model = str(body.get("model", ""))
            with self._lock:
                expire = self.batch_expire[model] > 0
                fail = not expire and self.batch_fail[model] > 0
                if expire:
                    self.batch_expire[model] -= 1
                elif fail:
                    self.batch_fail[model] -= 1
            row_id = f"batch_req_standin{next(self._ids)}"
            if expire:
                expired = True
                errors.append({"id": row_id, "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "batch_expired", "message": "This request could not be executed "
                                         "before the completion window expired."}})
                continue
            if fail:
                errors.append({"id": row_id, "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": 500, "request_id": "req_standin",
                                            "body": json.loads(_error_body("openai", 500, "stand-in batch failure"))}})
                continue
            answer = self.handle("openai", "/v1/chat/completions", {}, body)
            status, _, payload = answer if answer is not None else (500, {}, _error_body("openai", 500, "dropped"))
            row = {"id": row_id, "custom_id": line["custom_id"], "error": None,
                   "response": {"status_code": status, "request_id": "req_standin", "body": json.loads(payload)}}
            (out if status == 200 else errors).append(row)
        with self._lock:
            for rows, key in ((out, "output_file_id"), (errors, "error_file_id")):
                if rows:
                    file_id = f"file-standin{next(self._ids)}"
                    self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                    batch[key] = file_id
            batch["status"] = "expired" if expired else "completed"
            batch["completed_at" if not expired else "expired_at"] = int(time.time())
            batch["request_counts"] = {"total": len(batch["_lines"]), "completed": len(out),
                                       "failed": len(errors)}

    def _run_message_batch(self, batch: dict) -> None:
        results = []
        expired = False
        for line in batch["_lines"]:
            body = line["body"]
            model = str(body.get("model", ""))
            with self._lock:
                expire = self.batch_expire[model] > 0
                fail = not expire and self.batch_fail[model] > 0
                if expire:
                    self.batch_expire[model] -= 1
                elif fail:
                    self.batch_fail[model] -= 1
            if expire:
                expired = True
                results.append({"custom_id": line["custom_id"], "result": {"type": "expired"}})
                continue
            if fail:
                results.append({"custom_id": line["custom_id"], "result": {
                    "type": "errored", "error": {"type": "error", "error": {"type": "api_error",
                                                                            "message": "stand-in batch failure"}}}})
                continue
            answer = self.handle("anthropic", "/v1/messages", {}, body)
            status, _, payload = answer if answer is not None else (500, {}, _error_body("anthropic", 500, "dropped"))
            if status == 200:
                results.append({"custom_id": line["custom_id"], "result": {"type": "succeeded",
                                                                           "message": json.loads(payload)}})
            else:
                results.append({"custom_id": line["custom_id"], "result": {"type": "errored",
                                                                           "error": json.loads(payload)}})
        with self._lock:
            batch["_results"] = results
            batch["status"] = "expired" if expired else "completed"

    def _batch_due(self, batch: dict) -> bool:
        """Whether batch_delay_s, as it is now, has passed since the batch was created."""
        return time.monotonic() >= batch["_born"] + self.batch_delay_s

    def _batch_json(self, batch: dict) -> dict:
        shown = {k: v for k, v in batch.items() if not k.startswith("_")}
        shown.setdefault("request_counts", {"total": len(batch["_lines"]), "completed": 0, "failed": 0})
        return shown


def _rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def _common_prefix(a: str, b: str) -> str:
    low, high = 0, min(len(a), len(b))  # a[:low] == b[:low]; the answer is at most high
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return a[:low]


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    """The file part of a multipart/form-data body."""
    import email.parser
    import email.policy

    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    for part in message.iter_parts():
        if part.get_filename() is not None or part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True) or b""
    return b""


def _forced_tool(body: dict) -> dict | None:
    choice = body.get("tool_choice") or {}
    if choice.get("type") != "tool":
        return None
    return next((t for t in body.get("tools") or [] if t.get("name") == choice.get("name")), None)


_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}


_GOOGLE_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                    429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def _error_body(api: str, status: int, message: str) -> bytes:
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    if api == "openai":
        return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}}).encode()
    if api == "gemini":
        return json.dumps({"error": {"code": status, "message": message,
                                     "status": _GOOGLE_STATUSES.get(status, "INTERNAL" if status >= 500
                                                                    else "INVALID_ARGUMENT")}}).encode()
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default listen backlog (5) drops connections when 32+ clients connect at once.
    request_queue_size = 512
    standin: StandIn

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about a client that went away mid-request (a process the tests killed)."""
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    # Nagle plus the client's delayed ACK would hold a small response back ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows stderr
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if len(raw) < length:
            # The client died mid-send (a SIGKILLed runner): a provider never sees such a request,
            # so it is neither recorded nor answered.
            self.close_connection = True
            return
        path = self.path.split("?", 1)[0]
        if path.startswith("/google/"):
            self._send(*self.server.standin.gemini_batch_post(path, self.headers, raw))
            return
        if "/messages/batches" in path:
            self._send(*self.server.standin.message_batch_post(path, raw))
            return
        if path.endswith("/files") or "/batches" in path:
            self._send(*self.server.standin.batch_post(path, self.headers, raw))
            return
        if path.endswith("/chat/completions"):
            api = "openai"
        elif path.endswith("/messages"):
            api = "anthropic"
        else:
            self._send(404, {}, b'{"error": {"message": "not found"}}')
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {}, _error_body(api, 400, "request body is not JSON"))
            return
        answer = self.server.standin.handle(api, path, self.headers, body)
        if answer is None:
            self.close_connection = True
            return
        self._send(*answer)

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path.startswith("/google/"):
            self._send(*self.server.standin.gemini_batch_get(path, self.headers, query))
            return
        if "/messages/batches" in path:
            self._send(*self.server.standin.message_batch_get(path, query))
            return
        if "/batches" in path or path.endswith("/content"):
            self._send(*self.server.standin.batch_get(path))
            return
        self._send(404, {}, b'{"error": {"message": "not found"}}')

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("x-request-id", "req_standin")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout): nothing to do
