"""canon-v1 of a database row, computed here from the values psycopg reads, never by the database.

The journal's triggers compute the same form in SQL (sql/core/journal_source_v1.sql); verify and
proofs compute it again here, so a database whose functions were rewritten cannot vouch for its
own rows. The rules (docs/ledger.md, "canon-v1") per column type:

  boolean                         true / false
  smallint, integer, bigint       the decimal integer
  numeric                         its exact decimal text, scale kept (0.9500); NaN and infinities: none
  double precision                17 significant digits, correctly rounded (C's %.16e: it reads back
                                  as the same double), written out in full (0.1 -> 0.10000000000000001,
                                  220 -> 220.00000000000000, -0 -> 0.0000000000000000)
  text, varchar, char(n), name,   a JSON string (char(n) keeps its padding)
  enums, uuid
  timestamp with time zone        a JSON string in UTC, six fractional digits: 2026-03-01T09:30:00.000000Z
                                  ("infinity", "-infinity"); years 1-9999 only
  jsonb                           canonical JSON (check.canonical_json)
  arrays of the scalar types      a JSON array (nested for several dimensions; bounds are not kept)

A row is the JSON object of its non-NULL columns; its key is the object of its primary key's columns.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal

from psycopg.adapt import Loader

from .check import NotCanonical, canonical_json, decimal_text

_TEXTS = {"text", "varchar", "bpchar", "name"}
_INTS = {"int2", "int4", "int8"}
_ARRAY_ELEMENTS = _TEXTS | _INTS | {"bool"}
_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?\+00")


class Stamp(str):
    """A timestamptz already in canon-v1's text (the loader below makes it)."""


class Unwritable(str):
    """A stored value canon-v1 has no form for (a timestamp outside years 1-9999)."""


class StampLoader(Loader):
    """timestamptz as canon-v1's text, from the server's ISO output in UTC (the session sets both)."""

    def load(self, data) -> str:
        text = bytes(data).decode("ascii")
        if text in ("infinity", "-infinity"):
            return Stamp(text)
        match = _STAMP.fullmatch(text)
        if not match:
            return Unwritable(text)
        y, mo, d, h, mi, s, frac = match.groups()
        return Stamp(f"{y}-{mo}-{d}T{h}:{mi}:{s}.{(frac or '').ljust(6, '0')}Z")


class _JsonNull:
    """A jsonb value that is JSON's null: a value, unlike SQL's NULL (which canon-v1 leaves out)."""

    def __repr__(self) -> str:
        return "JSON_NULL"


JSON_NULL = _JsonNull()


class JsonLoader(Loader):
    """jsonb with every number kept exactly (a fraction as a Decimal, never a float), and JSON's null
    told apart from SQL's NULL."""

    def load(self, data):
        value = json.loads(bytes(data).decode("utf-8"), parse_float=Decimal)
        return JSON_NULL if value is None else value


def _json(value) -> str:
    return "null" if value is JSON_NULL else canonical_json(value)


def prepare(conn) -> None:
    """Set a connection up to read rows for canon-v1: UTC ISO timestamps, exact floats and JSON."""
    for name, loader in (("timestamptz", StampLoader), ("jsonb", JsonLoader)):
        conn.adapters.register_loader(name, loader)


def float_text(number: float) -> str:
    """A double's canon-v1 number: 17 significant digits, correctly rounded (%.16e), written out in full."""
    if number != number or number in (float("inf"), float("-inf")):
        raise NotCanonical(f"{number} is not a finite number")
    return decimal_text(Decimal(format(number, ".16e")))


def _stamp(value) -> str:
    if isinstance(value, Unwritable) or not isinstance(value, Stamp):
        raise NotCanonical(f"timestamp {value} lies outside years 1 to 9999")
    return f'"{value}"'


def _writer(typ: str, typtype: str, elem: str | None):
    """The function that writes one value of a column of this type, or None: no form in canon-v1."""
    if typ == "bool":
        return lambda v: "true" if v else "false"
    if typ in _INTS:
        return str
    if typ == "numeric":
        return decimal_text
    if typ == "float8":
        return float_text
    if typ in _TEXTS or typtype == "e":
        return lambda v: json.dumps(v, ensure_ascii=False)
    if typ == "uuid":
        return lambda v: f'"{v}"'
    if typ == "timestamptz":
        return _stamp
    if typ == "jsonb":
        return _json
    if elem in _ARRAY_ELEMENTS:
        return canonical_json
    return None


@dataclass(frozen=True)
class Shape:
    """What canon-v1 needs of a table: its columns in code-point order, how each is written, its key."""

    table: str
    columns: tuple[str, ...]
    writers: tuple
    prefixes: tuple[str, ...]
    key: tuple[int, ...]

    @classmethod
    def of(cls, table: str, columns: list[tuple]) -> Shape:
        """From (column, type name, type kind, array element type, in primary key) rows in code-point order."""
        names, writers, key = [], [], []
        for i, (name, typ, typtype, elem, in_key) in enumerate(columns):
            writer = _writer(typ, typtype, elem)
            if writer is None:
                raise NotCanonical(f"canon-v1 has no form for column {table}.{name} of type {typ}")
            names.append(name)
            writers.append(writer)
            if in_key:
                key.append(i)
        return cls(table, tuple(names), tuple(writers), tuple(f"{json.dumps(n, ensure_ascii=False)}:" for n in names),
                   tuple(key))

    def parts(self, row) -> list[str | None]:
        """Each column's '"name":value', None where the value is NULL (canon-v1 leaves it out)."""
        return [None if v is None else p + w(v) for p, w, v in zip(self.prefixes, self.writers, row)]

    def key_text(self, parts: list[str | None]) -> str:
        """The row's key: the canonical object of its primary key's columns."""
        return "{" + ",".join(parts[i] for i in self.key) + "}"

    def key_value(self, row) -> dict:
        """The row's key as a value (for proofs)."""
        return json.loads(self.key_text(self.parts(row)), parse_float=Decimal)


def row_text(parts: list[str | None]) -> str:
    """A row's canon-v1 text from its parts: the object of its non-NULL columns."""
    return "{" + ",".join(p for p in parts if p is not None) + "}"
