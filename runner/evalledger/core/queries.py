"""Named SQL queries: each suite's sql/<suite>/queries.sql, split on its `-- name: x` lines."""

from __future__ import annotations

import functools
import re

from .paths import sql_path

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    """Every named query in a queries file's text, keyed by name."""
    parts = _NAME.split(text)
    return {name: body.strip().rstrip(";") for name, body in zip(parts[1::2], parts[2::2])}


@functools.cache
def of(package: str) -> dict[str, str]:
    """The named queries of a package (a suite, evalledger.core or evalledger.web): sql/<suite>/queries.sql."""
    return parse(sql_path(package, "queries.sql").read_text("utf-8"))


class Queries:
    """One package's named queries: ``QUERIES["name"]`` is the SQL of the query called name."""

    def __init__(self, package: str):
        self.package = package

    def __getitem__(self, name: str) -> str:
        return of(self.package)[name]

    def names(self) -> list[str]:
        """Every query name in the file."""
        return list(of(self.package))


def get(name: str) -> str:
    """The SQL of one of the core's named queries."""
    return of("evalledger.core")[name]
