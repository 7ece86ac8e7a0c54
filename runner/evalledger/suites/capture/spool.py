"""The local spool: what the database could not take yet, as JSON lines on disk."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger("evalledger.capture")


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


def has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False
