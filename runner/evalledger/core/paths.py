"""Where the package's own files are: migrations, SQL, fixtures and templates ship inside it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PACKAGE = "evalledger"


def package_path(*parts: str, package: str = PACKAGE) -> Path:
    """A file or folder shipped inside a package, as a path (the package is installed unzipped)."""
    return Path(str(resources.files(package).joinpath(*parts)))


def read_package_text(*parts: str, package: str = PACKAGE) -> str:
    """The UTF-8 text of a file shipped inside a package."""
    return resources.files(package).joinpath(*parts).read_text("utf-8")


def migrations_dir() -> Path:
    """The folder of yoyo migrations (NNNN.name.sql)."""
    return package_path("migrations")
