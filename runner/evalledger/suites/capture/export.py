"""`evalledger export`: captured rows as seed-001 NDJSON, streamed straight from the database.

The window is ``[since, until)`` on ``created_at``:

- ``until`` (exclusive) is the export bound the database hands out
  (``capture_export_bound_v2()``: every row stamped before it is committed and visible, no row
  stamped later can be earlier), or ``--until`` when that is earlier;
- ``since`` (inclusive) is ``--since``: a duration back from that bound (``7d``) or an absolute
  timestamp; absent, the window has no lower bound.

So ``--since`` set to the ``until`` of the previous export continues exactly where it ended: no
row missed, none repeated, even among rows with the same ``created_at``. Both bounds are printed
on stderr with microseconds, ready to paste. A window that holds no time at all (``--since`` not
before its end) is an error, never an empty file that looks like a quiet week.

With ``--output FILE`` the rows go to a temporary file beside FILE, renamed into place once the
last row is written and synced; then ``FILE.complete.json`` (the trailer) records how many rows
and bytes FILE holds, its SHA-256 and the window. Only a complete export writes the trailer, and
the rows of FILE stay exactly seed 001's NDJSON, so a reader of rows needs no change: a FILE
without a trailer that matches it is not a finished export.

Each line is built in SQL (``eval_candidate_ndjson_v1``) and sent with COPY: the CSV format with a
delimiter and a quote character that JSON text never contains (control characters are always
escaped in JSON) leaves every line exactly as the database built it, with no per-row work here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import psycopg

from pathlib import Path

from evalledger.core import db, files, windows
from evalledger.core.errors import EvalledgerError
from evalledger.core.output import plural
from evalledger.core.queries import Queries
from evalledger.core.windows import Since, iso, parse_since, parse_timestamp  # noqa: F401 (export's names)

QUERIES = Queries(__package__)

HEARTBEAT_ROWS = 50_000


@dataclass(frozen=True)
class Exported:
    """How many rows an export wrote, and its effective window [since, until)."""

    rows: int
    since: datetime | None
    until: datetime


def _bound(conn: psycopg.Connection, role: str) -> datetime:
    """The window's exclusive upper bound, from the primary: on a standby (--read-url), taken there
    and then waited for, until the standby has replayed every row stamped before it."""
    from evalledger.core import queries

    if not conn.execute(queries.get("in_recovery")).fetchone()[0]:
        return windows.capture_bound(conn)
    with db.connect(db.database_url(), role=role, autocommit=True) as primary:
        if primary.execute(queries.get("in_recovery")).fetchone()[0]:
            raise EvalledgerError(
                "export from a standby takes its window's bound from the primary, and DATABASE_URL (or "
                "--database-url) names a standby too: name the primary there, the standby in --read-url or "
                "DATABASE_READ_URL")
        bound = windows.capture_bound(primary)
        db.replayed(conn, primary, "export")
    return bound

TRAILER_SUFFIX = ".complete.json"


def trailer_path(path: Path) -> Path:
    """Where the trailer of an export written to path goes: path + .complete.json."""
    return path.with_name(path.name + TRAILER_SUFFIX)


class _Counted:
    """A binary stream that counts and hashes what passes through it."""

    def __init__(self, raw) -> None:
        self.raw, self.bytes, self.sha256 = raw, 0, hashlib.sha256()

    def write(self, data) -> None:
        self.raw.write(data)
        self.bytes += len(data)
        self.sha256.update(data)

    def flush(self) -> None:
        self.raw.flush()


def export_to_file(path: Path, since: Since | None, until: datetime | None, limit: int | None, tool: str | None,
                   role: str = "runner", note: Callable[[str], None] = lambda _line: None) -> Exported:
    """run_export into path, atomically, then its trailer (see the module docstring)."""
    path = Path(path)
    trailer = trailer_path(path)
    try:
        with files.replacing(path, "wb") as raw:
            counted = _Counted(raw)
            done = run_export(since, until, limit, tool, out=counted, role=role, note=note)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(trailer)  # the old trailer describes the old file, which goes now
        document = {"schema_version": 1, "kind": "capture_export_complete", "file": path.name, "rows": done.rows,
                    "bytes": counted.bytes, "sha256": counted.sha256.hexdigest(),
                    "since": iso(done.since) if done.since else None, "until": iso(done.until),
                    "next_since": iso(done.until), "tool": tool, "limit": limit,
                    "limit_reached": limit is not None and done.rows == limit}
        files.write_atomic(trailer, json.dumps(document, indent=2) + "\n")
    except OSError as exc:
        raise EvalledgerError(f"--output {path}: cannot write it ({exc.strerror or exc}); nothing was left in "
                              "its place: the export can be run again") from None
    note(f"wrote {path} and its trailer {trailer.name}")
    return done


def run_export(since: Since | None, until: datetime | None, limit: int | None, tool: str | None,
               out=None, role: str = "runner", note: Callable[[str], None] = lambda _line: None) -> Exported:
    """Stream the window to out (default stdout); return what was written and the window.
    note is told the window, progress and the next --since (the CLI prints them on stderr)."""
    out = out or sys.stdout.buffer
    conn = db.connect(db.read_url(), role=role, autocommit=True)
    rows = 0
    closed_pipe = False
    try:
        bound = _bound(conn, role)
        upper = min(until, bound) if until is not None else bound
        lower = since.resolve(bound) if since is not None else None
        if lower is not None and lower >= upper:
            raise EvalledgerError(f"--since {iso(lower)} is not before the window's end {iso(upper)}"
                                  f"{' (--until)' if until is not None and until <= bound else ' (now)'}: the window "
                                  "[since, until) would be empty")
        window = f"created_at >= {iso(lower)} and < {iso(upper)}" if lower else f"created_at < {iso(upper)}"
        note(f"window {window} (tool: {tool or 'all'}, limit: {limit or 'none'})")
        try:
            with conn.cursor() as cur:
                with cur.copy(QUERIES["export_copy"],
                              {"since": lower, "until": upper, "tool": tool, "max_rows": limit}) as copy:
                    write = out.write
                    for data in copy:
                        try:
                            write(data)
                        except BrokenPipeError:
                            closed_pipe = True
                            conn.cancel_safe()
                            break
                        rows += 1
                        if rows % HEARTBEAT_ROWS == 0:
                            note(f"{rows} rows so far")
            if not closed_pipe:
                out.flush()
        except BrokenPipeError:
            closed_pipe = True
        except psycopg.errors.QueryCanceled:
            if not closed_pipe:
                raise
        except psycopg.Error:
            if not closed_pipe:
                raise
    except psycopg.Error as exc:
        raise db.explain(exc) from None
    finally:
        conn.close()
    if closed_pipe:
        # The reader left (`| head`): stop quietly, and keep Python's exit flush from complaining.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return Exported(rows, lower, upper)
    note(f"{plural(rows, 'row')}; the next window starts at --since {iso(upper)}")
    if limit is not None and rows == limit:
        note(f"limit {limit} reached: older rows of this window were not exported")
    return Exported(rows, lower, upper)
