"""Files written whole or not at all: a reader sees the old file or the new one, never half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def replacing(path: Path, mode: str = "w") -> Iterator[IO]:
    """A temporary file beside path, open in mode ("w": UTF-8 text, "wb": bytes). On a clean exit
    it is flushed, fsynced and renamed over path, and the folder fsynced; on an error it is removed
    and path is as it was. OSError from making it (a folder not there, not writable) is the caller's."""
    path = Path(path)
    fd, tmp = _beside(path)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _rename_durably(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _beside(path: Path) -> tuple[int, str]:
    """A new temporary file in path's folder (a rename over path never crosses a file system)."""
    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


def _rename_durably(tmp: str, path: Path) -> None:
    """tmp renamed over path, and the folder fsynced so that the rename survives a crash."""
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def write_atomic(path: Path, text: str) -> None:
    """text written to path whole (replacing)."""
    with replacing(path) as handle:
        handle.write(text)


class Staged:
    """A file written in two steps, for a writer that may overlap the slow half with other work
    and must not show the file before something else is done: __init__ writes text to a temporary
    file beside path, flushed and fsynced (OSError is the caller's, nothing left behind); publish()
    renames it over path and fsyncs the folder (a reader sees the old file or the new one);
    discard() removes it, path as it was."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = Path(path)
        fd, self._tmp = _beside(self.path)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            self.discard()
            raise

    def publish(self) -> None:
        try:
            _rename_durably(self._tmp, self.path)
        finally:
            self.discard()

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)
