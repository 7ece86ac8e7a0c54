"""`snapshot import DIR`: a SnapshotStore history (the seed's own Go code, or ours) into the ledger.

Every file is read and checked before anything is written, then all go in one transaction: a
bad file names itself and its field, and nothing is imported. The ledger keeps each file's
document as the file holds it (its `at` to the nanosecond, its float64 deltas); the database
reads the columns from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import psycopg

from evalledger.core import db, reader
from evalledger.core.errors import EvalledgerError

from . import snapshot as snap_mod, store
from .history import SnapshotStore
from .snapshot import SCHEMA_VERSION, SnapshotError


@dataclass(frozen=True)
class Found:
    path: Path
    document: Any


def _targets(directory: Path) -> list[Path]:
    """The target folders under DIR: DIR itself when it holds snapshot files, else its subfolders."""
    if not directory.is_dir():
        raise EvalledgerError(f"{directory}: no such directory")
    if any(p.suffix == ".json" and p.is_file() for p in directory.iterdir()):
        return [directory]
    return sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))


def read_directory(directory: Path, *, warn: Callable[[str], None]) -> list[Found]:
    """Every current-schema snapshot file under DIR, checked; others are skipped with a warning."""
    found = []
    for target in _targets(directory):
        history = SnapshotStore(target.parent, warn=warn)
        for path in history.list(target.name):
            try:
                document = reader.read_json(path, "snapshot file")
                loaded = snap_mod.located(document, snap_mod.snapshot_from)
            except SnapshotError as exc:
                raise EvalledgerError(str(exc)) from None
            if loaded.schema_version != SCHEMA_VERSION:
                warn(f"{path}: schema_version {loaded.schema_version}, not {SCHEMA_VERSION}: skipped")
                continue
            for field_name, value in (("kind", loaded.kind), ("name", loaded.name), ("run_id", loaded.run_id)):
                if not value.strip():
                    raise document.refuse((field_name,), "must not be empty")
            if loaded.kind not in ("bot", "feature"):
                raise document.refuse(("kind",), f"expected bot or feature, got {loaded.kind!r}")
            found.append(Found(path, document.value))
    if not found:
        raise EvalledgerError(f"{directory}: no snapshot files to import")
    return found


def ingest(conn: psycopg.Connection, found: list[Found]) -> int:
    """INSERT each document (in the caller's transaction); how many were new."""
    added = 0
    for item in found:
        try:
            with conn.transaction():
                added += store.import_snapshot(conn, item.document, item.path.name)
        except psycopg.Error as exc:
            raise EvalledgerError(f"{item.path}: {db.explain(exc)}") from None
    return added
