"""What verify checks, taken from the package and never from the database being checked: the ledger's
tables and their keys (the current SQL files sql/schema.sql installs), which of them the journal
covers, and the journal triggers each must carry. verify cross-checks the catalog against these.
"""

from __future__ import annotations

import functools
import re

from evalledger.core import paths

# The tables of the ledger's schema that carry no journal trigger (journal_exempt_v1 says why, and
# test_verify_trusts_the_package holds the two equal on a ledger just built): the journal itself, its
# blocks, the digests taken and the ledger's id; the purges' markers; the capture writers' lock.
EXEMPT = frozenset({"ledger_journal", "ledger_block", "ledger_digest", "ledger_identity", "capture_purge_marker",
                    "retention_purge_marker", "capture_window"})

_INCLUDE = re.compile(r"^\\ir\s+(\S+)\s*$", re.M)
_TABLE = re.compile(r"^CREATE TABLE (?:evalledger\.)?(\w+)\s*\(", re.M)
_KEY = re.compile(r"PRIMARY KEY \(([^)]*)\)")


@functools.cache
def tables() -> dict[str, frozenset[str]]:
    """Every table the package installs, with its primary key's columns, read from the files sql/schema.sql lists."""
    root = paths.database_root() / "sql"
    found: dict[str, frozenset[str]] = {}
    for name in _INCLUDE.findall((root / "schema.sql").read_text("utf-8")):
        text = (root / name).resolve().read_text("utf-8")
        made = _TABLE.search(text)
        if made:
            key = _KEY.search(text, made.end())
            found[made.group(1)] = frozenset(c.strip() for c in key.group(1).split(",")) if key else frozenset()
    return found


def journalled() -> list[str]:
    """The tables the journal covers, in code-point order."""
    return sorted(t for t in tables() if t not in EXEMPT)


def journal_triggers(table: str) -> dict[str, tuple[str, str, bool]]:
    """The journal triggers a table carries, as journal_attach_v2 makes them: name -> (function, events, per row)."""
    if table == "eval_candidates":
        return {f"eval_candidates_90_journal_{e.lower()}": ("evalledger.journal_capture_v2", e, False)
                for e in ("INSERT", "UPDATE", "DELETE")}
    return {f"{table}_90_journal": ("evalledger.journal_row_v2",
                                    "UPDATE" if table == "eval_candidate_keys" else "INSERT OR UPDATE", True),
            f"{table}_90_journal_delete": ("evalledger.journal_deleted_v2", "DELETE", False)}
