"""Why a capture was not stored: the reason enum of eval_capture_failures, the failure row, and
how a failed write is classified (check_violation 23514, rls_reject 42501, db_down for
connection failures, class 08, 57P0x and 53300, scrubber_exception, other)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import psycopg

from .rows import TOOLS
from .scrub import scrub_pii

REASONS = ("db_down", "rls_reject", "check_violation", "scrubber_exception", "other")
# Deterministic failure keys: the same row failing for the same reason is one failure, however
# many times a spool is replayed.
FAILURE_NAMESPACE = uuid.UUID("0b5f8f5e-3c1d-4b8e-9a57-4f6c2d1e7a90")
DETAIL_MAX = 200
_DOWN_STATES = {"57P01", "57P02", "57P03", "53300"}


class ScrubberFailed(Exception):
    """The scrubber raised (or returned something other than text); the row is not stored."""


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


def is_down(exc: BaseException, conn: psycopg.Connection | None) -> bool:
    if classify(exc)[0] == "db_down":
        return True
    return conn is not None and (conn.closed or conn.broken)


def describe(exc: BaseException) -> str:
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
