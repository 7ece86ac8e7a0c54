"""Eval capture (seed 001): record real query and search calls, scrubbed, for replay.

An application calls :func:`capture_candidate` from its query and search handlers. The call only
appends a tuple to an in-memory queue and returns: it never raises into the caller and never
touches the disk or the network. A background writer thread then, per batch:

1. validates each row, scrubs its query with :func:`evalledger.scrub.scrub_pii` (unless
   ``eval.scrub_pii`` is false) -- nothing unscrubbed is ever stored, in the database or the spool;
2. INSERTs the batch (one statement) into ``evalledger.eval_candidates`` as ``evalledger_runner``;
3. on a failed batch, retries row by row (each row in a savepoint) so one bad row never costs
   the good ones, and records each failure in ``eval_capture_failures`` with its reason:
   ``check_violation`` (SQLSTATE 23514), ``rls_reject`` (42501: privileges and row-level
   security), ``db_down`` (connection failures, class 08, 57P0x, 53300), ``scrubber_exception``,
   ``other``;
4. when the database is down, appends rows and failures to a local spool
   (``$EVALLEDGER_HOME/capture/spool.ndjson``: JSON lines, flock'd, fsync'd) and replays it once
   the database answers again. Each row carries a client-generated ``capture_key`` that the
   database keeps unique, so a replay after a crash between the INSERT and the spool's truncation
   writes nothing twice.

On exit (``atexit``) or :func:`close`, the writer flushes within a bounded time; rows it could not
write by then are spooled.

Configuration (:func:`resolve_settings`), most explicit first: ``eval.capture`` true or false in
``$EVALLEDGER_HOME/config.json``; else ``EVALLEDGER_CONTRIBUTOR_MODE=1`` (exactly ``1``); else
off. ``eval.scrub_pii`` defaults to true on its own.
"""

from __future__ import annotations

import atexit
import collections
import fcntl
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psycopg
from psycopg import sql

from .scrub import REDACTED, scrub_pii

log = logging.getLogger("evalledger.capture")

REASONS = ("db_down", "rls_reject", "check_violation", "scrubber_exception", "other")
TOOLS = ("query", "search")
DETAILS = ("low", "medium", "high")
# The input columns, in insert order (id and created_at are the database's).
COLUMNS = ("tool_name", "query", "retrieved_slugs", "retrieved_chunk_ids", "source_ids", "expand_enabled",
           "detail", "detail_resolved", "vector_enabled", "expansion_applied", "latency_ms", "remote",
           "job_id", "subagent_id", "capture_key")
REQUIRED = ("tool_name", "query", "vector_enabled", "latency_ms", "remote")
DEFAULTS = {"retrieved_slugs": [], "retrieved_chunk_ids": [], "source_ids": [], "expand_enabled": None,
            "detail": None, "detail_resolved": None, "expansion_applied": False, "job_id": None,
            "subagent_id": None, "capture_key": None}
_COLUMN_LIST = ", ".join(COLUMNS)
_BATCH_INSERT = (f"INSERT INTO evalledger.eval_candidates ({_COLUMN_LIST}) SELECT {_COLUMN_LIST} "
                 "FROM json_populate_recordset(NULL::evalledger.eval_candidates, %s::json)")
# Deterministic failure keys: the same row failing for the same reason is one failure, however
# many times a spool is replayed.
FAILURE_NAMESPACE = uuid.UUID("0b5f8f5e-3c1d-4b8e-9a57-4f6c2d1e7a90")
DETAIL_MAX = 200
_DOWN_STATES = {"57P01", "57P02", "57P03", "53300"}
_MISSING = object()


# -- configuration -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """What the configuration resolves to, and why."""

    capture: bool
    scrub_pii: bool
    source: str


def evalledger_home() -> Path:
    """$EVALLEDGER_HOME, else ~/.evalledger (the same folder the embedded server uses)."""
    return Path(os.environ.get("EVALLEDGER_HOME") or "~/.evalledger").expanduser().absolute()


