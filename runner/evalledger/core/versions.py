"""The package's version against the ledger's migrations: which one is ahead, and what to do.

A package knows the migrations it ships. A ledger lacking some of them is behind (`evalledger db
migrate` applies them); a ledger holding a migration the package does not know was migrated by a
newer evalledger, whose guards and views this package may not match, so this package refuses to
write to it (exit 3, one line) until it is upgraded. Reading stays possible.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from .. import __version__
from . import queries
from .errors import EvalledgerError
from .paths import migrations_dir


class LedgerNewerThanPackage(EvalledgerError):
    """The ledger has migrations this package does not know: writing is refused."""


@dataclass(frozen=True)
class Versions:
    """The package's version and migrations beside the ledger's applied ones."""

    package: str
    known: list[str]
    applied: list[str]

    @property
    def last_applied(self) -> str | None:
        return self.applied[-1] if self.applied else None

    @property
    def pending(self) -> list[str]:
        """Migrations this package ships that the ledger has not applied."""
        return [m for m in self.known if m not in self.applied]

    @property
    def unknown(self) -> list[str]:
        """Migrations the ledger has applied that this package does not ship."""
        return [m for m in self.applied if m not in self.known]


def package_migrations() -> list[str]:
    """The ids of the migrations this package ships, in the order they apply."""
    return sorted(p.stem for p in migrations_dir().glob("*.sql") if not p.name.endswith(".rollback.sql"))


def ledger_versions(conn: psycopg.Connection) -> Versions | None:
    """This package against the ledger at conn; None when the connecting user cannot read the record."""
    if not conn.execute(queries.get("migrations_readable")).fetchone()[0]:
        return None
    applied = [row[0] for row in conn.execute(queries.get("applied_migrations"))]
    return Versions(__version__, package_migrations(), applied)


def newer_ledger_message(versions: Versions) -> str:
    return (f"the ledger has migration {', '.join(versions.unknown)}, which evalledger {versions.package} "
            "does not know: upgrade evalledger before writing to this ledger")


def refuse_newer_ledger(conn: psycopg.Connection) -> None:
    """Raise LedgerNewerThanPackage when the ledger was migrated by a newer evalledger."""
    versions = ledger_versions(conn)
    if versions is not None and versions.unknown:
        raise LedgerNewerThanPackage(newer_ledger_message(versions))
