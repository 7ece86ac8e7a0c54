"""Released migrations never change: migrations/released.sha256 lists each released migration with
the SHA-256 of its text, and tests/unit/test_released_migrations.py fails when one changes, goes
missing, or still includes a file.

A released migration is frozen: self-contained, its \\ir lines expanded in place, so the files of
sql/ and triggers/ (the current schema) may change without touching history; every migration of the
checkout is written self-contained (docs/development.md, "Migrations"). `make release-checksums MIGRATION=0001.baseline`
freezes a migration (expands its includes in place, the text that runs unchanged) and appends its
checksum to the list. Each line is `<sha256>  <file name>`, as sha256sum prints it; the list is
append-only. The checksum is of the expanded text, so freezing does not change it.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from evalledger.core.migrate import expand_includes

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "migrations" / "released.sha256"
_LINE = re.compile(r"^([0-9a-f]{64})  (\d{4}\.[\w.-]+\.sql)$")

# A line psql and expand_includes read as an include (a frozen migration has none).
_INCLUDE_LINE = re.compile(r"^\\ir\s", re.MULTILINE)


def checksum(migration: Path) -> str:
    """The SHA-256 of the migration as it runs: its text with every \\ir include expanded."""
    return hashlib.sha256(expand_includes(migration.resolve()).encode("utf-8")).hexdigest()


def entries(listing: Path = LIST) -> list[tuple[str, str]]:
    """(sha256, file name) per line of the list; a malformed line is an error naming it."""
    if not listing.exists():
        return []
    found = []
    for number, line in enumerate(listing.read_text(encoding="utf-8").splitlines(), 1):
        match = _LINE.match(line)
        if not match:
            raise ValueError(f"{listing.name}:{number}: not '<sha256>  NNNN.name.sql': {line!r}")
        found.append((match.group(1), match.group(2)))
    return found


def problems(listing: Path = LIST, migrations: Path = ROOT / "migrations") -> list[str]:
    """What is wrong with the released migrations: one sentence each, none when all is well."""
    found = []
    names = [name for _, name in entries(listing)]
    found += [f"{name}: listed twice in {listing.name}" for name in sorted({n for n in names if names.count(n) > 1})]
    for expected, name in entries(listing):
        path = migrations / name
        if not path.exists():
            found.append(f"{name}: released, but missing from {migrations.name}/")
        elif _INCLUDE_LINE.search(path.read_text(encoding="utf-8")):
            found.append(f"{name}: released, but still includes a file with \\ir: a released migration is "
                         "self-contained (make release-checksums freezes it)")
        elif (actual := checksum(path)) != expected:
            found.append(f"{name}: released with sha256 {expected}, now {actual}: a released migration "
                         "(or a file it includes) changed; write a new migration instead")
    return found


def freeze(migration: Path) -> None:
    """Expand the migration's \\ir lines in place: the same text runs, from one self-contained file."""
    migration.write_text(expand_includes(migration.resolve()), encoding="utf-8")


def append(name: str, listing: Path = LIST, migrations: Path = ROOT / "migrations") -> str:
    """Freeze migrations/<name>.sql (or <name>) and add it to the list; the line written."""
    path = migrations / (name if name.endswith(".sql") else f"{name}.sql")
    if not path.exists():
        raise SystemExit(f"release-checksums: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
                         "no such migration")
    if path.name in {n for _, n in entries(listing)}:
        raise SystemExit(f"release-checksums: {path.name} is already released")
    freeze(path)
    line = f"{checksum(path)}  {path.name}\n"
    with listing.open("a", encoding="utf-8") as out:
        out.write(line)
    return line


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: make release-checksums MIGRATION=NNNN.name")
    print(append(argv[0]), end="")


if __name__ == "__main__":
    main(sys.argv[1:])


# The first migration after the release, named here only: the upgrade and version tests build a
# ledger at the release (every migration sorting before it) and apply what came after.
FIRST_POST_RELEASE = "0101.panel-bounds"


def released_migrations() -> list[str]:
    """The ids of the migrations the release shipped: every one before FIRST_POST_RELEASE."""
    return sorted(p.stem for p in (ROOT / "migrations").glob("*.sql") if p.stem < FIRST_POST_RELEASE)


def post_release_migrations() -> list[str]:
    """The ids of the migrations since the release, in the order they apply."""
    return sorted(p.stem for p in (ROOT / "migrations").glob("*.sql") if p.stem >= FIRST_POST_RELEASE)


def migrations_of_the_release(into: Path) -> Path:
    """A migrations folder holding the release's migrations (frozen, so nothing beside them is
    read): a ledger as the release left it."""
    (into / "migrations").mkdir(parents=True)
    for name in released_migrations():
        (into / "migrations" / f"{name}.sql").write_text((ROOT / "migrations" / f"{name}.sql").read_text())
    return into / "migrations"
