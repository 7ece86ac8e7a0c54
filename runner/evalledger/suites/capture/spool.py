"""The local spool: what the database could not take yet, as JSON lines on disk; and the count,
beside it, of captured rows the spool itself refused."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

log = logging.getLogger("evalledger.capture")


@dataclass(frozen=True)
class Room:
    """Bytes free on a filesystem (for the process that asked) and bytes it holds in all."""

    free: int
    size: int


class Spool:
    """Append-only JSON lines on local disk for what the database could not take yet.

    Appends and replays hold an exclusive flock, so several processes sharing one
    EVALLEDGER_HOME never lose each other's lines; every append is fsync'd before it returns, and
    is all or nothing: an append the disk refuses (full, read-only, ...) takes back what it wrote,
    so the file ends where it began. A process killed mid-append can still leave a torn last line:
    the next append starts a new line first, so its first record is never glued onto the torn one.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    @property
    def dropped(self) -> DroppedCount:
        """The count, beside the spool, of captured rows it refused."""
        return DroppedCount(self.path.with_name("dropped.json"))

    def _open(self, flags: int) -> int:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return os.open(self.path, flags | os.O_CREAT, 0o600)

    def append(self, records: Iterable[dict]) -> int:
        """Append records (each a JSON object) durably, all or none; return how many.

        OSError when the disk refuses; the spool is then as it was before the call."""
        return self.append_lines(encoded(records))

    def append_lines(self, lines: list[bytes]) -> int:
        """append() for records already encoded(), a line each."""
        if not lines:
            return 0
        data = b"".join(lines)
        with self._lock:
            fd = self._open(os.O_RDWR | os.O_APPEND)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                start = os.fstat(fd).st_size
                if start and os.pread(fd, 1, start - 1) != b"\n":
                    data = b"\n" + data
                try:
                    view = memoryview(data)
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                    os.fsync(fd)
                except OSError:
                    # A part of the records on disk would be replayed as if acknowledged, and a
                    # torn line left for the next append to step over: take it all back.
                    try:
                        os.ftruncate(fd, start)
                        os.fsync(fd)
                    except OSError as undo:  # pragma: no cover - a disk that refuses even to shrink a file
                        log.error("evalledger capture: cannot take back a failed append to %s: %s", self.path, undo)
                    raise
            finally:
                os.close(fd)
        return len(lines)

    def room(self) -> Room | None:
        """What the spool's filesystem would take now from this process, and its size; None where
        it cannot say. Root may write into the blocks a filesystem reserves for it (ext4's 5%):
        for root they count as free. A quota (EDQUOT) is not seen here."""
        try:
            stats = os.statvfs(self.path.parent)
        except OSError:
            return None
        free = stats.f_bfree if os.geteuid() == 0 else stats.f_bavail
        return Room(free * stats.f_frsize, stats.f_blocks * stats.f_frsize)

    def pending(self) -> int:
        """How many lines wait in the spool."""
        try:
            with open(self.path, "rb") as handle:
                return sum(1 for line in handle if line.strip())
        except FileNotFoundError:
            return 0

    def replay(self, handler: Callable[[list[dict]], None]) -> int:
        """Hand every spooled record to handler (which must commit them); then empty the spool.

        If handler raises, the spool is left as it was. A torn line (a crash mid-append, never
        acknowledged) is skipped; when an older writer glued a record onto one, that record is
        read from where it begins.
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
                records = read_records(b"".join(chunks))
                if records:
                    handler(records)
                os.ftruncate(fd, 0)
                os.fsync(fd)
                return len(records)
            finally:
                os.close(fd)


def read_records(data: bytes) -> list[dict]:
    """The records of a spool's bytes, a line each; a torn line is skipped, and a record glued onto
    one (by a writer that did not start a new line after a tear) is kept."""
    records = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
            continue
        except ValueError:
            pass
        glued = _record_after_tear(line)
        if glued is None:
            log.warning("evalledger capture: skipping unreadable spool line %d", number)
        else:
            log.warning("evalledger capture: skipping a torn record on spool line %d; the record after it is kept",
                        number)
            records.append(glued)
    return records


def _record_after_tear(line: bytes) -> dict | None:
    """The whole JSON object that ends the line and begins after its start, if there is one.

    Inside a JSON string a quote is always escaped, so '{"' begins an object: a torn record's own
    inner objects are cut off by the tear and never parse to the end of the line."""
    at = line.find(b'{"', 1)
    while at != -1:
        try:
            found = json.loads(line[at:])
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        at = line.find(b'{"', at + 1)
    return None


def has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def encoded(records: Iterable[dict]) -> list[bytes]:
    """The spool's lines for records, as appended."""
    return [(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8") for r in records]


def refusal(exc: OSError) -> str:
    """Why the disk refused, in one short line: 'No space left on device (ENOSPC)'."""
    name = errno.errorcode.get(exc.errno or 0)
    text = exc.strerror or type(exc).__name__
    return f"{text} ({name})" if name else text


# The counter is rewritten in place at a fixed size: once the file exists, an update needs no new
# block, so it is still kept on the full disk that made the spool refuse rows.
DROPPED_SIZE = 512


@dataclass(frozen=True)
class Dropped:
    """Captured rows the spool refused, across every process of one EVALLEDGER_HOME."""

    rows: int
    first_at: str | None = None
    last_at: str | None = None
    last_error: str | None = None


class DroppedCount:
    """$EVALLEDGER_HOME/capture/dropped.json: how many captured rows were neither stored nor
    spooled, when, and why; flock'd, fsync'd, one fixed-size JSON object rewritten in place."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _update(self, change: Callable[[Dropped], Dropped]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            text = os.pread(fd, DROPPED_SIZE, 0)
            try:
                current = _parse_dropped(text) if text.strip() else Dropped(0)
            except ValueError:
                current = Dropped(0, last_error="an unreadable count was reset")
            data = json.dumps({"schema_version": 1, **vars(change(current))}).encode("utf-8")
            os.pwrite(fd, data.ljust(DROPPED_SIZE - 1) + b"\n", 0)
            os.fsync(fd)
        finally:
            os.close(fd)

    def prepare(self) -> None:
        """Make the file while the disk still takes it, so a later count needs no new block."""
        if not self.path.exists():
            self._update(lambda current: current)

    def add(self, rows: int, error: str) -> None:
        """Count rows the spool refused now, because of error (OSError when even this is refused)."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._update(lambda c: Dropped(c.rows + rows, c.first_at or now, now, error[:200]))

    def read(self) -> Dropped:
        """What the file says (nothing dropped when there is no file); ValueError when unreadable."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return Dropped(0)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            return _parse_dropped(os.pread(fd, DROPPED_SIZE, 0)) if os.fstat(fd).st_size else Dropped(0)
        finally:
            os.close(fd)


def _parse_dropped(text: bytes) -> Dropped:
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("rows"), int) or data["rows"] < 0:
        raise ValueError("not a count of dropped rows")
    return Dropped(data["rows"], data.get("first_at"), data.get("last_at"), data.get("last_error"))