def resolve_settings(home: Path | None = None, environ: dict | None = None) -> Settings:
    """Resolve eval.capture and eval.scrub_pii exactly as seed 001 does.

    1. ``eval.capture: true`` in ``$EVALLEDGER_HOME/config.json`` -> on
    2. ``eval.capture: false`` there -> off (overrides the environment variable)
    3. ``EVALLEDGER_CONTRIBUTOR_MODE`` is exactly ``1`` -> on
    4. otherwise off.

    Only JSON booleans count: any other value of eval.capture (or an unreadable file) is as if it
    were absent. ``eval.scrub_pii`` is true unless it is the JSON boolean false.
    """
    home = home or evalledger_home()
    environ = os.environ if environ is None else environ
    section: dict = {}
    path = home / "config.json"
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict) and isinstance(loaded.get("eval"), dict):
            section = loaded["eval"]
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.warning("evalledger capture: ignoring %s: %s", path, exc)
    scrub = section.get("scrub_pii") is not False
    capture = section.get("capture")
    if capture is True:
        return Settings(True, scrub, "config.json eval.capture = true")
    if capture is False:
        return Settings(False, scrub, "config.json eval.capture = false")
    if environ.get("EVALLEDGER_CONTRIBUTOR_MODE") == "1":
        return Settings(True, scrub, "EVALLEDGER_CONTRIBUTOR_MODE=1")
    return Settings(False, scrub, "default (off)")


# -- rows --------------------------------------------------------------------------------------


class RowError(ValueError):
    """A captured row that is not a row: names the field."""

    def __init__(self, field_name: str, problem: str) -> None:
        super().__init__(f"field {field_name}: {problem}")
        self.field = field_name
        self.problem = problem


class ScrubberFailed(Exception):
    """The scrubber raised (or returned something other than text); the row is not stored."""


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_list(name: str, value, distinct: bool) -> list:
    if not isinstance(value, list | tuple):
        raise RowError(name, "expected an array of strings")
    if not all(isinstance(v, str) for v in value):
        raise RowError(name, "expected an array of strings")
    return list(dict.fromkeys(value)) if distinct else list(value)


def normalize(row: dict) -> dict:
    """A validated row with defaults filled in and slugs and source ids deduplicated (in order).

    Types are checked here; values (enums, the 50KB limit, expand_enabled only for query) are
    the database's CHECKs.
    """
    out = {}
    for name in COLUMNS:
        value = row.get(name, _MISSING)
        if value is _MISSING:
            if name in REQUIRED:
                raise RowError(name, "missing")
            value = DEFAULTS[name]
            if isinstance(value, list):
                value = []
        out[name] = value
    if not isinstance(out["tool_name"], str):
        raise RowError("tool_name", 'expected "query" or "search"')
    if not isinstance(out["query"], str):
        raise RowError("query", "expected a string")
    out["retrieved_slugs"] = _text_list("retrieved_slugs", out["retrieved_slugs"], True)
    out["source_ids"] = _text_list("source_ids", out["source_ids"], True)
    ids = out["retrieved_chunk_ids"]
    if not isinstance(ids, list | tuple) or not all(_is_int(v) for v in ids):
        raise RowError("retrieved_chunk_ids", "expected an array of integers")
    out["retrieved_chunk_ids"] = list(ids)
    for name in ("vector_enabled", "expansion_applied", "remote"):
        if not isinstance(out[name], bool):
            raise RowError(name, "expected true or false")
    if out["expand_enabled"] is not None and not isinstance(out["expand_enabled"], bool):
        raise RowError("expand_enabled", "expected true, false or null")
    for name in ("detail", "detail_resolved"):
        if out[name] is not None and not isinstance(out[name], str):
            raise RowError(name, 'expected "low", "medium", "high" or null')
    latency = out["latency_ms"]
    if isinstance(latency, bool) or not isinstance(latency, int | float):
        raise RowError("latency_ms", "expected a number")
    if isinstance(latency, float) and not math.isfinite(latency):
        raise RowError("latency_ms", "expected a finite number")
    out["latency_ms"] = float(latency)
    for name in ("job_id", "subagent_id"):
        if out[name] is not None and not _is_int(out[name]):
            raise RowError(name, "expected an integer or null")
    key = out["capture_key"]
    if key is None:
        out["capture_key"] = uuid.uuid4()
    elif isinstance(key, uuid.UUID):
        pass
    elif isinstance(key, str):
        try:
            out["capture_key"] = uuid.UUID(key)
        except ValueError:
            raise RowError("capture_key", "expected a UUID") from None
    else:
        raise RowError("capture_key", "expected a UUID")
    return out


