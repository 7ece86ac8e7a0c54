"""Judge calls through the providers' batch APIs (`--batch`): half the price, answered within the
provider's window (24 hours; Gemini's, 48) instead of seconds.

A run's live calls to a provider with a batch API (OpenAI's Batch API, through its SDK: a JSONL
file uploaded, a batch created, polled, its output and error files read; Anthropic's Message
Batches, through its SDK; Gemini's batch mode, through Google's google-genai SDK: the requests
inlined in the create call, the responses inlined in the finished batch) go as one batch per
provider (per model for Gemini, whose batches are a model's). Everything is written to the ledger
before the runner waits (sql/judges/):

1. the batch and each request's custom_id and item (judge_batch, judge_batch_request), in one
   transaction with the suite's started-call rows (their estimates at the batch rates);
2. then the batch is submitted, naming the ledger's batch id (OpenAI's metadata, Gemini's
   display_name), and the provider's id is written at once (judge_batch_event 'submitted');
3. the runner polls, writing each status the provider reports when it changes;
4. each request's result is stored as the suite's row (a verdict, or a provider_error with the
   provider's reason) in one transaction with its outcome (judge_batch_result).

So a runner killed at any point resumes the same batch when the same command runs again: a batch
with requests whose outcome is unread is polled, never submitted again (one found unsubmitted is
first looked for among the provider's batches by the ledger batch id it carries, in case the runner
died between the provider's answer and step 2: OpenAI's batches carry it as metadata, Gemini's as
their display name; an Anthropic Message Batch carries none, so it is told by its size, its time and,
once it ends, its results' custom_ids, unique to the ledger batch; one the provider does not have is
submitted only as far as --budget-usd holds it), and a result already stored is never read twice.
Requests the batch failed or let expire are retried once, in a second batch or
(`--batch-fallback sync`) as ordinary calls; a request that fails again stays a provider_error, and
the run stays open as after any failed call. Providers without a batch API here are called
synchronously.
"""

from __future__ import annotations

import asyncio
import datetime
import io
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

from . import money, sdks
from .pricing import Budget, Reservation, cost_of
from .providers import BUDGET_EXHAUSTED, PROVIDER_ERROR, JudgeCall, JudgeRequest
from .specs import ModelSpec, gemini_native_config, provider_config

QUERIES = Queries(__package__)

BATCH_MODES = ("off", "on", "auto")
FALLBACKS = ("batch", "sync")
# The providers whose batch API evalledger calls (the others' calls are made one by one).
BATCH_PROVIDERS = ("openai", "anthropic", "google")
# How long a provider may take to answer a batch: a run whose deadline is shorter is not batched
# by --batch auto. Gemini aims at 24 hours and lets a batch run 48 before it expires.
WINDOW_S = {"openai": 24 * 3600, "anthropic": 24 * 3600, "google": 48 * 3600}
# The statuses after which a batch changes no more.
TERMINAL = ("completed", "failed", "expired", "cancelled")
POLL_FIRST_S = 0.5
POLL_MAX_S = 60.0
# How far the provider's clock may be behind the database's: a batch the provider says it created
# this long before the ledger wrote it may still be the ledger's (AnthropicBatches.find).
CLOCK_SKEW_S = 600
_METADATA_KEY = "evalledger_batch"


def _since(batch: Any) -> datetime.datetime | None:
    """The earliest a provider's clock may say a ledger batch was created: when the ledger wrote it,
    less CLOCK_SKEW_S (None: not known). A batch created before it is another ledger's of the same
    number (a ledger made anew, or another one on the same account)."""
    return batch.created_at - datetime.timedelta(seconds=CLOCK_SKEW_S) if batch.created_at is not None else None


def display_name(batch_id: int) -> str:
    """The name a Gemini batch carries: the ledger's batch id."""
    return f"evalledger-batch-{batch_id}"


@dataclass
class BatchOptions:
    """--batch and --batch-fallback: whether a run's calls go as batches, and how what a batch
    failed is retried."""

    mode: str = "off"
    fallback: str = "batch"
    poll_max_s: float = POLL_MAX_S

    def __post_init__(self) -> None:
        if self.mode not in BATCH_MODES:
            raise EvalledgerError(f"--batch must be one of {', '.join(BATCH_MODES)}, got {self.mode!r}")
        if self.fallback not in FALLBACKS:
            raise EvalledgerError(f"--batch-fallback must be one of {', '.join(FALLBACKS)}, got {self.fallback!r}")

    def batched(self, *, gate: bool = False, deadline_s: float | None = None, providers: Sequence[str] = ()) -> bool:
        """Whether the run's calls go as batches: --batch on always; --batch auto when the run does
        not gate (a CI gate wants its answer now) and no deadline of its own is shorter than the
        providers' window."""
        return not self.unbatched_because(gate=gate, deadline_s=deadline_s, providers=providers)

    def unbatched_because(self, *, gate: bool = False, deadline_s: float | None = None,
                          providers: Sequence[str] = ()) -> str:
        """Why the run's calls go one by one, in a few words; empty when they go as batches."""
        if self.mode == "on":
            return ""
        if self.mode == "off":
            return "--batch off"
        if gate:
            return "a gate wants its answer now"
        windows = [WINDOW_S[p] for p in providers if p in WINDOW_S]
        if not windows:
            return "no model the run asks has a batch API"
        if deadline_s is not None and deadline_s < max(windows):
            return (f"its rubric abandons it in {deadline_s / 3600:.1f} h, before a batch's "
                    f"{max(windows) // 3600} h window ends")
        return ""


