"""Readers that remember (docs/ledger.md, "Readers that remember"): every command that reads the ledger for a
person keeps the newest digest it has seen under the user's home, and checks, before it reads, that the ledger
still extends it. A rollback (fewer blocks than it saw) or a fork (the blocks it saw hashed otherwise now) is
an error naming both sizes, exit 1.

The database gives only the block hashes (ledger_heads_v1); the ledger tree over them is hashed here, as
check.py does (RFC 6962). The reader keeps the block hashes it saw beside the digest, with the tree's compact
range: the first m of today's hashes must be those (equal hashes, equal tree: the consistency check with the
whole of the data, on this side), and only the blocks new to it are hashed into the tree it remembers next.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import psycopg

from evalledger.core.embedded import evalledger_home
from evalledger.core.errors import EXIT_FAIL, EvalledgerError
from evalledger.core.windows import iso

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
        return check.parse_digest(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except check.MisshapenDigest as exc:
        raise EvalledgerError(f"{path}: {exc}: move it away to start remembering afresh") from None
    except (OSError, ValueError) as exc:
        raise EvalledgerError(f"{path}: the digest this reader remembers cannot be read ({exc}): move it away to "
                              "start remembering afresh") from None


def heads(conn: psycopg.Connection) -> tuple[str, bytes, int, str | None] | None:
    """The ledger's id, its block hashes in order (32 bytes apiece, joined), the entries they cover and the
    newest seal's time; None where the journal is not installed."""
    if not conn.execute(QUERIES["installed"]).fetchone()[0]:
        return None
    ledger_id, count, joined, entries, sealed_at = conn.execute(QUERIES["heads"]).fetchone()
    if len(joined) != 32 * count:
        raise LedgerRewound(f"the ledger's {count} blocks do not each have a 32-byte hash: run `evalledger ledger "
                            "verify`")
    return str(ledger_id), bytes(joined), int(entries), iso(sealed_at) if sealed_at else None


def split(joined: bytes) -> list[bytes]:
    """Joined 32-byte hashes, one by one."""
    return [joined[i:i + 32] for i in range(0, len(joined), 32)]


def _grow(frontier: list[tuple[int, bytes]], hashes) -> list[tuple[int, bytes]]:
    """The ledger tree's compact range (the roots of its perfect subtrees, largest first) with these block
    hashes' leaves added: RFC 6962's tree, built as it grows, so a reader hashes only the blocks new to it."""
    frontier = list(frontier)
    for block_hash in hashes:
        size, node = 1, check.block_leaf(block_hash)
        while frontier and frontier[-1][0] == size:
            node = check.node_hash(frontier.pop()[1], node)
            size *= 2
        frontier.append((size, node))
    return frontier


def _root(frontier: list[tuple[int, bytes]]) -> bytes:
    """The Merkle tree hash of a compact range: its subtrees folded from the right (RFC 6962's split)."""
    root = frontier[-1][1]
    for _, node in reversed(frontier[:-1]):
        root = check.node_hash(node, root)
    return root


def _remembered(seen: dict, path: Path) -> tuple[bytes, list[tuple[int, bytes]]] | None:
    """The block hashes and compact range kept beside the digest seen, when they are whole and make its root
    (hashes past the digest's blocks, from a reader stopped while remembering, are not read)."""
    size = 32 * seen["ledger_size"]
    try:
        with path.with_suffix(".hashes").open("rb") as handle:
            kept = handle.read(size)
        frontier = [(int(n), bytes.fromhex(node)) for n, node in seen.get("frontier", [])]
    except (OSError, ValueError, TypeError):
        return None
    if len(kept) != size or not frontier or sum(n for n, _ in frontier) != seen["ledger_size"] \
            or _root(frontier).hex() != seen["ledger_root"] or kept[-32:].hex() != seen["block_hash"]:
        return None
    return kept, frontier


def extends(seen: dict, joined: bytes, where: str, path: Path | None = None) -> tuple[list[tuple[int, bytes]], bool]:
    """Raise LedgerRewound unless the ledger of these block hashes (joined) extends the digest seen; the compact
    range of the tree of the blocks seen, and whether the hashes kept beside it were whole. The block hashes are
    compared with those kept (equal hashes, equal tree), else the tree of the first blocks is hashed again."""
    m, n = seen["ledger_size"], len(joined) // 32
    if m > n:
        raise LedgerRewound(f"the ledger was rolled back: it holds {n} block{'' if n == 1 else 's'}, but this reader "
                            f"saw {m} ({where}); run `evalledger ledger verify` against a digest kept outside")
    kept = _remembered(seen, path) if path is not None else None
    if kept is not None:
        same, frontier = joined[:32 * m] == kept[0], kept[1]
    else:
        frontier = _grow([], split(joined[:32 * m]))
        same = joined[32 * (m - 1):32 * m].hex() == seen["block_hash"] and _root(frontier).hex() == seen["ledger_root"]
    if not same:
        raise LedgerRewound(f"the ledger forked: its first {m} blocks (of {n}) are not the {m} this reader saw "
                            f"({where}); run `evalledger ledger verify` against a digest kept outside")
    return frontier, kept is not None


def check_reader(conn: psycopg.Connection, remember: bool = True, database: str = "") -> dict | None:
    """Before a person reads: the ledger must extend the newest digest this user saw (LedgerRewound if not);
    then, unless remember is False, the newest block becomes the one remembered. What is remembered now (None
    without a journal or a block)."""
    found = heads(conn)
    if found is None or not found[1]:
        return None
    ledger_id, joined, entries, sealed_at = found
    n = len(joined) // 32
    path = seen_path(ledger_id, conn)
    seen = _load(path)
    frontier, whole = extends(seen, joined, str(path), path) if seen is not None else ([], False)
    if not remember or (seen is not None and seen["ledger_size"] == n and whole):
        return seen
    m = seen["ledger_size"] if seen is not None else 0
    frontier = _grow(frontier, split(joined[32 * m:]))
    now = {"schema_version": 1, "kind": "ledger_digest", "canon": check.CANON, "ledger_id": ledger_id,
           "database": database, "block": n, "block_hash": joined[-32:].hex(), "ledger_size": n,
           "ledger_root": _root(frontier).hex(), "entries": entries, "sealed_at": sealed_at, "taken_at": sealed_at,
           "frontier": [[size, node.hex()] for size, node in frontier]}
    _write(path, now, joined, m if whole else 0)
    return now


def _write(path: Path, digest: dict, joined: bytes, kept: int = 0) -> None:
    """Remember: the block hashes first (written from block `kept` on, the ones before being those kept
    already), then the digest, replaced whole. A reader stopped midway leaves the digest before, whose
    blocks' hashes are still the file's first ones."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        hashes = path.with_suffix(".hashes")
        with hashes.open("r+b" if kept and hashes.exists() else "wb") as handle:
            handle.seek(32 * kept)
            handle.write(joined[32 * kept:])
            handle.truncate()
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".seen-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(digest, sort_keys=True, indent=2) + "\n")
        os.replace(temporary, path)
    except OSError as exc:
        raise EvalledgerError(f"{path}: cannot keep the digest this reader saw: {exc.strerror}") from None


