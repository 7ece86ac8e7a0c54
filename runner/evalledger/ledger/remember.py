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


def _grow(frontier: list[tuple[int, bytes]], hashes: list[bytes]) -> list[tuple[int, bytes]]:
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
    """The block hashes and compact range kept beside the digest seen, when they are whole and make its root."""
    try:
        kept = path.with_suffix(".hashes").read_bytes()
        frontier = [(int(size), bytes.fromhex(node)) for size, node in seen.get("frontier", [])]
    except (OSError, ValueError, TypeError):
        return None
    if len(kept) != 32 * seen["ledger_size"] or not frontier or sum(size for size, _ in frontier) != seen["ledger_size"] \
            or _root(frontier).hex() != seen["ledger_root"] or kept[-32:].hex() != seen["block_hash"]:
        return None
    return kept, frontier


def extends(seen: dict, hashes: list[bytes], where: str, path: Path | None = None) -> list[tuple[int, bytes]]:
    """Raise LedgerRewound unless the ledger of these block hashes extends the digest seen; the compact range of
    the tree of the blocks seen. The block hashes are compared with those kept beside the digest seen when they
    are there (equal hashes, equal tree), else the tree of the first blocks is hashed again."""
    m, n = seen["ledger_size"], len(hashes)
    if m > n:
        raise LedgerRewound(f"the ledger was rolled back: it holds {n} block{'' if n == 1 else 's'}, but this reader "
                            f"saw {m} ({where}); run `evalledger ledger verify` against a digest kept outside")
    kept = _remembered(seen, path) if path is not None else None
    if kept is not None:
        same, frontier = b"".join(hashes[:m]) == kept[0], kept[1]
    else:
        frontier = _grow([], hashes[:m])
        same = hashes[m - 1].hex() == seen["block_hash"] and _root(frontier).hex() == seen["ledger_root"]
    if not same:
        raise LedgerRewound(f"the ledger forked: its first {m} blocks (of {n}) are not the {m} this reader saw "
                            f"({where}); run `evalledger ledger verify` against a digest kept outside")
    return frontier


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
    frontier = extends(seen, hashes, str(path), path) if seen is not None else []
    if not remember or (seen is not None and seen["ledger_size"] == len(hashes)):
        return seen
    frontier = _grow(frontier, hashes[seen["ledger_size"] if seen else 0:])
    now = {"schema_version": 1, "kind": "ledger_digest", "canon": check.CANON, "ledger_id": ledger_id,
           "database": database, "block": len(hashes), "block_hash": hashes[-1].hex(), "ledger_size": len(hashes),
           "ledger_root": _root(frontier).hex(), "entries": entries, "sealed_at": sealed_at, "taken_at": sealed_at,
           "frontier": [[size, node.hex()] for size, node in frontier]}
    _write(path, now, b"".join(hashes))
    return now


def _write(path: Path, digest: dict, hashes: bytes | None = None) -> None:
    """Replace the remembered digest whole, and the block hashes kept beside it (a reader killed midway leaves
    hashes that do not match the digest, which are then not used, or the digest before)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, data in ((path.with_suffix(".hashes"), hashes),
                             (path, (json.dumps(digest, sort_keys=True, indent=2) + "\n").encode("utf-8"))):
            if data is None:
                target.unlink(missing_ok=True)
                continue
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".seen-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, target)
    except OSError as exc:
        raise EvalledgerError(f"{path}: cannot keep the digest this reader saw: {exc.strerror}") from None