@dataclass
class Counts:
    """How a run's calls went: how many through a batch, how many one by one."""

    batch: int = 0
    sync: int = 0
    notes: list[str] = field(default_factory=list)


class Ledger:
    """A run's batches in the ledger (sql/judges/queries.sql), on the suite's connection."""

    def __init__(self, conn: Any, suite: str, run_key: str) -> None:
        self.conn, self.suite, self.run_key = conn, suite, run_key

    def _rows(self, name: str, params: dict) -> list[dict]:
        from psycopg.rows import dict_row

        # A transaction of its own (or a savepoint of the caller's): on a connection outside
        # autocommit, a read left open would hold every later write uncommitted.
        with self.conn.transaction(), self.conn.cursor(row_factory=dict_row) as cur:
            cur.execute(QUERIES[name], params)
            return cur.fetchall() if cur.description else []

    def open_batches(self) -> list[dict]:
        """The run's batches with requests whose outcome is unread."""
        return self._rows("open_batches", {"suite": self.suite, "run_key": self.run_key})

    def pending(self, batch_id: int) -> list[dict]:
        """A batch's requests whose outcome is unread."""
        return self._rows("batch_requests", {"batch_id": batch_id})

    def new_batch(self, provider: str, attempt: int, requests: Sequence[JudgeRequest],
                  item: Callable[[JudgeRequest], str], on_submit: Callable[[JudgeRequest], Any]) -> tuple[int | None, dict]:
        """Write a batch and its requests in one transaction, each request with what on_submit writes
        for it (False from it: the request is left out, and not sent); return the batch's id and its
        requests by custom_id. A batch whose every request is left out is not written (its id is None):
        it would stand in the ledger as a batch with nothing to send."""
        with self.conn.transaction():
            numbered = [(n, req) for n, req in enumerate(requests, 1) if on_submit(req) is not False]
            if not numbered:
                return None, {}
            batch_id = self._rows("insert_batch", {"suite": self.suite, "run_key": self.run_key,
                                                   "provider": provider, "attempt": attempt})[0]["batch_id"]
            kept = {}
            for n, req in numbered:
                custom_id = f"b{batch_id}-{n}"
                self.conn.execute(QUERIES["insert_request"], {"batch_id": batch_id, "custom_id": custom_id,
                                                              "item": item(req), "model": req.spec.spec})
                kept[custom_id] = req
        return batch_id, kept

    def known_provider_batches(self, provider: str, since: Any) -> set[str]:
        """The provider ids recorded for the provider's batches the ledger wrote since `since`."""
        return {r["provider_batch_id"] for r in self._rows("known_provider_batches", {"provider": provider,
                                                                                      "since": since})}

    def event(self, batch_id: int, status: str, provider_batch_id: str | None = None,
              detail: dict | None = None) -> None:
        """What the provider said of a batch, as a new row."""
        from psycopg.types.json import Jsonb

        with self.conn.transaction():
            self.conn.execute(QUERIES["insert_event"], {"batch_id": batch_id, "status": status,
                                                        "provider_batch_id": provider_batch_id,
                                                        "detail": Jsonb(detail) if detail is not None else None})

    def result(self, batch_id: int, custom_id: str, outcome: str, error: str | None) -> None:
        """One request's outcome (call it in the transaction that stores the suite's row)."""
        self.conn.execute(QUERIES["insert_result"], {"batch_id": batch_id, "custom_id": custom_id, "outcome": outcome,
                                                     "error": None if error is None else error[:1000]})


def refuse_unbatched(conn: Any, suite: str, run_key: str, options: BatchOptions, because: str) -> None:
    """Stop a run resumed without batching (because: why not, BatchOptions.unbatched_because) while
    calls of it wait in a batch whose results are not read: the provider bills that batch whether it
    is read or not, so asking the same calls again one by one would pay for them twice."""
    waiting = Ledger(conn, suite, run_key).open_batches()
    if waiting:
        ids = ", ".join(str(b["batch_id"]) for b in waiting)
        auto = f"; --batch auto does not batch it now: {because}" if options.mode == "auto" else ""
        raise EvalledgerError(f"run {run_key} has calls in batch {ids} whose results are not read yet: run the same "
                              f"command with --batch to read them (asked again one by one they would be paid "
                              f"twice{auto})")


# --- OpenAI's Batch API ------------------------------------------------------------------------


