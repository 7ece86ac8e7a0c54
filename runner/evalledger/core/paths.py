"""Where evalledger's own files are: the database side beside the package, the rest inside it.

The database side (migrations/: the history; triggers/<suite>/ and sql/<suite>/: the current
schema, one file per installed object, built whole by sql/schema.sql) sits at the top of a checkout,
next to runner/, and a built wheel carries the same three folders as evalledger/postgres/. Either
way they stay side by side, so sql/schema.sql's relative ``\\ir`` lines reach the same files in
both. Fixtures, templates and JSON Schemas ship inside each Python package.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

PACKAGE = "evalledger"
# The three folders of the database side, in the order a reader meets them.
DATABASE_FOLDERS = ("migrations", "triggers", "sql")


def package_path(*parts: str, package: str = PACKAGE) -> Path:
    """A file or folder shipped inside a package, as a path (the package is installed unzipped)."""
    return Path(str(resources.files(package).joinpath(*parts)))


def read_package_text(*parts: str, package: str = PACKAGE) -> str:
    """The UTF-8 text of a file shipped inside a package."""
    return resources.files(package).joinpath(*parts).read_text("utf-8")


@functools.cache
def database_root() -> Path:
    """The folder holding migrations/, triggers/ and sql/: the wheel's evalledger/postgres/, else
    the checkout's top level (an editable install or a test run from the source tree)."""
    installed = package_path("postgres")
    checkout = package_path().parent.parent
    for root in (installed, checkout):
        if all((root / folder).is_dir() for folder in DATABASE_FOLDERS):
            return root
    raise FileNotFoundError(f"evalledger's SQL is in neither {installed} nor {checkout}: the installation is incomplete")


def migrations_dir() -> Path:
    """The folder of yoyo migrations (NNNN.name.sql)."""
    return database_root() / "migrations"


def suite_of(package: str) -> str:
    """The folder name a Python package's SQL lives under: evalledger.suites.brain_eval is
    brain_eval, evalledger.core is core, evalledger.web is web."""
    parts = package.split(".")
    if parts[0] != PACKAGE or len(parts) < 2:
        raise ValueError(f"{package} is not one of evalledger's packages")
    return parts[-1]


def sql_path(package: str, name: str) -> Path:
    """A file of a package's sql/<suite>/ folder (its views, functions and queries.sql)."""
    return database_root() / "sql" / suite_of(package) / name


def trigger_path(package: str, name: str) -> Path:
    """A file of a package's triggers/<suite>/ folder (the functions that run as triggers)."""
    return database_root() / "triggers" / suite_of(package) / name