def _batch_json(rows: list[dict]) -> str:
    return json.dumps([{**r, "capture_key": str(r["capture_key"])} for r in rows], separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)


def _json_row(row: dict) -> dict:
    return {**row, "capture_key": str(row["capture_key"])}


def _row_from_json(data: dict) -> dict:
    return {**data, "capture_key": uuid.UUID(data["capture_key"])}


# -- failures ----------------------------------------------------------------------------------


@dataclass
class Failure:
    """One row of eval_capture_failures, before it is written."""

    reason: str
    occurred_at: str
    failure_key: str
    tool_name: str | None = None
    sqlstate: str | None = None
    detail: str | None = None
    capture_key: str | None = None

    @classmethod
    def of(cls, reason: str, *, tool_name=None, sqlstate=None, detail=None, capture_key=None) -> Failure:
        """A failure happening now; keyed by its row and reason when it has a row."""
        if capture_key is not None:
            key = uuid.uuid5(FAILURE_NAMESPACE, f"{capture_key}:{reason}")
        else:
            key = uuid.uuid4()
        return cls(reason, _utcnow(), str(key), tool_name if tool_name in TOOLS else None,
                   sqlstate, _short(detail), None if capture_key is None else str(capture_key))


def _utcnow() -> str:
    return datetime.now(timezone.utc).isoformat()


def _short(detail: str | None) -> str | None:
    """A detail fit to store: one line, scrubbed, at most DETAIL_MAX characters."""
    if not detail:
        return None
    line = " ".join(str(detail).split())
    try:
        line = scrub_pii(line)
    except Exception:  # a detail that cannot be scrubbed is not stored
        return "(detail withheld: the scrubber failed on it)"
    return line[:DETAIL_MAX]


def classify(exc: BaseException) -> tuple[str, str | None]:
    """The reason enum and SQLSTATE of a failed write."""
    if isinstance(exc, ScrubberFailed):
        return "scrubber_exception", None
    if isinstance(exc, psycopg.Error):
        state = exc.sqlstate
        if state == "23514":
            return "check_violation", state
        if state == "42501":
            return "rls_reject", state
        if state and (state.startswith("08") or state in _DOWN_STATES):
            return "db_down", state
        if state is None and isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            return "db_down", None
        return "other", state
    return "other", None


def _is_down(exc: BaseException, conn: psycopg.Connection | None) -> bool:
    if classify(exc)[0] == "db_down":
        return True
    return conn is not None and (conn.closed or conn.broken)


def _describe(exc: BaseException) -> str:
    """What went wrong, without the failing row (never message_detail, which quotes values)."""
    if isinstance(exc, psycopg.Error):
        diag = exc.diag
        lines = str(exc).strip().splitlines()
        text = diag.message_primary or (lines[0] if lines else type(exc).__name__)
        if diag.constraint_name and diag.constraint_name not in text:
            text += f" (constraint {diag.constraint_name})"
        return text
    return type(exc).__name__


class DatabaseDown(Exception):
    """The database cannot be reached; what was being written must be spooled."""


# -- spool -------------------------------------------------------------------------------------