class OpenAIBatches:
    """OpenAI's Batch API through the openai SDK's async client."""

    provider = "openai"

    def __init__(self, client: Any) -> None:
        self.client = client

    async def submit(self, batch_id: int, lines: list[dict]) -> str:
        """Upload the requests as a JSONL file and create the batch; its provider id."""
        data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode("utf-8")
        uploaded = await self.client.files.create(file=(f"evalledger-batch-{batch_id}.jsonl", io.BytesIO(data)),
                                                  purpose="batch")
        created = await self.client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                                   completion_window="24h",
                                                   metadata={_METADATA_KEY: str(batch_id)})
        return created.id

    async def find(self, batch: Any) -> str | None:
        """The provider's id of the batch whose metadata names this ledger batch, if it was created
        since the ledger wrote it."""
        since = _since(batch)
        async for found in self.client.batches.list(limit=100):  # newest first
            if since is not None and found.created_at < since.timestamp():
                break
            if (found.metadata or {}).get(_METADATA_KEY) == str(batch.batch_id):
                return found.id
        return None

    async def aclose(self) -> None:
        await self.client.close()

    async def status(self, provider_batch_id: str) -> tuple[str, dict, Any]:
        """(status, what to record of it, the provider's batch object)."""
        found = await self.client.batches.retrieve(provider_batch_id)
        counts = found.request_counts
        detail = {"request_counts": {"total": counts.total, "completed": counts.completed, "failed": counts.failed}
                  if counts is not None else None}
        if found.errors is not None and found.errors.data:
            detail["errors"] = [e.message for e in found.errors.data if e.message][:5]
        return found.status, detail, found

    async def results(self, found: Any) -> dict[str, tuple[sdks.Reply | None, str | None]]:
        """Each custom_id's (reply, None) or (None, why it failed), from the output and error files."""
        from openai.types.chat import ChatCompletion

        out: dict[str, tuple[sdks.Reply | None, str | None]] = {}
        for file_id in (found.output_file_id, found.error_file_id):
            if not file_id:
                continue
            content = await self.client.files.content(file_id)
            for line in content.text.splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                custom_id = row.get("custom_id")
                error = row.get("error")
                response = row.get("response") or {}
                if error:
                    out[custom_id] = (None, f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip())
                elif response.get("status_code") != 200:
                    body = response.get("body") or {}
                    message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
                    out[custom_id] = (None, f"HTTP {response.get('status_code')}: {message or body}")
                else:
                    out[custom_id] = (sdks.openai_reply(ChatCompletion.model_validate(response["body"])), None)
        return out

    async def cancel(self, provider_batch_id: str) -> str:
        """Ask the provider to cancel the batch; its status then."""
        return (await self.client.batches.cancel(provider_batch_id)).status


# --- Anthropic's Message Batches ----------------------------------------------------------------


class AnthropicBatches:
    """Anthropic's Message Batches through the anthropic SDK's async client. A Message Batch carries
    no metadata, so one created by a runner that died before it recorded the batch's id is told from
    the provider's list by what it has (find): created since the ledger wrote the batch, of the same
    number of requests, and, once it ends, answering exactly the ledger batch's custom_ids."""

    provider = "anthropic"

    def __init__(self, client: Any) -> None:
        self.client = client
        self.schemas: dict[str, dict | None] = {}
        self.say: Callable[[str], None] = lambda line: None
        self.poll_max_s = POLL_MAX_S

    async def submit(self, batch_id: int, lines: list[dict]) -> str:
        created = await self.client.messages.batches.create(
            requests=[{"custom_id": line["custom_id"], "params": line["params"]} for line in lines])
        return created.id

    async def find(self, batch: Any) -> str | None:
        """The id of the Message Batch this ledger batch became, if the provider created it: among
        the batches created since the ledger wrote it (less CLOCK_SKEW_S), those of as many requests
        are candidates, and a candidate is this batch when, once it has ended (waited for, polled as
        a batch is), its results name exactly the ledger batch's custom_ids (b<batch id>-<n>: no
        other ledger batch has them)."""
        wanted = set(batch.custom_ids)
        since = _since(batch)
        candidates = []
        async for found in self.client.messages.batches.list(limit=100):  # newest first
            if since is not None and found.created_at < since:
                break
            counts = found.request_counts
            size = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            if size == len(wanted) and found.id not in batch.known:  # not another ledger batch's
                candidates.append(found.id)
        wait, said = POLL_FIRST_S, False
        while candidates:
            running = []
            for candidate in candidates:
                found = await self.client.messages.batches.retrieve(candidate)
                if found.processing_status != "ended":
                    running.append(candidate)
                    continue
                named = {row.custom_id async for row in await self.client.messages.batches.results(candidate)}
                if named == wanted:
                    return candidate
            if running and not said:
                self.say(f"batch {batch.batch_id}: anthropic has {len(running)} batch(es) of its size created since "
                         f"it was written ({', '.join(running)}): waiting for them to end, to tell by their "
                         "custom_ids whether one is this batch before sending it again")
                said = True
            candidates = running
            if candidates:
                await asyncio.sleep(wait)
                wait = min(self.poll_max_s, wait * 1.5)
        return None

    async def aclose(self) -> None:
        await self.client.close()

    async def status(self, provider_batch_id: str) -> tuple[str, dict, Any]:
        found = await self.client.messages.batches.retrieve(provider_batch_id)
        counts = found.request_counts
        detail = {"request_counts": {"processing": counts.processing, "succeeded": counts.succeeded,
                                     "errored": counts.errored, "canceled": counts.canceled,
                                     "expired": counts.expired}}
        status = {"in_progress": "in_progress", "canceling": "cancelling"}.get(found.processing_status)
        if status is None:  # ended
            status = ("cancelled" if found.cancel_initiated_at is not None
                      else "expired" if counts.expired and not counts.succeeded + counts.errored else "completed")
        return status, detail, found

    async def results(self, found: Any) -> dict[str, tuple[sdks.Reply | None, str | None]]:
        out: dict[str, tuple[sdks.Reply | None, str | None]] = {}
        async for row in await self.client.messages.batches.results(found.id):
            result = row.result
            if result.type == "succeeded":
                out[row.custom_id] = (sdks.anthropic_reply(result.message, self.schemas.get(row.custom_id)), None)
            elif result.type == "errored":
                error = getattr(result.error, "error", None)
                out[row.custom_id] = (None, f"{getattr(error, 'type', 'error')}: {getattr(error, 'message', '')}")
            elif result.type == "expired":
                out[row.custom_id] = (None, "batch_expired: the request was not processed before the batch expired")
            else:
                out[row.custom_id] = (None, f"batch_{result.type}: the batch was cancelled before the request ran")
        return out

    async def cancel(self, provider_batch_id: str) -> str:
        found = await self.client.messages.batches.cancel(provider_batch_id)
        return {"canceling": "cancelling"}.get(found.processing_status, found.processing_status)


