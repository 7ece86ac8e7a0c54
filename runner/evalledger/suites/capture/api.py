"""The process-wide capture API an application calls: configure, capture_candidate, flush, close,
counts.

capture_candidate only appends a tuple to the writer's in-memory queue and returns: it never
raises into the caller and never touches the disk or the network. Capture starts on the first
call as resolve_settings() says; at exit (atexit) or close() the writer flushes within a bounded
time and spools what it could not write.
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path

from .settings import resolve_settings
from .writer import CaptureWriter, Counts

log = logging.getLogger("evalledger.capture")
_MISSING = object()
_OFF = object()
_writer = None  # None: not resolved yet; _OFF: capture is off; else a CaptureWriter
_state_lock = threading.Lock()
_atexit_registered = False
_closed_counts = Counts()  # the writers this process closed: counts() goes on adding them up
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
        _retire(previous, previous.close(EXIT_TIMEOUT))
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
        # Tuples, not lists: a queued row of strings, numbers and tuples of them is a container the
        # garbage collector stops tracking after a collection or two, so a backlog of queued rows
        # adds nothing to a full collection's pause, which the caller's thread may pay.
        writer.submit((tool_name, query,
                       tuple(retrieved_slugs) if isinstance(retrieved_slugs, list | tuple) else retrieved_slugs,
                       tuple(retrieved_chunk_ids) if isinstance(retrieved_chunk_ids, list | tuple) else retrieved_chunk_ids,
                       tuple(source_ids) if isinstance(source_ids, list | tuple) else source_ids,
                       expand_enabled, detail, detail_resolved,
                       vector_enabled, expansion_applied, latency_ms, remote, job_id, subagent_id, capture_key))
    except Exception:  # never into the caller
        pass


def flush(timeout: float = 5.0) -> bool:
    """Wait until everything captured so far is written, spooled or refused (recorded as a failure).

    False when the timeout passed first or when a row captured since capture started (or since
    configure()) is in neither the ledger nor the spool: counts().dropped says how many.
    """
    writer = _writer
    return writer.flush(timeout) if isinstance(writer, CaptureWriter) else True


def close(timeout: float = 5.0) -> bool:
    """Flush within timeout seconds and stop capturing in this process (until configure()).

    Returns what flush() would; rows still queued at the timeout are spooled."""
    global _writer
    with _state_lock:
        writer, _writer = _writer, None
    return _retire(writer, writer.close(timeout)) if isinstance(writer, CaptureWriter) else True


def counts() -> Counts:
    """What became of the rows this process captured, since it started: Counts(written, spooled,
    dropped). Rows still queued, and rows the database refused, are in none of them."""
    with _state_lock:
        writer, closed = _writer, _closed_counts
    return closed + writer.counts() if isinstance(writer, CaptureWriter) else closed


def _retire(writer: CaptureWriter, closed: bool) -> bool:
    global _closed_counts
    with _state_lock:
        _closed_counts = _closed_counts + writer.counts()
    return closed


def _close_at_exit() -> None:
    try:
        close(EXIT_TIMEOUT)
    except Exception:  # pragma: no cover
        pass