class Spool:
    """Append-only JSON lines on local disk for what the database could not take yet.

    Appends and replays hold an exclusive flock, so several processes sharing one
    EVALLEDGER_HOME never lose each other's lines; every append is fsync'd before it returns.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _open(self, flags: int) -> int:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return os.open(self.path, flags | os.O_CREAT, 0o600)

    def append(self, records: Iterable[dict]) -> int:
        """Append records (each a JSON object) durably; return how many."""
        lines = [json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records]
        if not lines:
            return 0
        data = "".join(lines).encode("utf-8")
        with self._lock:
            fd = self._open(os.O_WRONLY | os.O_APPEND)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
        return len(lines)

    def pending(self) -> int:
        """How many lines wait in the spool."""
        try:
            with open(self.path, "rb") as handle:
                return sum(1 for line in handle if line.strip())
        except FileNotFoundError:
            return 0

    def replay(self, handler: Callable[[list[dict]], None]) -> int:
        """Hand every spooled record to handler (which must commit them); then empty the spool.

        If handler raises, the spool is left as it was. A torn last line (a crash mid-append,
        never acknowledged) is skipped.
        """
        if not self.path.exists():
            return 0
        with self._lock:
            fd = self._open(os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                chunks = []
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
                records = []
                for number, line in enumerate(b"".join(chunks).splitlines(), 1):
                    if not line.strip():
                        continue
                    try:
                        records.append(json.loads(line))
                    except ValueError:
                        log.warning("evalledger capture: skipping unreadable spool line %d", number)
                if records:
                    handler(records)
                os.ftruncate(fd, 0)
                os.fsync(fd)
                return len(records)
            finally:
                os.close(fd)


# -- the writer --------------------------------------------------------------------------------


@dataclass
class Stats:
    """What a writer has done so far."""

    written: int = 0
    duplicates: int = 0
    failed: dict = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    spooled: int = 0
    replayed: int = 0
    dropped: int = 0
    undeliverable_failures: int = 0


class _Marker:
    """A flush request travelling through the queue behind the rows before it."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()