# --- Gemini's batch mode ------------------------------------------------------------------------

# Gemini's job states (the google-genai SDK's JobState) as the statuses the ledger records.
_GEMINI_STATES = {"JOB_STATE_SUCCEEDED": "completed", "JOB_STATE_PARTIALLY_SUCCEEDED": "completed",
                  "JOB_STATE_FAILED": "failed", "JOB_STATE_CANCELLED": "cancelled", "JOB_STATE_EXPIRED": "expired",
                  "JOB_STATE_CANCELLING": "cancelling"}


class GeminiBatches:
    """Gemini's batch mode through Google's google-genai SDK (its async client, client.aio): the
    requests inlined in the create call (one model's: a Gemini batch is created on its model), each
    with its custom_id as metadata; the batch's display_name carries the ledger's batch id; the
    finished batch carries the responses inline, each with its request's metadata. Google's
    OpenAI-compatible endpoint, which the synchronous calls use, has no batch mode of its own."""

    provider = "google"

    def __init__(self, client: Any) -> None:
        self.client = client

    async def submit(self, batch_id: int, lines: list[dict]) -> str:
        models = {line["model"] for line in lines}
        if len(models) != 1:
            raise EvalledgerError(f"batch {batch_id}: a Gemini batch is one model's, got {sorted(models)}")
        created = await self.client.aio.batches.create(model=models.pop(), src=[line["request"] for line in lines],
                                                       config={"display_name": display_name(batch_id)})
        return created.name

    async def find(self, batch: Any) -> str | None:
        """The name of the batch whose display_name names this ledger batch, if it was created since
        the ledger wrote it."""
        wanted, since = display_name(batch.batch_id), _since(batch)
        async for found in await self.client.aio.batches.list(config={"page_size": 100}):
            if found.display_name == wanted and (since is None or found.create_time is None
                                                 or found.create_time >= since):
                return found.name
        return None

    async def status(self, provider_batch_id: str) -> tuple[str, dict, Any]:
        found = await self.client.aio.batches.get(name=provider_batch_id)
        state = found.state.value if found.state is not None else "JOB_STATE_UNSPECIFIED"
        detail: dict[str, Any] = {"state": state}
        if found.error is not None and found.error.message:
            detail["errors"] = [found.error.message]
        if found.dest is not None and found.dest.inlined_responses is not None:
            detail["responses"] = len(found.dest.inlined_responses)
        return _GEMINI_STATES.get(state, "in_progress"), detail, found

    async def results(self, found: Any) -> dict[str, tuple[sdks.Reply | None, str | None]]:
        """Each custom_id's (reply, None) or (None, why it failed), from the inlined responses (a batch
        that failed, expired or was cancelled before it ran has none)."""
        out: dict[str, tuple[sdks.Reply | None, str | None]] = {}
        for row in (found.dest.inlined_responses or []) if found.dest is not None else []:
            custom_id = (row.metadata or {}).get("custom_id")
            if custom_id is None:
                continue
            if row.error is not None:
                out[custom_id] = (None, f"{row.error.code or 'error'}: {row.error.message or ''}".strip())
            elif row.response is None:
                out[custom_id] = (None, "error: the batch answered the request with neither a response nor an error")
            else:
                out[custom_id] = (sdks.gemini_reply(row.response), None)
        return out

    async def cancel(self, provider_batch_id: str) -> str:
        await self.client.aio.batches.cancel(name=provider_batch_id)
        return (await self.status(provider_batch_id))[0]

    async def aclose(self) -> None:
        await self.client.aio.aclose()


