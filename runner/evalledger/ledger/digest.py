"""Seals and digests: closing blocks over the journal, and what an auditor keeps outside the database."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import psycopg

from evalledger.core import db, reader
from evalledger.core.errors import EvalledgerError
from evalledger.core.windows import iso

from . import check, code
from .journal import QUERIES

# How long a seal waits for the transactions running when it began (one that just committed its
# entries is sealed at once; an older one still open holds them back only this long).
WAIT_SECONDS = 5.0


def seal(conn: psycopg.Connection, wait_seconds: float = WAIT_SECONDS) -> dict:
    """Seal a block over the entries not yet sealed; what was sealed and what still waits."""
    block, entries, first, last, block_hash, sealed_at, unsealed, held_by = conn.execute(
        QUERIES["seal"], {"wait_seconds": wait_seconds}).fetchone()
    return {"block": block, "entries": entries, "first_entry": first, "last_entry": last,
            "block_hash": block_hash.hex() if block_hash else None, "sealed_at": sealed_at,
            "unsealed": unsealed, "held_by": int(held_by) if held_by else None}


def seal_after(role: str, wait_seconds: float = WAIT_SECONDS) -> dict | None:
    """Seal right after a completion (or a purge) committed, in a transaction of its own, so that its
    entries are in a block before the command returns; None when the journal is not installed."""
    with db.transaction(role) as conn:
        if not conn.execute(QUERIES["installed"]).fetchone()[0]:
            return None
        return seal(conn, wait_seconds)


def held_back(sealed: dict | None) -> str | None:
    """A line saying what a seal could not include yet, or None when it sealed everything."""
    if not sealed or not sealed["held_by"]:
        return None
    return (f"{sealed['unsealed']} journal entries wait for transaction {sealed['held_by']}, still open, and are "
            "sealed by the next `evalledger ledger seal`")


def take(conn: psycopg.Connection, database: str, wait_seconds: float = WAIT_SECONDS) -> tuple[dict, dict]:
    """Seal, then the digest of the newest block (self-describing, signed by nobody, to keep outside), with the
    fingerprint of the ledger's code (code.py: every definition by name, and the fingerprint over them); and what
    the seal could not include yet."""
    ledger_id, block, block_hash, ledger_root, entries, sealed_at, taken_at, unsealed, held_by = conn.execute(
        QUERIES["digest"], {"wait_seconds": wait_seconds}).fetchone()
    definitions = code.definitions(conn)
    return {"schema_version": 1, "kind": "ledger_digest", "canon": check.CANON, "ledger_id": str(ledger_id),
            "database": database, "block": block, "block_hash": block_hash.hex(), "ledger_size": block,
            "ledger_root": ledger_root.hex(), "entries": int(entries), "sealed_at": iso(sealed_at),
            "taken_at": iso(taken_at), "code_fingerprint": code.fingerprint(definitions),
            "code": definitions}, {"unsealed": unsealed, "held_by": int(held_by) if held_by else None}


def load(path: Path) -> dict:
    """A digest file the user named, checked for its shape; a problem names the file."""
    try:
        return check.parse_digest(reader.read_text(path, "digest file"))
    except json.JSONDecodeError as exc:
        raise EvalledgerError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    except ValueError as exc:  # a key given twice, or the digest's first problem
        raise EvalledgerError(f"{path}: {exc}") from None


def dump(document: dict) -> str:
    """A digest or proof as the JSON text written to a file or stdout (numbers kept exactly)."""
    return json.dumps(document, indent=2, sort_keys=True, default=_exact) + "\n"


def _exact(value):
    if isinstance(value, Decimal) and value == value.to_integral_value() and "." not in str(value):
        return int(value)
    raise TypeError(f"{value!r} has no exact JSON form here")