class CaptureWriter:
    """Batches captured rows into the database from a background thread (or synchronously).

    dsn: the server (default: $DATABASE_URL, else the embedded server's DSN; it is never started
    from here). role: the application role rows are written as (default runner); failures are
    written as failure_role. scrub: scrub queries before storing them; scrubber: the function that
    does it (default scrub_pii). home: where the spool lives (default $EVALLEDGER_HOME).
    """

    def __init__(self, dsn: str | None = None, *, role: str = "runner", failure_role: str = "runner",
                 scrub: bool = True, scrubber: Callable[[str], str] | None = None, home: Path | None = None,
                 batch_size: int = 1000, flush_interval: float = 0.1, max_queue: int = 200_000,
                 connect_timeout: int = 5, background: bool = True) -> None:
        from evalledger.core.db import ROLES

        self.dsn = dsn or _default_dsn()
        self.role = ROLES[role]
        self.failure_role = ROLES[failure_role]
        self.scrub = scrub
        self.scrubber = scrubber or scrub_pii
        self.spool = Spool((home or evalledger_home()) / "capture" / "spool.ndjson")
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.max_queue = max_queue
        self.connect_timeout = connect_timeout
        self.stats = Stats()
        self._queue: collections.deque = collections.deque()
        self._wake = threading.Event()
        self._stopping = False
        self._conn: psycopg.Connection | None = None
        self._down = False
        self._retry_at = 0.0
        self._backoff = 0.5
        self._ensured_month = ""
        self._io = threading.Lock()  # one batch at a time: the thread's, or a synchronous caller's
        self._thread = None
        if background:
            self._thread = threading.Thread(target=self._run, name="evalledger-capture", daemon=True)
            self._thread.start()

    # -- the caller's side (fast, never raises) --------------------------------------------------

    def submit(self, row) -> None:
        """Queue one row (a dict of fields, or the tuple capture_candidate builds)."""
        queue = self._queue
        if len(queue) >= self.max_queue:
            self.stats.dropped += 1
            return
        queue.append(row)
        if len(queue) >= self.batch_size:
            self._wake.set()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every row submitted before this call is written (or spooled)."""
        if self._thread is None or not self._thread.is_alive():
            self._drain_all()
            return not self._queue
        marker = _Marker()
        self._queue.append(marker)
        self._wake.set()
        return marker.done.wait(timeout)

    def close(self, timeout: float = 5.0) -> bool:
        """Flush within timeout seconds and stop; rows still queued after that are spooled.

        Returns True when everything was written or spooled in time."""
        deadline = time.monotonic() + timeout
        done = self.flush(timeout)
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(max(0.0, deadline - time.monotonic()))
            if self._thread.is_alive():
                # The thread is stuck on the database: keep what it has not taken yet.
                rest = [r for r in self._pop_all() if not isinstance(r, _Marker)]
                if rest:
                    rows, failures = self._prepare(rest)
                    self._spool(rows, failures)
                done = False
        if self._thread is None or not self._thread.is_alive():
            self._close_connection()
        return done

    # -- the writer's side ---------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            self._wake.wait(self.flush_interval)
            self._wake.clear()
            try:
                self._drain_all()
                if self._down and (self._stopping or time.monotonic() >= self._retry_at):
                    with self._io:  # the database may be back: reconnect, which replays the spool
                        try:
                            self._connection()
                        except DatabaseDown as exc:
                            self._went_down(exc)
            except Exception:  # pragma: no cover - the writer must outlive any bug in one batch
                log.exception("evalledger capture: batch lost to an unexpected error")
            if self._stopping and not self._queue:
                return

    def _pop_all(self) -> list:
        items = []
        while True:
            try:
                items.append(self._queue.popleft())
            except IndexError:
                return items

    def _drain_all(self) -> None:
        while self._queue:
            batch, markers = [], []
            while len(batch) < self.batch_size:
                try:
                    item = self._queue.popleft()
                except IndexError:
                    break
                if isinstance(item, _Marker):
                    markers.append(item)
                    break
                batch.append(item)
            if batch:
                self.write(batch)
            for marker in markers:
                marker.done.set()
        if self.stats.dropped:
            dropped, self.stats.dropped = self.stats.dropped, 0
            self._deliver([], [Failure.of("other", detail=f"capture queue full: {dropped} rows dropped")])
        if not self._down and self._conn is not None and _has_content(self.spool.path):
            with self._io:
                self._maybe_replay()

    def _prepare(self, batch: list) -> tuple[list[dict], list[Failure]]:
        """Validated, scrubbed rows, and the failures of those that are neither."""
        rows, failures = [], []
        for item in batch:
            raw = item if isinstance(item, dict) else dict(zip(COLUMNS, item))
            try:
                row = normalize(raw)
            except RowError as exc:
                tool = raw.get("tool_name")
                failures.append(Failure.of("other", tool_name=tool if isinstance(tool, str) else None,
                                           detail=str(exc)))
                continue
            if self.scrub:
                try:
                    scrubbed = self.scrubber(row["query"])
                    if not isinstance(scrubbed, str):
                        raise ScrubberFailed(f"the scrubber returned {type(scrubbed).__name__}, not text")
                except Exception as exc:
                    failures.append(Failure.of("scrubber_exception", tool_name=row["tool_name"],
                                               detail=f"{type(exc).__name__} in the scrubber",
                                               capture_key=row["capture_key"]))
                    continue
                row["query"] = scrubbed
            rows.append(row)
        return rows, failures

    def write(self, batch: list) -> None:
        """Write one batch now (validate, scrub, insert or spool, record failures)."""
        with self._io:
            rows, failures = self._prepare(batch)
            self._deliver(rows, failures)

    def _deliver(self, rows: list[dict], failures: list[Failure]) -> None:
        if self._down and time.monotonic() < self._retry_at:
            self._spool(rows, failures)
            return
        try:
            conn = self._connection()
            self._insert_rows(conn, rows, failures)
            self._write_failures(conn, failures)
        except DatabaseDown as exc:
            self._went_down(exc)
            self._spool(rows, failures)

    # -- database ------------------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            self._ensure_partitions(self._conn)
            return self._conn
        self._close_connection()
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=self.connect_timeout)
            conn.execute("SET search_path = evalledger, public")
            conn.execute("SET statement_timeout = '30s'")
        except psycopg.Error as exc:
            raise DatabaseDown(_describe(exc)) from exc
        self._conn = conn
        was_down, self._down, self._backoff = self._down, False, 0.5
        self._ensured_month = ""
        self._ensure_partitions(conn)
        if was_down or _has_content(self.spool.path):
            self._maybe_replay()
        return conn

    def _ensure_partitions(self, conn: psycopg.Connection) -> None:
        month = datetime.now(timezone.utc).strftime("%Y%m")
        if month == self._ensured_month:
            return
        try:
            with conn.transaction():
                self._set_role(conn, self.role)
                conn.execute("SELECT evalledger.capture_ensure_partitions_v1(3)")
            self._ensured_month = month
        except psycopg.Error as exc:
            if _is_down(exc, conn):
                raise DatabaseDown(_describe(exc)) from exc
            # A role that may not create partitions still captures into the existing ones.
            self._ensured_month = month

    @staticmethod
    def _set_role(conn: psycopg.Connection, role: str) -> None:
        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))

    def _insert_rows(self, conn: psycopg.Connection, rows: list[dict], failures: list[Failure]) -> None:
        """One INSERT for the whole batch; on failure, row by row in savepoints, recording each failure.

        PostgreSQL refuses COPY FROM to a role under row-level security, and per-row INSERTs even
        in pipeline mode spend their time binding parameters, so a batch travels as one JSON
        array expanded by json_populate_recordset: one statement, one round trip.
        """
        if not rows:
            return
        try:
            with conn.transaction():
                self._set_role(conn, self.role)
                written = conn.execute(_BATCH_INSERT, (_batch_json(rows),)).rowcount
            self.stats.written += written
            self.stats.duplicates += len(rows) - written
            return
        except Exception as exc:
            if _is_down(exc, conn):
                raise DatabaseDown(_describe(exc)) from exc
        written = 0
        row_failures = []
        try:
            with conn.transaction():
                for row in rows:
                    try:
                        with conn.transaction():
                            self._set_role(conn, self.role)
                            written += conn.execute(_BATCH_INSERT, (_batch_json([row]),)).rowcount
                    except Exception as exc:
                        if _is_down(exc, conn):
                            raise DatabaseDown(_describe(exc)) from exc
                        reason, state = classify(exc)
                        row_failures.append(Failure.of(reason, tool_name=row["tool_name"], sqlstate=state,
                                                       detail=_describe(exc), capture_key=row["capture_key"]))
        except psycopg.Error as exc:
            raise DatabaseDown(_describe(exc)) from exc
        self.stats.written += written
        self.stats.duplicates += len(rows) - written - len(row_failures)
        failures.extend(row_failures)

    def _write_failures(self, conn: psycopg.Connection, failures: list[Failure]) -> None:
        if not failures:
            return
        insert = """INSERT INTO evalledger.eval_capture_failures
                        (failure_key, reason, occurred_at, tool_name, sqlstate, detail, capture_key)
                    VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (failure_key) DO NOTHING"""
        try:
            with conn.transaction():
                self._set_role(conn, self.failure_role)
                with conn.cursor() as cur:
                    cur.executemany(insert, [(f.failure_key, f.reason, f.occurred_at, f.tool_name, f.sqlstate,
                                              f.detail, f.capture_key) for f in failures])
        except psycopg.Error as exc:
            if _is_down(exc, conn):
                raise DatabaseDown(_describe(exc)) from exc
            self.stats.undeliverable_failures += len(failures)
            log.warning("evalledger capture: %d failure records could not be written: %s",
                        len(failures), _describe(exc))
            return
        for f in failures:
            self.stats.failed[f.reason] += 1

    def _went_down(self, exc: Exception) -> None:
        self._close_connection()
        if not self._down:
            self._down = True
            # One db_down failure per outage; it waits in the spool with the rows.
            self._spool([], [Failure.of("db_down", detail=str(exc))])
        self._retry_at = time.monotonic() + self._backoff
        self._backoff = min(self._backoff * 2, 10.0)

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None

    # -- spool ---------------------------------------------------------------------------------

    def _spool(self, rows: list[dict], failures: list[Failure]) -> None:
        records = [{"kind": "candidate", "row": _json_row(r)} for r in rows]
        records += [{"kind": "failure", "failure": f.__dict__} for f in failures]
        try:
            self.spool.append(records)
            self.stats.spooled += len(rows)
        except OSError as exc:
            log.error("evalledger capture: cannot spool %d rows to %s: %s", len(rows), self.spool.path, exc)

    def _maybe_replay(self) -> None:
        conn = self._conn
        if conn is None:
            return

        def handler(records: list[dict]) -> None:
            rows = [_row_from_json(r["row"]) for r in records if r.get("kind") == "candidate"]
            failures = [Failure(**r["failure"]) for r in records if r.get("kind") == "failure"]
            before = self.stats.written
            self._insert_rows(conn, rows, failures)
            self._write_failures(conn, failures)
            self.stats.replayed += self.stats.written - before

        try:
            self.spool.replay(handler)
        except DatabaseDown as exc:
            self._went_down(exc)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.error("evalledger capture: cannot replay %s: %s", self.spool.path, exc)

    def replay_spool(self) -> int:
        """Write whatever waits in the spool now; return how many records it held."""
        with self._io:
            before = self.spool.pending()
            try:
                self._connection()
            except DatabaseDown as exc:
                self._went_down(exc)
                return 0
            return before - self.spool.pending()


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _default_dsn() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from evalledger.core.embedded import EmbeddedServer

    return EmbeddedServer().dsn()


# -- the process-wide API ----------------------------------------------------------------------

_OFF = object()
_writer = None  # None: not resolved yet; _OFF: capture is off; else a CaptureWriter
_state_lock = threading.Lock()
_atexit_registered = False
EXIT_TIMEOUT = 5.0


def configure(*, enabled: bool | None = None, dsn: str | None = None, scrub: bool | None = None,
              home: Path | None = None, **writer_options) -> CaptureWriter | None:
    """(Re)start process-wide capture; enabled and scrub default to resolve_settings().

    Returns the writer, or None when capture is off. A previous writer is closed first.
    """
    global _writer, _atexit_registered
    with _state_lock:
        previous, _writer = _writer, None
    if isinstance(previous, CaptureWriter):
        previous.close(EXIT_TIMEOUT)
    settings = resolve_settings(home)
    on = settings.capture if enabled is None else enabled
    writer = None
    if on:
        writer = CaptureWriter(dsn, scrub=settings.scrub_pii if scrub is None else scrub, home=home,
                               **writer_options)
    with _state_lock:
        _writer = writer if writer is not None else _OFF
        if writer is not None and not _atexit_registered:
            atexit.register(_close_at_exit)
            _atexit_registered = True
    return writer


def _from_config():
    try:
        configure()
    except Exception:
        log.exception("evalledger capture: cannot start; capture is off for this process")
        global _writer
        _writer = _OFF
    return _writer


def capture_candidate(tool_name=None, query=None, *, retrieved_slugs=(), retrieved_chunk_ids=(), source_ids=(),
                      expand_enabled=None, detail=None, detail_resolved=None, vector_enabled=_MISSING,
                      expansion_applied=False, latency_ms=_MISSING, remote=_MISSING, job_id=None,
                      subagent_id=None, capture_key=None) -> None:
    """Capture one query or search call for replay. Returns at once; never raises.

    A no-op unless capture is on (see resolve_settings). The fields are seed 001's row schema:
    tool_name "query" or "search"; query (the text, scrubbed before it is stored);
    retrieved_slugs (deduplicated); retrieved_chunk_ids (one per hit, in order); source_ids;
    expand_enabled (None for search); detail and detail_resolved ("low", "medium", "high" or
    None); vector_enabled; expansion_applied; latency_ms; remote; job_id; subagent_id.
    capture_key (a UUID) is optional: give one to make a retried capture idempotent.
    """
    try:
        writer = _writer
        if writer is None:
            writer = _from_config()
        if writer is _OFF:
            return
        writer.submit((tool_name, query,
                       list(retrieved_slugs) if isinstance(retrieved_slugs, list | tuple) else retrieved_slugs,
                       list(retrieved_chunk_ids) if isinstance(retrieved_chunk_ids, list | tuple) else retrieved_chunk_ids,
                       list(source_ids) if isinstance(source_ids, list | tuple) else source_ids,
                       expand_enabled, detail, detail_resolved,
                       vector_enabled, expansion_applied, latency_ms, remote, job_id, subagent_id, capture_key))
    except Exception:  # never into the caller
        pass


def flush(timeout: float = 5.0) -> bool:
    """Wait until everything captured so far is written or spooled."""
    writer = _writer
    return writer.flush(timeout) if isinstance(writer, CaptureWriter) else True


def close(timeout: float = 5.0) -> bool:
    """Flush within timeout seconds and stop capturing in this process (until configure())."""
    global _writer
    with _state_lock:
        writer, _writer = _writer, None
    return writer.close(timeout) if isinstance(writer, CaptureWriter) else True


def _close_at_exit() -> None:
    try:
        close(EXIT_TIMEOUT)
    except Exception:  # pragma: no cover
        pass


__all__ = ["CaptureWriter", "RowError", "Settings", "Spool", "capture_candidate", "classify", "close",
           "configure", "flush", "normalize", "resolve_settings", "REDACTED"]