def api_for(provider: str, timeout_s: float = 120.0, env: Any = None) -> OpenAIBatches | AnthropicBatches | GeminiBatches:
    """The batch API of a provider (one of BATCH_PROVIDERS), its client made from the environment."""
    if provider not in BATCH_PROVIDERS:
        raise EvalledgerError(f"no batch API for provider {provider!r} (batched: {', '.join(BATCH_PROVIDERS)})")
    if provider == "google":
        return GeminiBatches(sdks.make_gemini_client(gemini_native_config(env), timeout_s))
    client = sdks.make_client(provider_config(provider, env), timeout_s)
    return AnthropicBatches(client) if provider == "anthropic" else OpenAIBatches(client)


def request_line(custom_id: str, req: JudgeRequest) -> dict:
    """One request of a batch: the body an ordinary call would send (OpenAI's JSONL line, Anthropic's
    params, Gemini's inlined request with its custom_id as metadata)."""
    spec: ModelSpec = req.spec  # type: ignore[assignment]
    if spec.provider == "google":
        request = sdks.gemini_request(spec, req.system, req.user, req.json_schema, req.max_output_tokens,
                                      req.temperature)
        return {"custom_id": custom_id, "model": spec.model, "request": {**request, "metadata": {"custom_id": custom_id}}}
    if spec.provider == "anthropic":
        return {"custom_id": custom_id,
                "params": sdks.anthropic_request(spec, req.system, req.user, req.json_schema, req.max_output_tokens,
                                                 req.cache)}
    body = sdks.openai_request(spec, req.system, req.user, req.json_schema, req.max_output_tokens, req.temperature,
                               req.cache)
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}


# --- a run's batched calls ----------------------------------------------------------------------


@dataclass
class _Open:
    batch_id: int | None  # None: every request left out, no batch written
    provider: str
    attempt: int
    provider_batch_id: str | None
    status: str | None
    requests: dict[str, JudgeRequest]  # by custom_id: what is unread
    resumed: bool = False  # found in the ledger, written by an earlier runner
    created_at: Any = None  # when the ledger wrote it (the database's clock)
    custom_ids: frozenset[str] = frozenset()  # every request of it whose outcome is unread (resumed)
    known: frozenset[str] = frozenset()  # the provider ids other ledger batches were submitted as
    withheld: bool = False  # resumed, never submitted, and the budget cannot hold it: not sent now
    submitted_at: float = field(default_factory=time.monotonic)


