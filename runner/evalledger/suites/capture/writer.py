"""The capture writer: batches captured rows into the database from a background thread.

Per batch it
1. validates each row and scrubs its query (unless eval.scrub_pii is false): nothing unscrubbed
   is ever stored, in the database or the spool;
2. INSERTs the batch (one statement) into ``evalledger.eval_candidates`` as ``evalledger_runner``;
3. on a failed batch, retries row by row (each row in a savepoint) so one bad row never costs
   the good ones, and records each failure in ``eval_capture_failures`` with its reason
   (failures.py);
4. when the database is down, appends rows and failures to the local spool (spool.py) and replays
   it once the database answers again. Each row carries a client-generated ``capture_key`` that
   the database keeps unique, so a replay after a crash between the INSERT and the spool's
   truncation writes nothing twice;
5. when the spool's disk refuses too, counts the rows as dropped (Stats.dropped, the count beside
   the spool that doctor reads, and a failure record once the database answers), logs one line
   when the spool starts refusing and one when rows are kept again, and flush() says False.
"""

from __future__ import annotations

import collections
import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psycopg

from evalledger.core.db import set_local_role
from evalledger.core.queries import Queries

from .failures import REASONS, DatabaseDown, Failure, ScrubberFailed, classify, describe, is_down
from .rows import COLUMNS, RowError, batch_json, json_row, normalize, row_from_json
from .scrub import scrub_pii
from .settings import spool_path
from .spool import Spool, encoded, has_content, refusal

log = logging.getLogger("evalledger.capture")
QUERIES = Queries(__package__)
# A spool that refused for want of space and has refused nothing for this long is out of its
# outage, whatever the size of the writes it took meanwhile (_outage_ends_with).
OUTAGE_QUIET_S = 60.0


@dataclass
class Replayed:
    """What replaying the spool wrote: records read, rows written, rows already present, failures
    recorded (the spooled ones and the rows refused now), per reason."""

    records: int = 0
    written: int = 0
    duplicates: int = 0
    failed: dict = field(default_factory=lambda: dict.fromkeys(REASONS, 0))


@dataclass
class Stats:
    """What a writer has done so far. written, duplicates and failed count everything it stored,
    the spool's replays included; replay says which part of them came from the spool."""

    written: int = 0
    duplicates: int = 0
    failed: dict = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    spooled: int = 0
    replay: Replayed = field(default_factory=Replayed)
    # Rows in neither the ledger nor the spool: the queue was full, or the spool's disk refused them.
    dropped: int = 0
    undeliverable_failures: int = 0
    # This writer's own failures recorded (not the spool's), in order: an import maps them back to
    # the lines of its log.
    refused: list = field(default_factory=list)

    @property
    def own_written(self) -> int:
        """Rows this writer was given and stored (the spool's replays left out)."""
        return self.written - self.replay.written

    @property
    def own_duplicates(self) -> int:
        return self.duplicates - self.replay.duplicates

    @property
    def own_failed(self) -> dict:
        return {reason: n - self.replay.failed[reason] for reason, n in self.failed.items()}


