"""The ledger's code, fingerprinted: what a digest pins beside the blocks, so that verify names every
definition changed since (a catalog edit of a function body, a trigger, a policy or a grant runs no DDL,
and no event trigger sees it).

The canonical form (docs/ledger.md, "The code fingerprint"): each definition of the ledger's schemas
(evalledger, evalledger_guard) is named `<kind> <name>` and written as the server writes it
(pg_get_functiondef with owner and grants, pg_get_triggerdef with its enabled state, each policy's
command, roles and expressions, each relation's owner, grants, row-level security and a view's
definition, each constraint, each schema's owner and grants, the event triggers), with names
schema-qualified; its hash is SHA-256 of that text in UTF-8, as 64 lowercase hex digits. The
fingerprint is SHA-256 of the lines `<kind> <name>` TAB `<hash>` LF, in bytewise order of the line.
Partitions of captured queries come and go with the purge and are left out.
"""

from __future__ import annotations

import hashlib

import psycopg

from . import check
from .journal import QUERIES


def definitions(conn: psycopg.Connection) -> dict[str, str]:
    """Each definition's name and the SHA-256 (hex) of its text, read in conn's transaction (its search_path
    set to pg_catalog, and TimeZone, DateStyle, IntervalStyle, extra_float_digits and bytea_output to
    code_session's, until the transaction ends: a caller's own transaction keeps them after this)."""
    with conn.transaction():  # a transaction of its own under autocommit, else a savepoint in conn's
        conn.execute(QUERIES["code_session"])
        return {f"{kind} {name}": hashlib.sha256(text.encode("utf-8")).hexdigest()
                for kind, name, text in conn.execute(QUERIES["code_definitions"])}


def fingerprint(code: dict[str, str]) -> str:
    """The fingerprint of a set of definitions (their names and hashes): check.py's, the one definition."""
    return check.code_fingerprint(code)


def changes(then: dict[str, str], now: dict[str, str]) -> list[tuple[str, str]]:
    """(name, what happened) of every definition changed, added or removed between two sets, by name."""
    found = [(name, "changed") for name in sorted(then.keys() & now.keys()) if then[name] != now[name]]
    found += [(name, "added") for name in sorted(now.keys() - then.keys())]
    found += [(name, "removed") for name in sorted(then.keys() - now.keys())]
    return sorted(found)