class BatchRun:
    """A run's calls made through batches.

    The suite gives the requests it still needs answered and says how each is named in the run
    (item), and what it stores: on_submit(request, projected cost at the batch rates) writes its
    started-call row (called inside the transaction that writes the batch; False from it leaves the
    request out of the batch, unsent), store(call) its row for
    a result (called inside the transaction that writes the request's outcome) and returns its
    progress line. Panel.batch is how a suite's run makes one.

    With a budget (--budget-usd), each request is held against it at its estimate at the batch rates
    before it is written, and settled at what its result cost when read. A request the cap cannot
    hold is left out of the batch, unsent, and stored as a call the budget did not allow
    (budget_exhausted), as a call made one by one is. The requests of a batch the provider has (an
    earlier command submitted it, or it is found among the provider's batches) are held first, cap or
    no cap: the provider bills them whether they are read or not, so the command that resumes them
    pays for them before it asks anything more. A batch an earlier command wrote but never submitted
    (and the provider does not have) is this command's own spend, held under the cap whole or not at
    all (_hold_resumed).
    """

    def __init__(self, ledger: Ledger, *, item: Callable[[JudgeRequest], str],
                 on_submit: Callable[[JudgeRequest, Any], Any], store: Callable[[JudgeCall], str | None],
                 say: Callable[[str], None], options: BatchOptions, timeout_s: float = 120.0,
                 apis: dict[str, Any] | None = None, store_failures: bool = True, budget: Budget | None = None) -> None:
        self.ledger, self.item, self.on_submit, self.store, self.say = ledger, item, on_submit, store, say
        self.budget = budget
        self.held: dict[str, Reservation] = {}  # by item: what a request's cost holds of the budget
        # False: a failure that is retried is not stored as the suite's row (a suite whose rows take
        # one reply per item: its retry's is the one stored), only as the request's outcome.
        self.store_failures = store_failures
        self.options, self.timeout_s = options, timeout_s
        self.apis: dict[str, Any] = dict(apis or {})
        self.counts = Counts()
        self.failed: list[JudgeRequest] = []  # failed in a first batch: retried once

    def api(self, provider: str) -> Any:
        if provider not in self.apis:
            api = self.apis[provider] = api_for(provider, self.timeout_s)
            if isinstance(api, AnthropicBatches):
                api.say, api.poll_max_s = self.say, self.options.poll_max_s
        return self.apis[provider]

    def run(self, requests: Sequence[JudgeRequest], before: Callable[[], Any] | None = None) -> list[JudgeRequest]:
        """Resume the run's open batches, batch what is left, wait, store every result, retry what
        failed once (in a batch, or left to the caller with --batch-fallback sync); return the
        requests the caller is to make one by one (providers without a batch API, and the retries
        with --batch-fallback sync). before: what the caller asks one by one before the batches are
        waited for (the calls no batch can carry), called once the resumed batches are held against
        the budget, so that it is asked only as far as the budget holds beside them."""
        by_item = {self.item(r): r for r in requests}
        if len(by_item) != len(requests):
            raise EvalledgerError("batch: two requests of one run share an item")
        sync = [r for r in requests if r.spec.provider not in BATCH_PROVIDERS]  # type: ignore[union-attr]
        if self.budget is not None and self.budget.cap_usd is not None:  # a cap needs every model's price
            self.budget.check_prices(dict.fromkeys(r.spec for r in requests))  # type: ignore[misc]
        try:
            opened = self._resume(by_item)
            unsent = [b for b in opened if b.provider_batch_id is None]
            if unsent:  # asked before anything is held: whether the provider has them decides who pays
                try:
                    asyncio.run(self._look_for(unsent))
                finally:
                    self.apis.clear()  # closed in their loop; the next loop makes its own clients
            self._hold_resumed(opened)
            if before is not None:
                before()
            asyncio.run(self._run(by_item, opened))
        finally:
            self.apis.clear()
        if self.failed:
            sync += self.failed
        return sync

    async def _run(self, by_item: dict[str, JudgeRequest], opened: list[_Open]) -> None:
        try:
            covered = {self.item(r) for b in opened for r in b.requests.values()}  # the withheld included
            todo = [r for item, r in by_item.items() if item not in covered
                    and r.spec.provider in BATCH_PROVIDERS]  # type: ignore[union-attr]
            opened = [b for b in opened if not b.withheld]
            for provider, group in _groups(todo):
                opened.append(self._write(provider, 1, group))
            await self._finish(opened)
            if self.failed and self.options.fallback == "batch":
                retry, self.failed = self.failed, []
                for provider, group in _groups(retry):
                    batch = self._write(provider, 2, group)
                    if not batch.requests:  # the budget held none of them
                        continue
                    self.say(f"batch {batch.batch_id}: retrying {len(batch.requests)} request(s) a batch failed or "
                             "let expire")
                    await self._finish([batch])
                self.failed = []  # retried once: what failed again stays a provider_error
        finally:
            for api in self.apis.values():
                await api.aclose()

    def _resume(self, by_item: dict[str, JudgeRequest]) -> list[_Open]:
        """The run's batches with requests whose outcome is unread, as far as the suite still needs them."""
        opened = []
        for row in self.ledger.open_batches():
            pending = self.ledger.pending(row["batch_id"])
            requests = {p["custom_id"]: by_item[p["item"]] for p in pending if p["item"] in by_item}
            if not requests:
                continue
            opened.append(_Open(row["batch_id"], row["provider"], row["attempt"], row["provider_batch_id"],
                                row["status"], requests, resumed=True, created_at=row["created_at"],
                                custom_ids=frozenset(p["custom_id"] for p in pending)))
        return opened

    async def _look_for(self, batches: list[_Open]) -> None:
        """Ask each provider whether it has the resumed batches the ledger never heard its id for (a
        runner that died between the provider's answer and recording it): one it has is recorded
        submitted, as if its id had been heard; one it has not stays unsubmitted, for _hold_resumed."""
        try:
            for batch in batches:
                await self._guarded(batch, "looking for", self._find(batch))
        finally:
            for api in self.apis.values():
                await api.aclose()

    async def _find(self, batch: _Open) -> None:
        if batch.created_at is not None:  # the ids other ledger batches were submitted as are not its
            batch.known = frozenset(self.ledger.known_provider_batches(batch.provider, _since(batch)))
        found = await self.api(batch.provider).find(batch)
        if found is not None:
            self.say(f"batch {batch.batch_id}: found submitted to {batch.provider} as {found}")
            self.ledger.event(batch.batch_id, "submitted", found)
            batch.provider_batch_id = found

    def _hold_resumed(self, opened: list[_Open]) -> None:
        """Hold the resumed batches against the budget before anything else is asked. A batch the
        provider has (submitted earlier, or found just now) is billed whether it is read or not: its
        requests are held first, cap or no cap. A batch written but never submitted is this command's
        own spend: held under the cap, whole or not at all (a batch is sent as the ledger wrote it, the
        requests its custom_ids name: an Anthropic batch lost in a kill is told by them and by its
        size). One the cap cannot hold is not submitted: its requests are stored as calls the budget
        did not allow and stay pending in the ledger's batch, for the same command with a larger
        budget to submit."""
        for batch in opened:
            if batch.provider_batch_id is not None:
                self._hold_owed(batch.requests.values())
                self.say(f"batch {batch.batch_id} ({batch.provider}, {batch.provider_batch_id}) was submitted "
                         f"earlier: resuming it, {len(batch.requests)} request(s) to read, nothing sent again")
        for batch in opened:
            if batch.provider_batch_id is not None:
                continue
            if self._hold_capped(batch.requests.values()):
                self.say(f"batch {batch.batch_id} ({batch.provider}) was written but never submitted: submitting "
                         f"its {len(batch.requests)} request(s) now")
                continue
            batch.withheld = True
            self.say(f"batch {batch.batch_id} ({batch.provider}) was written but never submitted: not submitted now, "
                     f"its {len(batch.requests)} request(s) would pass the budget cap; it stays in the ledger "
                     "for the same command with a larger budget")
            for r in batch.requests.values():
                self._refuse(r)

    def _hold_owed(self, requests: Any) -> None:
        """Hold what the requests of a batch the provider has cost, cap or no cap."""
        if self.budget is None:
            return
        for r in requests:
            if self.item(r) not in self.held:
                self.held[self.item(r)] = self.budget.hold(float(_estimate(r)), owed=True)  # type: ignore[assignment]

    def _hold_capped(self, requests: Any) -> bool:
        """Hold what the requests cost under the cap, all of them or none; whether they were held."""
        if self.budget is None:
            return True
        held: dict[str, Reservation] = {}
        for r in requests:
            reservation = self.budget.hold(float(_estimate(r)))
            if reservation is None:
                for reservation in held.values():
                    self.budget.settle(reservation, 0.0)
                return False
            held[self.item(r)] = reservation
        self.held.update(held)
        return True

    def _refuse(self, r: JudgeRequest) -> None:
        """Store a request the budget did not allow, unsent, as a call made one by one is stored."""
        spec: ModelSpec = r.spec  # type: ignore[assignment]
        call = JudgeCall(spec=spec, key=r.key, error_kind=BUDGET_EXHAUSTED,
                         error_message=f"skipped: projected cost of {spec.spec} would pass the budget cap")
        with self.ledger.conn.transaction():
            line = self.store(call)
        if line:
            self.say(line)

    def _write(self, provider: str, attempt: int, requests: list[JudgeRequest]) -> _Open:
        refused: list[JudgeRequest] = []

        def submitted(r: JudgeRequest) -> Any:
            projected = _estimate(r)
            held = self.budget.hold(float(projected)) if self.budget is not None else None
            if self.budget is not None and held is None:
                refused.append(r)
                return False
            written = self.on_submit(r, projected)
            if held is not None:
                if written is False:
                    self.budget.settle(held, 0.0)  # type: ignore[union-attr]
                else:
                    self.held[self.item(r)] = held
            return written

        batch_id, kept = self.ledger.new_batch(provider, attempt, requests, self.item, submitted)
        for r in refused:
            self._refuse(r)
        return _Open(batch_id, provider, attempt, None, None, kept)

    async def _finish(self, batches: list[_Open]) -> None:
        batches = [b for b in batches if b.requests]  # every request of it left out: nothing to send
        for batch in batches:
            await self._guarded(batch, "submitting", self._submit(batch))
        await asyncio.gather(*(self._guarded(b, "waiting for", self._wait_and_read(b)) for b in batches))

    async def _guarded(self, batch: _Open, doing: str, step: Any) -> None:
        """A step of a batch, what its provider's SDK raised said in one line: the batch stays in the
        ledger as far as it went, and the same command again resumes it."""
        try:
            await step
        except EvalledgerError:
            raise
        except Exception as exc:
            failure = provider_failure(exc, batch.provider, self.timeout_s)
            if failure is None:
                raise
            raise EvalledgerError(f"batch {batch.batch_id}: {batch.provider} failed while {doing} it: {failure}; "
                                  "the same command again resumes it") from exc

    async def _submit(self, batch: _Open) -> None:
        if batch.provider_batch_id is not None:
            return
        # A resumed batch without the provider's id was looked for already (_look_for): not there.
        lines = [request_line(custom_id, req) for custom_id, req in batch.requests.items()]
        found = await self.api(batch.provider).submit(batch.batch_id, lines)
        self.counts.batch += len(lines)
        self.say(f"batch {batch.batch_id}: {len(lines)} request(s) submitted to {batch.provider} as {found}")
        self.ledger.event(batch.batch_id, "submitted", found)
        batch.provider_batch_id = found

    async def _wait_and_read(self, batch: _Open) -> None:
        api = self.api(batch.provider)
        wait = POLL_FIRST_S
        while True:
            status, detail, found = await api.status(batch.provider_batch_id)
            if status != batch.status:
                self.ledger.event(batch.batch_id, status if status in _KNOWN else "in_progress", None, detail)
                batch.status = status
            if status in TERMINAL:
                break
            await asyncio.sleep(wait)
            wait = min(self.options.poll_max_s, wait * 1.5)
        if isinstance(api, AnthropicBatches):  # its tool's name is the schema's
            api.schemas.update({custom_id: req.json_schema for custom_id, req in batch.requests.items()})
        results = await api.results(found)
        latency_ms = round((time.monotonic() - batch.submitted_at) * 1000)
        for custom_id, req in batch.requests.items():
            missing = custom_id not in results
            reply, error = results.get(custom_id, (None, f"batch {status}: no result for the request"))
            outcome = ("succeeded" if reply is not None
                       else "expired" if (error or "").startswith("batch_expired") or (missing and status == "expired")
                       else "cancelled" if missing and status == "cancelled" else "errored")
            call = _call(req, reply, error, outcome, latency_ms)
            held = self.held.pop(self.item(req), None)
            if held is not None:
                self.budget.settle(held, call.cost_usd)  # type: ignore[union-attr]
            retried = reply is None and batch.attempt == 1 and outcome != "cancelled"  # a cancel is not retried
            with self.ledger.conn.transaction():
                line = self.store(call) if self.store_failures or not retried else None
                self.ledger.result(batch.batch_id, custom_id, outcome, error)
            if line:
                self.say(line)
            if retried:
                self.failed.append(req)
        self.ledger.event(batch.batch_id, "ended", None, {"read": len(batch.requests)})


