"""Seed 003's SnapshotStore: a per-target, append-only history of snapshot files on disk.

Layout (the seed's): `<root>/<sanitised name>/<YYYYMMDDTHHMMSSZ>__<sanitised run id>.json`, so
lexical order is chronological and a Go reader of the seed finds the same files in the same
order. Differences from the seed, each on purpose:
- files are written atomically (a temporary file beside it, then a rename), so a reader never
  sees half a snapshot and a crash leaves no `.json` behind;
- rewriting the same snapshot is a no-op (the seed rewrites identical bytes), and rewriting a
  *different* snapshot under the same name is refused: the history is append-only;
- a file of another schema_version is skipped with a warning when listing snapshots (the seed
  would load it into the wrong shape).
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path
from typing import Callable

from evalledger.core import reader

from . import go_json, snapshot as snap_mod
from .snapshot import SCHEMA_VERSION, Snapshot, SnapshotError

# Go's unicode.IsSpace, which strings.TrimSpace uses (Python's str.strip also strips U+001C-U+001F).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def sanitize_segment(name: str) -> str:
    """A name made safe as one path segment, exactly as the seed's sanitizeSegment does it."""
    name = name.strip(_GO_SPACE)
    for bad in ("/", "\\", ".."):  # filepath.Separator is "/" here, as on every POSIX Go build
        name = name.replace(bad, "-")
    name = name.strip(".-")
    return name or "unnamed"


def file_name(snap: Snapshot) -> str:
    """`<UTC second>__<sanitised run id>.json`, as the seed names it."""
    ts = snap.at.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{ts}__{sanitize_segment(snap.run_id)}.json"


def _stderr_warning(message: str) -> None:
    print(f"evalledger: warning: {message}", file=sys.stderr)


@dataclass
class SnapshotStore:
    """The history root; `warn` receives one line per skipped file."""

    root: Path
    warn: Callable[[str], None] = _stderr_warning

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    def dir(self, name: str) -> Path:
        return self.root / sanitize_segment(name)

    def write(self, snap: Snapshot) -> Path:
        """Persist snap and return its path; the same snapshot twice is one file."""
        if snap.schema_version == 0:
            snap.schema_version = SCHEMA_VERSION
        for field_name in ("name", "run_id"):
            if "\x00" in getattr(snap, field_name):
                raise SnapshotError(f"{field_name}: a NUL character cannot be part of a file name")
        data = go_json.dumps_bytes(snap)
        directory = self.dir(snap.name)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / file_name(snap)
        if path.exists():
            if path.read_bytes() == data:
                return path
            raise SnapshotError(f"{path}: already holds a different snapshot (the history is append-only)")
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            # link() fails if another writer got there first; unlike rename it never replaces a file.
            try:
                os.link(tmp, path)
            except FileExistsError:
                if path.read_bytes() != data:
                    raise SnapshotError(f"{path}: already holds a different snapshot (the history is append-only)")
            except OSError:  # a filesystem without hard links: rename, after the check above
                os.replace(tmp, path)
                return path
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return path

    def list(self, name: str) -> list[Path]:
        """The target's history files in chronological (lexical) order; a missing directory is empty."""
        directory = self.dir(name)
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return []
        except NotADirectoryError:
            raise SnapshotError(f"{directory}: not a directory") from None
        return sorted((Path(e.path) for e in entries if e.name.endswith(".json") and not e.is_dir()),
                      key=lambda p: p.name.encode("utf-8"))

    @staticmethod
    def load(path: Path) -> Snapshot:
        """One snapshot file; a file that is not one names the file, line and field."""
        path = Path(path)
        try:
            text = reader.read_text(path, "snapshot file")
        except reader.InputError as exc:
            raise SnapshotError(str(exc)) from None
        return snap_mod.loads(text, where=str(path))

    def history(self, name: str) -> list[tuple[Path, Snapshot]]:
        """Every current-schema snapshot of the target, oldest first; others are skipped, with a warning."""
        kept = []
        for path in self.list(name):
            loaded = self.load(path)
            if loaded.schema_version != SCHEMA_VERSION:
                self.warn(f"{path}: schema_version {loaded.schema_version}, not {SCHEMA_VERSION}: skipped")
                continue
            kept.append((path, loaded))
        return kept

    def last(self, name: str) -> tuple[Snapshot | None, bool]:
        """The most recent snapshot of the target, or (None, False) when it has none."""
        for path in reversed(self.list(name)):
            loaded = self.load(path)
            if loaded.schema_version == SCHEMA_VERSION:
                return loaded, True
            self.warn(f"{path}: schema_version {loaded.schema_version}, not {SCHEMA_VERSION}: skipped")
        return None, False
