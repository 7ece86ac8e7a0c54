"""Named SQL queries, loaded from sql/queries.sql by their `-- name: x` lines."""

from __future__ import annotations

import functools
import re

from .migrate import REPO

QUERIES_FILE = REPO / "sql" / "queries.sql"
_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


@functools.cache
def load(path=QUERIES_FILE) -> dict[str, str]:
    """Every named query in the file, keyed by name."""
    parts = _NAME.split(path.read_text(encoding="utf-8"))
    return {name: body.strip().rstrip(";") for name, body in zip(parts[1::2], parts[2::2])}


def get(name: str) -> str:
    """The SQL of one named query."""
    return load()[name]
