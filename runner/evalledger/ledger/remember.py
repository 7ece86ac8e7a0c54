"""Readers that remember (docs/ledger.md, "Readers that remember"): every command that reads the ledger for a
person keeps the newest digest it has seen under the user's home, and checks, before it reads, that the ledger
still extends it. A rollback (fewer blocks than it saw) or a fork (the blocks it saw hashed otherwise now) is
an error naming both sizes, exit 1.

The database gives only the block hashes (ledger_heads_v1); the ledger tree over them, the one the
remembered digest holds and the newest, is hashed here, as check.py does (RFC 6962). Comparing the tree of
the first m of today's blocks with the root remembered is the consistency check with the whole of the data:
a consistency proof, computed and checked on this side.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import timezone
from pathlib import Path

import psycopg

from evalledger.core.embedded import evalledger_home
from evalledger.core.errors import EXIT_FAIL, EvalledgerError

from . import check
from .journal import QUERIES


class LedgerRewound(EvalledgerError):
    """The ledger no longer extends the newest digest this user saw: rolled back or forked (exit 1)."""

    exit_code = EXIT_FAIL


def folder() -> Path:
    """Where each ledger's newest digest seen is kept: $EVALLEDGER_HOME/ledger (~/.evalledger/ledger)."""
    return evalledger_home() / "ledger"


def seen_path(ledger_id: str, conn: psycopg.Connection | None = None) -> Path:
    """The file of one ledger as read at one place: its id, and the server and database it was read from
    (so that two databases cloned from one template, each with the template's ledger id, are two ledgers)."""
    place = f"{conn.info.host}:{conn.info.port}/{conn.info.dbname}" if conn is not None else ""
    return folder() / f"{ledger_id}-{hashlib.sha256(place.encode()).hexdigest()[:12]}.json"


def _load(path: Path) -> dict | None:
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise EvalledgerError(f"{path}: the digest this reader remembers cannot be read ({exc}): move it away to "
                              "start remembering afresh") from None
    problems = check.check_digest(seen) if isinstance(seen, dict) else ["not a JSON object"]
    if problems:
        raise EvalledgerError(f"{path}: {problems[0]}: move it away to start remembering afresh")
    return seen


def _stamp(value) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def heads(conn: psycopg.Connection) -> tuple[str, list[bytes], int, str | None] | None:
    """The ledger's id, its block hashes in order, the entries they cover and the newest seal's time; None
    where the journal is not installed."""
    if not conn.execute(QUERIES["installed"]).fetchone()[0]:
        return None
    ledger_id, count, joined, entries, sealed_at = conn.execute(QUERIES["heads"]).fetchone()
    joined = bytes(joined)
    return (str(ledger_id), [joined[i:i + 32] for i in range(0, 32 * count, 32)], int(entries),
            _stamp(sealed_at) if sealed_at else None)


def extends(seen: dict, hashes: list[bytes], where: str) -> None:
    """Raise LedgerRewound unless the ledger of these block hashes extends the digest seen."""
    m, n = seen["ledger_size"], len(hashes)
    if m > n:
        raise LedgerRewound(f"the ledger was rolled back: it holds {n} block{'' if n == 1 else 's'}, but this reader "
                            f"saw {m} ({where}); run `evalledger ledger verify` against a digest kept outside")
    leaves = [check.block_leaf(h) for h in hashes[:m]]
    if hashes[m - 1].hex() != seen["block_hash"] or check.merkle_root(leaves).hex() != seen["ledger_root"]:
        raise LedgerRewound(f"the ledger forked: its first {m} blocks (of {n}) are not the {m} this reader saw "
                            f"({where}); run `evalledger ledger verify` against a digest kept outside")


def check_reader(conn: psycopg.Connection, remember: bool = True, database: str = "") -> dict | None:
    """Before a person reads: the ledger must extend the newest digest this user saw (LedgerRewound if not);
    then, unless remember is False, the newest block becomes the one remembered. What is remembered now (None
    without a journal or a block)."""
    found = heads(conn)
    if found is None or not found[1]:
        return None
    ledger_id, hashes, entries, sealed_at = found
    path = seen_path(ledger_id, conn)
    seen = _load(path)
    if seen is not None:
        extends(seen, hashes, str(path))
    if not remember or (seen is not None and seen["ledger_size"] == len(hashes)):
        return seen
    leaves = [check.block_leaf(h) for h in hashes]
    now = {"schema_version": 1, "kind": "ledger_digest", "canon": check.CANON, "ledger_id": ledger_id,
           "database": database, "block": len(hashes), "block_hash": hashes[-1].hex(), "ledger_size": len(hashes),
           "ledger_root": check.merkle_root(leaves).hex(), "entries": entries, "sealed_at": sealed_at,
           "taken_at": sealed_at}
    _write(path, now)
    return now


def _write(path: Path, digest: dict) -> None:
    """Replace the remembered digest whole (a reader killed midway leaves the one before)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".seen-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(digest, handle, sort_keys=True, indent=2)
            handle.write("\n")
        os.replace(temporary, path)
    except OSError as exc:
        raise EvalledgerError(f"{path}: cannot keep the digest this reader saw: {exc.strerror}") from None


def remember_digest(conn: psycopg.Connection, digest: dict) -> None:
    """A digest this user took (ledger digest, publish, watch) becomes the one remembered, if it is newer."""
    path = seen_path(digest["ledger_id"], conn)
    seen = _load(path)
    if seen is None or seen["ledger_size"] < digest["ledger_size"]:
        _write(path, digest)
