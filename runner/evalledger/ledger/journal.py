"""The journal, its blocks and the ledger's tables, read back as the checks outside the database need them."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
from psycopg import sql

from evalledger.core.queries import Queries

from . import canon, check

QUERIES = Queries(__package__)
FETCH = 10_000


def prepare(conn: psycopg.Connection) -> None:
    """A session that reads the ledger as the checks outside the database do (before its first transaction)."""
    conn.execute(QUERIES["session"])


def shapes(conn: psycopg.Connection, tables: list[str] | None = None) -> dict[str, canon.Shape]:
    """The columns and key of each of tables the database has (by default the tables the package journals), by table."""
    from . import package

    columns: dict[str, list] = {}
    for table, *column in conn.execute(QUERIES["columns"], {"tables": package.journalled() if tables is None else tables}):
        columns.setdefault(table, []).append(column)
    return {table: canon.Shape.of(table, cols) for table, cols in columns.items()}


def rows(conn: psycopg.Connection, shape: canon.Shape, column: str | None = None, values: list | None = None) -> Iterator[tuple]:
    """The table's rows, their values in shape's column order (only those whose column is in values, if given)."""
    # numeric and jsonb as their text output, which is their canon-v1 form already (canon.AS_TEXT).
    names = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(c)) if c in shape.as_text
                               else sql.Identifier(c) for c in shape.columns)
    if column is None:
        query = sql.SQL(QUERIES["rows"]).format(columns=names, table=sql.Identifier(shape.table))
        params = None
    else:
        query = sql.SQL(QUERIES["rows_where"]).format(columns=names, table=sql.Identifier(shape.table),
                                                       column=sql.Identifier(column))
        params = {"values": values}
    with conn.cursor(name=f"rows_{shape.table}", binary=True) as cursor:
        canon.row_cursor_adapters(cursor, list(shape.enums))
        cursor.itersize = FETCH
        cursor.execute(query, params)
        yield from cursor


def identity(conn: psycopg.Connection) -> str:
    """The ledger's id."""
    return str(conn.execute(QUERIES["identity"]).fetchone()[0])


@dataclass
class Block:
    """One sealed block as stored: its header fields, what it sealed, and its hashes."""

    block_id: int
    canon: str
    lo_txid: int
    hi_txid: int
    entry_count: int
    first_entry_id: int
    last_entry_id: int
    leaves: bytes
    merkle_root: bytes
    previous_hash: bytes
    block_hash: bytes
    ledger_root: bytes
    sealed_at: str
    sealed_by: str

    def header(self) -> dict:
        """The header as canon-v1 hashes it (check.block_text)."""
        return {"block": self.block_id, "canon": self.canon, "entries": self.entry_count,
                "first_entry": self.first_entry_id, "hi_txid": self.hi_txid, "last_entry": self.last_entry_id,
                "lo_txid": self.lo_txid, "previous": self.previous_hash.hex(), "root": self.merkle_root.hex(),
                "sealed_at": str(self.sealed_at), "sealed_by": self.sealed_by}

    def header_hash(self) -> bytes:
        """The hash its header has now (what its block_hash must be)."""
        return check.sha256(check.block_text(self.header()).encode("utf-8"))

    def sealed_leaves(self) -> list[bytes]:
        """The entry leaves it sealed, in entry order."""
        return [self.leaves[i:i + 32] for i in range(0, len(self.leaves), 32)]


def blocks(conn: psycopg.Connection) -> list[Block]:
    """Every block, first to last."""
    with conn.cursor(binary=True) as cursor:
        canon.journal_cursor_adapters(cursor)
        return [Block(*row) for row in cursor.execute(QUERIES["blocks"])]


@dataclass
class Entry:
    """One journal entry as stored."""

    entry_id: int
    canon: str
    table: str
    op: str
    key: str
    rows: int
    rows_root: bytes
    row_leaves: bytes | None
    fingerprints: list[int] | None
    txid: int
    recorded_at: str

    def text(self) -> str:
        """Its canonical bytes (as text), what its leaf hashes."""
        return check.entry_text_of(self.canon, self.entry_id, self.key, self.op, str(self.recorded_at), self.rows,
                                   self.rows_root.hex(), self.table)

    def leaf(self) -> bytes:
        """Its leaf in its block's tree."""
        return check.leaf_hash(self.text().encode("utf-8"))

    def as_proof(self) -> dict:
        """The entry's fields as a proof carries them (check.entry_text hashes them back)."""
        return {"canon": self.canon, "entry": self.entry_id, "key": check.parse_json(self.key), "op": self.op,
                "recorded_at": str(self.recorded_at), "rows": self.rows, "rows_root": self.rows_root.hex(),
                "table": self.table}

    def row_keys(self) -> list[str]:
        """The key of each row it covers, as canonical text."""
        if self.rows == 1:
            return [self.key]
        return [check.canonical_json(k) for k in check.parse_json(self.key)]

    def row_leaf(self, index: int) -> bytes:
        """The leaf of its index-th row."""
        return self.rows_root if self.rows == 1 else self.row_leaves[32 * index:32 * index + 32]


def entries(conn: psycopg.Connection, query: str = "entries", params: dict | None = None) -> Iterator[Entry]:
    """Journal entries in entry order."""
    with conn.cursor(name="entries", binary=True) as cursor:
        canon.journal_cursor_adapters(cursor)
        cursor.itersize = FETCH
        cursor.execute(QUERIES[query], params)
        for row in cursor:
            yield Entry(*row)


def block_of(his: list[int], found: list[Block], txid: int) -> int | None:
    """The index in found of the block whose transaction range holds txid, or None (not sealed yet)."""
    i = bisect.bisect_right(his, txid)
    return i if i < len(found) and found[i].lo_txid <= txid < found[i].hi_txid else None
