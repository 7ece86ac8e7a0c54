"""Rubric rows: a suite's policy as data, read by version (or the newest)."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg.rows import class_row

from . import queries


@dataclass(frozen=True)
class Rubric:
    """One immutable rubric row of a suite."""

    rubric_id: int
    version: str
    fingerprint: str
    definition: dict

    @property
    def dims(self) -> list[str]:
        """The dimension keys, in the rubric's order."""
        return [d["key"] for d in self.definition["dimensions"]]


def find(conn: psycopg.Connection, suite: str, version: str | None = None) -> Rubric | None:
    """The suite's rubric of that version, else its active one; None when there is none."""
    with conn.cursor(row_factory=class_row(Rubric)) as cur:
        return cur.execute(queries.get("rubric"), {"suite": suite, "version": version}).fetchone()
