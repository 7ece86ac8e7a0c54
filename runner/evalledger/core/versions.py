"""The package's version against the ledger's migrations: which one is ahead, and what to do.

A package knows the migrations it ships. A ledger lacking some of them is behind (`evalledger db
migrate` applies them); a ledger holding a migration the package does not know was migrated by a
newer evalledger, whose guards and views this package may not match, so this package refuses to
write to it (exit 3, one line) until it is upgraded. Reading stays possible.

A migration the package does not know that sorts before the package's own last one was not made by
a newer evalledger, which only adds migrations after the ones it shipped: it is a pre-release's,
which the release folded into its baseline (0.1.0 folded 0002-0012 into 0001.baseline). No
migration upgrades such a ledger, so it is refused the same way (writes, and `db migrate` too) with
one line saying it must be rebuilt.
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


class LedgerFromAPreRelease(EvalledgerError):
    """The ledger has migrations a pre-release shipped and the release folded away: it must be rebuilt."""


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

    @property
    def folded(self) -> list[str]:
        """Unknown migrations sorting before this package's last one: a pre-release's, folded since."""
        return pre_release_migrations(self.applied, self.known)


def package_migrations() -> list[str]:
    """The ids of the migrations this package ships, in the order they apply."""
    return sorted(p.stem for p in migrations_dir().glob("*.sql") if not p.name.endswith(".rollback.sql"))


def ledger_versions(conn: psycopg.Connection, known: list[str] | None = None) -> Versions | None:
    """This package (its migrations, or those known) against the ledger at conn; None when the
    connecting user cannot read the record."""
    if not conn.execute(queries.get("migrations_readable")).fetchone()[0]:
        return None
    applied = [row[0] for row in conn.execute(queries.get("applied_migrations"))]
    return Versions(__version__, package_migrations() if known is None else known, applied)


def pre_release_migrations(applied: list[str], known: list[str]) -> list[str]:
    """The applied migrations not in known that sort before known's last one."""
    return [m for m in applied if m not in known and known and m < max(known)]


def newer_ledger_message(versions: Versions) -> str:
    return (f"the ledger has migration {', '.join(versions.unknown)}, which evalledger {versions.package} "
            "does not know: upgrade evalledger before writing to this ledger")


def pre_release_message(package: str, folded: list[str], baseline: str) -> str:
    return (f"the ledger was built by a pre-release evalledger: its migrations {', '.join(folded)} were folded "
            f"into {baseline} before the release, so evalledger {package} can neither use nor upgrade it; "
            "rebuild it (a new database: `evalledger db reset --yes` for the embedded one, then `evalledger db migrate`)")


def ledger_message(versions: Versions) -> str:
    """Why this package refuses to write to the ledger (a pre-release's, or a newer evalledger's)."""
    if versions.folded:
        return pre_release_message(versions.package, versions.folded, min(versions.known))
    return newer_ledger_message(versions)


def refuse_newer_ledger(conn: psycopg.Connection) -> None:
    """Raise LedgerFromAPreRelease when a pre-release built the ledger, LedgerNewerThanPackage when
    a newer evalledger migrated it."""
    versions = ledger_versions(conn)
    if versions is not None and versions.folded:
        raise LedgerFromAPreRelease(ledger_message(versions))
    if versions is not None and versions.unknown:
        raise LedgerNewerThanPackage(newer_ledger_message(versions))


def refuse_pre_release_ledger(conn: psycopg.Connection, known: list[str]) -> None:
    """Before migrating: raise LedgerFromAPreRelease when a pre-release built the ledger (no
    migration of known upgrades it)."""
    versions = ledger_versions(conn, known)
    if versions is not None and versions.folded:
        raise LedgerFromAPreRelease(ledger_message(versions))