def provider_failure(exc: BaseException, provider: str, timeout_s: float) -> str | None:
    """What a provider's SDK raised over a batch, in one line (None: not a provider's failure)."""
    if provider == "google":
        errors = sys.modules.get("google.genai.errors")
        if errors is not None and isinstance(exc, errors.APIError):
            return f"HTTP {exc.code}: {exc.message}"
        httpx2 = sys.modules.get("httpx2")  # the SDK's HTTP stack, loaded with it
        if httpx2 is not None and isinstance(exc, httpx2.TimeoutException):
            return f"timeout after {timeout_s:g}s"
        if httpx2 is not None and isinstance(exc, httpx2.HTTPError):
            return f"connection error: {type(exc).__name__}: {exc}"
        return None
    failure = sdks.classify(exc, provider, timeout_s)
    return failure.message if failure.status is not None or failure.retryable else None


def _estimate(r: JudgeRequest) -> Any:
    """What a request may cost through a batch (money.estimate at the batch rates)."""
    return money.estimate(r.spec, r.system, r.user, r.max_output_tokens, batch=True)  # type: ignore[arg-type]


def _groups(requests: Sequence[JudgeRequest]) -> list[tuple[str, list[JudgeRequest]]]:
    """The batches requests go in, in the order of their first request: one per provider, and one
    per model for Gemini (a Gemini batch is created on its model)."""
    groups: dict[tuple[str, str], list[JudgeRequest]] = {}
    for r in requests:
        spec: ModelSpec = r.spec  # type: ignore[assignment]
        groups.setdefault((spec.provider, spec.model if spec.provider == "google" else ""), []).append(r)
    return [(provider, group) for (provider, _), group in groups.items()]