@dataclass(frozen=True)
class Counts:
    """What became of the rows captured in a process: written (stored in the ledger by it), spooled
    (put in the local spool, for it or a later process to write) and dropped (in neither place:
    lost). A row the database refused is in none of them; it is in eval_capture_failures."""

    written: int = 0
    spooled: int = 0
    dropped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.written + other.written, self.spooled + other.spooled, self.dropped + other.dropped)


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

        self.dsn = dsn or default_dsn()
        self.role = ROLES[role]
        self.failure_role = ROLES[failure_role]
        self.scrub = scrub
        self.scrubber = scrubber or scrub_pii
        self.spool = Spool(spool_path(home))
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
        self._insert_query = "insert_candidates"
        self._queue_overflow = 0  # rows the full queue turned away, not yet recorded as a failure
        self._spool_refusal: str | None = None  # why the spool refuses, while it does
        self._dropped_in_outage = 0
        self._refused_bytes = 0  # the largest write a full spool refused in this outage
        self._refused_by_quota = False  # some refusal of this outage was a quota's (EDQUOT)
        self._refused_at = 0.0  # time.monotonic() of this outage's latest refusal
        self._dropped_unrecorded = 0  # dropped by a refusing spool, not yet recorded in the ledger
        self.last_spool_refusal = ""  # why the spool last refused rows (a line of refusal())
        self._dropped_count_ready = False
        self._replay_failing: str | None = None
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
            self._queue_overflow += 1
            return
        queue.append(row)
        if len(queue) >= self.batch_size:
            self._wake.set()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every row submitted before this call is written, spooled or refused.

        True: within timeout, every row this writer was ever given is in the ledger, in the spool
        (fsync'd), or refused by the database or by its checks and recorded as a failure. False:
        the timeout passed first, or some row was dropped (stats.dropped says how many), and stays
        False for this writer from then on: a True never hides an earlier loss."""
        if self._thread is None or not self._thread.is_alive():
            self._drain_all()
            return not self._queue and not self.stats.dropped
        marker = _Marker()
        self._queue.append(marker)
        self._wake.set()
        return marker.done.wait(timeout) and not self.stats.dropped

    def counts(self) -> Counts:
        """How many of the rows given to this writer it wrote, spooled and dropped."""
        return Counts(self.stats.own_written, self.stats.spooled, self.stats.dropped)

    def close(self, timeout: float = 5.0) -> bool:
        """Flush within timeout seconds and stop; rows still queued after that are spooled.

        Returns what flush() would: True when every row was written, spooled or refused in time,
        and none was ever dropped."""
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
        return done and not self.stats.dropped

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
                            self.connection()
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
                try:
                    self.write(batch)
                except Exception:
                    # A bug, not the database or the disk: the batch is in neither place.
                    self.stats.dropped += len(batch)
                    raise
            for marker in markers:
                marker.done.set()
        if self._queue_overflow:
            dropped, self._queue_overflow = self._queue_overflow, 0
            with self._io:
                self._deliver([], [Failure.of("other", detail=f"capture queue full: {dropped} rows dropped")])
        if self._dropped_unrecorded and not self._down and self._conn is not None:
            with self._io:
                self._record_spool_drops()
        if not self._down and self._conn is not None and has_content(self.spool.path):
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
            conn = self.connection()
            self._insert_rows(conn, rows, failures)
            self._write_failures(conn, failures)
        except DatabaseDown as exc:
            self._went_down(exc)
            self._spool(rows, failures)
            return
        if self._spool_refusal is not None and rows:
            self._kept_again("the database takes them")

    # -- database ------------------------------------------------------------------------------

    def connection(self) -> psycopg.Connection:
        """The open connection, made now if needed (which replays the spool); DatabaseDown if none."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            self._ensure_partitions(self._conn)
            return self._conn
        self._close_connection()
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=self.connect_timeout)
            conn.execute(QUERIES["writer_session"])
            current = conn.execute(QUERIES["ledger_refuses_repeated_keys"]).fetchone()[0]
        except psycopg.Error as exc:
            raise DatabaseDown(describe(exc)) from exc
        self._conn = conn
        self._insert_query = "insert_candidates" if current else "insert_candidates_before_0103"
        was_down, self._down, self._backoff = self._down, False, 0.5
        self._ensured_month = ""
        self._ensure_partitions(conn)
        if was_down or has_content(self.spool.path):
            self._maybe_replay()
        return conn

    def _ensure_partitions(self, conn: psycopg.Connection) -> None:
        month = datetime.now(timezone.utc).strftime("%Y%m")
        if month == self._ensured_month:
            return
        try:
            with conn.transaction():
                set_local_role(conn, self.role)
                conn.execute(QUERIES["ensure_partitions"])
            self._ensured_month = month
        except psycopg.Error as exc:
            if is_down(exc, conn):
                raise DatabaseDown(describe(exc)) from exc
            # A role that may not create partitions still captures into the existing ones.
            self._ensured_month = month

    def _insert_rows(self, conn: psycopg.Connection, rows: list[dict], failures: list[Failure],
                     replay: bool = False) -> None:
        """One INSERT for the whole batch; on failure, row by row in savepoints, recording each failure.

        PostgreSQL refuses COPY FROM to a role under row-level security, and per-row INSERTs even
        in pipeline mode spend their time binding parameters, so a batch travels as one JSON
        array expanded by json_populate_recordset: one statement, one round trip. The database
        refuses a statement that stores a capture_key twice; the INSERT leaves out keys stored
        already, and a key repeated in the batch is sent once (the first row that has it).
        """
        if not rows:
            return
        unique, seen = [], set()
        for row in rows:
            if row["capture_key"] not in seen:
                seen.add(row["capture_key"])
                unique.append(row)
        tallies = [self.stats, self.stats.replay] if replay else [self.stats]
        for stats in tallies:
            stats.duplicates += len(rows) - len(unique)
        rows = unique
        try:
            with conn.transaction():
                set_local_role(conn, self.role)
                written = self._insert(conn, rows)
            for stats in tallies:
                stats.written += written
                stats.duplicates += len(rows) - written
            return
        except Exception as exc:
            if is_down(exc, conn):
                raise DatabaseDown(describe(exc)) from exc
        # Row by row, so one bad row costs no other. A key another writer stored since the batch's
        # INSERT read the keys (it waited on that writer's commit, then was refused) is left out now.
        written = 0
        row_failures = []
        try:
            with conn.transaction():
                for row in rows:
                    try:
                        with conn.transaction():
                            set_local_role(conn, self.role)
                            written += self._insert(conn, [row])
                    except Exception as exc:
                        if is_down(exc, conn):
                            raise DatabaseDown(describe(exc)) from exc
                        if _key_taken(exc):
                            continue
                        reason, state = classify(exc)
                        row_failures.append(Failure.of(reason, tool_name=row["tool_name"], sqlstate=state,
                                                       detail=describe(exc), capture_key=row["capture_key"]))
        except psycopg.Error as exc:
            raise DatabaseDown(describe(exc)) from exc
        for stats in tallies:
            stats.written += written
            stats.duplicates += len(rows) - written - len(row_failures)
        failures.extend(row_failures)

    def _insert(self, conn: psycopg.Connection, rows: list[dict]) -> int:
        params = {"rows": batch_json(rows), "keys": [row["capture_key"] for row in rows]}
        return conn.execute(QUERIES[self._insert_query], params).rowcount

    def _write_failures(self, conn: psycopg.Connection, failures: list[Failure], replay: bool = False,
                        counted: bool = True) -> None:
        """Record failures; counted: count them (a record of dropped rows is not: they count as dropped)."""
        if not failures:
            return
        try:
            with conn.transaction():
                set_local_role(conn, self.failure_role)
                with conn.cursor() as cur:
                    cur.executemany(QUERIES["insert_failure"], [asdict(f) for f in failures])
        except psycopg.Error as exc:
            if is_down(exc, conn):
                raise DatabaseDown(describe(exc)) from exc
            self.stats.undeliverable_failures += len(failures)
            log.warning("evalledger capture: %d failure records could not be written: %s",
                        len(failures), describe(exc))
            return
        for f in failures if counted else ():
            self.stats.failed[f.reason] += 1
            if replay:
                self.stats.replay.failed[f.reason] += 1
        if counted and not replay:
            self.stats.refused.extend(failures)

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
        records = [{"kind": "candidate", "row": json_row(r)} for r in rows]
        records += [{"kind": "failure", "failure": asdict(f)} for f in failures]
        lines = encoded(records)
        size = sum(map(len, lines))
        try:
            self.spool.append_lines(lines)
        except OSError as exc:
            self._spool_refused(exc, len(rows), len(failures), size)
            return
        self.stats.spooled += len(rows)
        if not self._dropped_count_ready:
            try:
                self.spool.dropped.prepare()
                self._dropped_count_ready = True
            except OSError:
                pass
        if self._spool_refusal is not None and records and self._outage_ends_with(size):
            self._kept_again("the spool takes them")

    def _outage_ends_with(self, appended: int) -> bool:
        """Whether the spool, which just took a write of `appended` bytes, is out of its outage.

        An outage for want of space (ENOSPC, EDQUOT) ends when the write taken is at least as large
        as the largest one refused, or the filesystem has room for that one, or is at least half
        free, or nothing was refused for OUTAGE_QUIET_S: a nearly full disk that takes a small batch
        between refusals of larger ones is still the same outage, not an end and a new start to log
        each time. Where the room is not seen (a quota: statvfs does not show it), the room is not
        asked; the quiet then ends an outage whose refused write was larger than any the quota would
        ever take (a single long row), which no later write could end. Any other refusal (read-only,
        EIO, ...) ends at the first write taken.
        """
        largest = self._refused_bytes
        if appended >= largest or time.monotonic() - self._refused_at >= OUTAGE_QUIET_S:
            return True
        room = None if self._refused_by_quota else self.spool.room()
        return room is not None and (room.free >= largest or 2 * room.free >= room.size)

    def _spool_refused(self, exc: OSError, rows: int, failures: int, size: int) -> None:
        """The spool's disk refused rows that the database could not take: they are dropped."""
        self.stats.dropped += rows
        self.stats.undeliverable_failures += failures
        self._dropped_unrecorded += rows
        self.last_spool_refusal = refusal(exc)
        if self._spool_refusal is None:
            self._spool_refusal = refusal(exc)
            self._dropped_in_outage = 0
            self._refused_bytes = 0
            self._refused_by_quota = False
            # Once per outage: a full disk under a busy application would log every row.
            log.error("evalledger capture: the spool %s refuses writes (%s): captured rows the database cannot take "
                      "are dropped until it takes them again; `evalledger doctor` counts them",
                      self.spool.path, self._spool_refusal)
        self._dropped_in_outage += rows
        self._refused_at = time.monotonic()
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            self._refused_bytes = max(self._refused_bytes, size)
            self._refused_by_quota |= exc.errno == errno.EDQUOT
        if rows:
            try:
                self.spool.dropped.add(rows, self._spool_refusal)
            except OSError:
                pass  # the disk refuses this too: the log line, stats and the ledger's record remain

    def _kept_again(self, how: str) -> None:
        log.warning("evalledger capture: captured rows are kept again (%s); %d were dropped while the spool %s "
                    "refused writes (%s)", how, self._dropped_in_outage, self.spool.path, self._spool_refusal)
        self._spool_refusal = None

    def _record_spool_drops(self) -> None:
        """A failure in the ledger for the rows a refusing spool dropped, so that any process sees them."""
        dropped = self._dropped_unrecorded
        failure = Failure.of("other", detail=f"{dropped} captured rows dropped: the local spool refused them "
                                             f"({self.last_spool_refusal})")
        try:
            self._write_failures(self.connection(), [failure], counted=False)
        except DatabaseDown as exc:
            self._went_down(exc)
            return
        self._dropped_unrecorded -= dropped

    def _maybe_replay(self) -> None:
        conn = self._conn
        if conn is None:
            return

        def handler(records: list[dict]) -> None:
            rows = [row_from_json(r["row"]) for r in records if r.get("kind") == "candidate"]
            failures = [Failure(**r["failure"]) for r in records if r.get("kind") == "failure"]
            self._insert_rows(conn, rows, failures, replay=True)
            self._write_failures(conn, failures, replay=True)
            self.stats.replay.records += len(records)

        try:
            self.spool.replay(handler)
        except DatabaseDown as exc:
            self._went_down(exc)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            # Tried again at every batch while it fails: said once, not at every try.
            if self._replay_failing is None:
                log.error("evalledger capture: cannot replay %s: %s", self.spool.path, exc)
            self._replay_failing = str(exc)
        else:
            if self._replay_failing is not None:
                log.warning("evalledger capture: the spool %s is replayed again", self.spool.path)
            self._replay_failing = None

    def replay_spool(self) -> int:
        """Write whatever waits in the spool now; return how many records it held."""
        with self._io:
            before = self.spool.pending()
            try:
                self.connection()
            except DatabaseDown as exc:
                self._went_down(exc)
                return 0
            return before - self.spool.pending()


def _key_taken(exc: BaseException) -> bool:
    """The statement stored a capture_key another writer stored after the statement began."""
    return isinstance(exc, psycopg.errors.UniqueViolation) and exc.diag.constraint_name == "eval_candidate_keys_pkey"


def default_dsn() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from evalledger.core.embedded import EmbeddedServer

    return EmbeddedServer().dsn()
