"""How a replay asks the brain under test: one JSON object in, one JSON object out (docs/replay.md).

The request is the captured row's ``id``, ``tool_name``, ``query``, ``detail``, ``expand_enabled``
and ``vector_enabled`` (the mode the brain must answer in: ``vector_enabled`` false is the keyword
path only). The reply carries seed 001's result fields: ``retrieved_slugs`` (strings),
``retrieved_chunk_ids`` (whole numbers, in result order, duplicates kept), ``source_ids``
(strings), ``vector_enabled`` and ``expansion_applied`` (booleans), ``detail_resolved`` ("low",
"medium", "high" or null) and ``latency_ms`` (a finite number of at least 0). A brain that cannot
answer a row in its mode replies ``{"replayable": false, "reason": "..."}``: the row is recorded
as not replayable. Anything else (a non-zero exit, a time-out, a reply that is not such an object,
an exception, an HTTP error) is an adapter failure of that query, recorded with its last line of
stderr (or the error) and never retried by a resumed run.

- ``--command 'CMD'``: CMD (split as a POSIX shell would, run without one) once per query, the
  request on stdin, the reply on stdout;
- ``--url URL``: the request POSTed as application/json, the reply the response body;
- ``--python module:function``: the function called with the request dict, returning the reply
  dict (the current folder is importable, as for ``python -m``).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass

from evalledger.core.errors import EvalledgerError

DETAILS = (None, "low", "medium", "high")
ERROR_CHARS = 500


@dataclass(frozen=True)
class Reply:
    """What the adapter did with one query: answered (with the result fields), declined (not
    replayable in its mode) or adapter_failed; error says why for the two last."""

    outcome: str
    fields: dict | None = None
    error: str | None = None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:ERROR_CHARS] if lines else ""


def _failed(error: str) -> Reply:
    return Reply("adapter_failed", error=(" ".join(error.split()) or "failed")[:ERROR_CHARS])


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63


def _is_text(v) -> bool:
    return isinstance(v, str) and "\x00" not in v


# Each reply field, what it must be, and how to say so.
_REPLY = {
    "retrieved_slugs": (lambda v: isinstance(v, list) and all(map(_is_text, v)), "an array of strings"),
    "retrieved_chunk_ids": (lambda v: isinstance(v, list) and all(map(_is_int, v)), "an array of whole numbers"),
    "source_ids": (lambda v: isinstance(v, list) and all(map(_is_text, v)), "an array of strings"),
    "vector_enabled": (lambda v: isinstance(v, bool), "true or false"),
    "expansion_applied": (lambda v: isinstance(v, bool), "true or false"),
    "detail_resolved": (lambda v: v in DETAILS, '"low", "medium", "high" or null'),
    "latency_ms": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0,
                   "a finite number of at least 0"),
}


def reply_of(data) -> Reply:
    """A reply object as the ledger records it: answered, declined, or a failure naming the field."""
    if not isinstance(data, dict):
        return _failed(f"the reply is not a JSON object: {json.dumps(data)[:80]}")
    if data.get("replayable") is False:
        reason = data.get("reason")
        return Reply("declined", error=(str(reason) if reason else "not replayable in its captured mode")[:ERROR_CHARS])
    for name, (ok, expected) in _REPLY.items():
        if name not in data:
            return _failed(f"the reply lacks {name}")
        if not ok(data[name]):
            return _failed(f"the reply's {name} is not {expected}: {json.dumps(data[name])[:80]}")
    return Reply("answered", fields={name: data[name] for name in _REPLY})


def _parse(text: str) -> Reply:
    try:
        data = json.loads(text, parse_constant=lambda name: float("nan"))
    except (json.JSONDecodeError, RecursionError) as exc:
        return _failed(f"the reply is not JSON ({getattr(exc, 'msg', exc)})")
    return reply_of(data)


class Adapter:
    """One way of asking the brain under test: kind and identity are recorded with the run."""

    kind: str
    identity: str

    def ask(self, request: dict) -> Reply:  # pragma: no cover - each adapter's own
        raise NotImplementedError


class CommandAdapter(Adapter):
    """--command: one process per query, the request on stdin and the reply on stdout."""

    kind = "command"

    def __init__(self, command: str, timeout_s: float) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise EvalledgerError(f"--command {command!r}: {exc}") from None
        if not self.argv:
            raise EvalledgerError("--command: an empty command")
        self.identity, self.timeout_s = command, timeout_s

    def ask(self, request: dict) -> Reply:
        try:
            done = subprocess.run(self.argv, input=json.dumps(request).encode(), capture_output=True,
                                  timeout=self.timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            tail = _last_line((exc.stderr or b"").decode("utf-8", "replace"))
            return _failed(f"timed out after {self.timeout_s:g} s" + (f": {tail}" if tail else ""))
        except OSError as exc:
            return _failed(f"cannot run {self.argv[0]}: {exc.strerror or exc}")
        stderr = _last_line(done.stderr.decode("utf-8", "replace"))
        if done.returncode != 0:
            return _failed(f"exit {done.returncode}" + (f": {stderr}" if stderr else ""))
        reply = _parse(done.stdout.decode("utf-8", "replace"))
        if reply.outcome == "adapter_failed" and stderr:
            return _failed(f"{reply.error}; stderr: {stderr}")
        return reply


class UrlAdapter(Adapter):
    """--url: the request POSTed as JSON, the reply the response body."""

    kind = "url"

    def __init__(self, url: str, timeout_s: float) -> None:
        if not url.startswith(("http://", "https://")):
            raise EvalledgerError(f"--url {url!r}: an http:// or https:// URL")
        self.identity, self.timeout_s = url, timeout_s

    def ask(self, request: dict) -> Reply:
        body = json.dumps(request).encode()
        post = urllib.request.Request(self.identity, data=body, method="POST",
                                      headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(post, timeout=self.timeout_s) as response:  # noqa: S310 (the operator's URL)
                text = response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            tail = _last_line(exc.read().decode("utf-8", "replace"))
            return _failed(f"HTTP {exc.code}" + (f": {tail}" if tail else ""))
        except (urllib.error.URLError, OSError, ValueError) as exc:
            return _failed(f"{type(exc).__name__}: {getattr(exc, 'reason', None) or exc}")
        return _parse(text)


class PythonAdapter(Adapter):
    """--python module:function: the function called with the request dict, returning the reply."""

    kind = "python"

    def __init__(self, target: str) -> None:
        module_name, _, function_name = target.partition(":")
        if not module_name or not function_name:
            raise EvalledgerError(f"--python {target!r}: expected module:function")
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - whatever the operator's module raises on import
            raise EvalledgerError(f"--python {target}: cannot import {module_name} ({type(exc).__name__}: {exc})") from None
        function = getattr(module, function_name, None)
        if not callable(function):
            raise EvalledgerError(f"--python {target}: {module_name} has no function {function_name}")
        self.identity, self.function = target, function

    def ask(self, request: dict) -> Reply:
        try:
            data = self.function(dict(request))
        except Exception as exc:  # noqa: BLE001 - the brain's own failure, recorded for its query
            return _failed(f"{type(exc).__name__}: {exc}")
        return reply_of(data)


def adapter(command: str | None, url: str | None, python: str | None, timeout_s: float) -> Adapter:
    """The one adapter the options name."""
    given = [(name, value) for name, value in (("--command", command), ("--url", url), ("--python", python))
             if value is not None]
    if len(given) != 1:
        raise EvalledgerError("replay: name the brain under test with one of --command, --url or --python"
                              + (f", not {' and '.join(n for n, _ in given)}" if given else ""))
    if command is not None:
        return CommandAdapter(command, timeout_s)
    if url is not None:
        return UrlAdapter(url, timeout_s)
    return PythonAdapter(python)