_KNOWN = ("validating", "in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")


def _call(req: JudgeRequest, reply: sdks.Reply | None, error: str | None, outcome: str, latency_ms: int) -> JudgeCall:
    spec: ModelSpec = req.spec  # type: ignore[assignment]
    call = JudgeCall(spec=spec, key=req.key, latency_ms=latency_ms, attempts=1, batch=True)
    if reply is None:
        call.error_kind = PROVIDER_ERROR
        call.error_message = f"batch request {outcome}: {error}"[:300]
    else:
        call.text, call.parsed = reply.text, reply.parsed
        call.input_tokens, call.output_tokens = reply.input_tokens, reply.output_tokens
        call.cached_input_tokens, call.cache_write_tokens = reply.cached_input_tokens, reply.cache_write_tokens
        call.structured = req.json_schema is not None
    call.cost_usd = cost_of(spec, call.input_tokens, call.output_tokens, call.cached_input_tokens,
                            call.cache_write_tokens, batch=True)
    return call


def cancel(conn: Any, batch_id: int, env: Any = None) -> tuple[str, str]:
    """Ask the provider to cancel one of the ledger's batches, and record that it was asked:
    (its provider id, the status the provider answered). What it did not answer is read as
    cancelled by the run that resumes it, and not retried."""
    from psycopg.rows import dict_row

    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(QUERIES["list_batches"], {"open": None, "limit": None, "batch_id": batch_id}).fetchall()
    if not rows:
        raise EvalledgerError(f"no judge batch {batch_id} (evalledger batch list)")
    row = rows[0]
    if row["provider_batch_id"] is None:
        raise EvalledgerError(f"batch {batch_id} was never submitted: nothing to cancel at {row['provider']}")
    if row["status"] in TERMINAL + ("ended",):
        raise EvalledgerError(f"batch {batch_id} is {row['status']} already: nothing to cancel")

    async def ask() -> str:
        api = api_for(row["provider"], env=env)
        try:
            return await api.cancel(row["provider_batch_id"])
        except Exception as exc:
            failure = provider_failure(exc, row["provider"], 120.0)
            if failure is None:
                raise
            raise EvalledgerError(f"batch {batch_id}: {row['provider']} failed to cancel it: {failure}") from exc
        finally:
            await api.aclose()

    status = asyncio.run(ask())
    Ledger(conn, row["suite"], row["run"]).event(batch_id, "cancel_asked", None, {"provider_status": status})
    return row["provider_batch_id"], status
