"""Reading the ledger for people: a named query's rows with their column names."""

from __future__ import annotations

import psycopg
from psycopg.rows import dict_row


def fetch(conn: psycopg.Connection, query: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    """The column names and rows of one query, in the order the query gives them."""
    cur = conn.execute(query, params or {})
    return [c.name for c in cur.description], cur.fetchall()


def records(columns: list[str], rows: list[tuple]) -> list[dict]:
    """Rows as objects keyed by column name (the shape --json prints)."""
    return [dict(zip(columns, row)) for row in rows]


def dicts(conn: psycopg.Connection, query: str, params: dict | None = None) -> list[dict]:
    """The rows of one query as objects keyed by column name (what pages and prompts read)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, params or {}).fetchall()
