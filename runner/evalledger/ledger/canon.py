"""canon-v1 of a database row, computed here from the values the server sends, never by a database function.

The journal's triggers compute the same form in SQL (sql/core/journal_source_v1.sql); verify and
proofs compute it again here, so a database whose functions were rewritten cannot vouch for its own
rows. Rows are read in PostgreSQL's binary format by psycopg's own loaders, and each value is
written as canon-v1 here. The rules (docs/ledger.md, "canon-v1") per column type:

  boolean                         true / false
  smallint, integer, bigint       the decimal integer
  numeric                         its exact decimal text, scale kept (0.9500); NaN and infinities: none
  double precision                17 significant digits, correctly rounded (C's %.16e: it reads back
                                  as the same double), written out in full (0.1 -> 0.10000000000000001,
                                  220 -> 220.00000000000000, -0 -> 0.0000000000000000)
  text, varchar, char(n), name,   a JSON string (char(n) keeps its padding), escaped as JSON requires
  enums, uuid                     and nothing more
  timestamp with time zone        a JSON string in UTC, six fractional digits: 2026-03-01T09:30:00.000000Z
                                  ("infinity", "-infinity"); years 1-9999 only
  jsonb                           as PostgreSQL's jsonb writes itself (jsonb_text below: keys shorter
                                  first, then bytewise; ", " and ": " between items)
  arrays of the scalar types      a JSON array (nested for several dimensions; bounds are not kept)

A row is the JSON object of its non-NULL columns in code-point order of their names, with no
whitespace; its key is the object of its primary key's columns.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from decimal import Decimal
from json.encoder import encode_basestring

import psycopg
from psycopg import adapt, pq

from .check import NotCanonical, canonical_json, decimal_text

_TEXTS = {"text", "varchar", "bpchar", "name"}
_INTS = {"int2", "int4", "int8"}
_ARRAY_ELEMENTS = _TEXTS | _INTS | {"bool"}
_EPOCH = datetime.date(2000, 1, 1).toordinal()  # PostgreSQL's binary timestamps count from here
_DAY = 86_400_000_000
_INFINITY = 2**63 - 1


def float_text(number: float) -> str:
    """A double's canon-v1 number: 17 significant digits, correctly rounded (%.16e), written out in full."""
    if number != number or number in (float("inf"), float("-inf")):
        raise NotCanonical(f"{number} is not a finite number")
    return decimal_text(Decimal(format(number, ".16e")))


_DAYS: dict[int, str | None] = {}


def _day(days: int) -> str | None:
    """'YYYY-MM-DD' of a day counted from 2000-01-01, None outside years 1-9999 (remembered: rows share days)."""
    if days not in _DAYS:
        try:
            day = datetime.date.fromordinal(_EPOCH + days)
            _DAYS[days] = f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
        except ValueError:
            _DAYS[days] = None
    return _DAYS[days]


def stamp_text(micros: int) -> str | None:
    """A binary timestamptz (microseconds since 2000-01-01 UTC) as canon-v1's text, unquoted; None: unwritable."""
    if micros == _INFINITY:
        return "infinity"
    if micros == -_INFINITY - 1:
        return "-infinity"
    days, rest = divmod(micros, _DAY)
    day = _DAYS[days] if days in _DAYS else _day(days)
    if day is None:
        return None
    seconds, us = divmod(rest, 1_000_000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{day}T{hours:02}:{minutes:02}:{seconds:02}.{us:06}Z"


def jsonb_text(value) -> str:
    """A JSON value as PostgreSQL's jsonb writes it (jsonb_out): object keys shorter first (in UTF-8
    bytes), then bytewise; ", " between items and ": " after keys; strings escaped as JSON requires;
    numbers as their exact decimal text. (Verify takes the server's own text; this writes it from a value.)"""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode("utf-8")), k.encode("utf-8")))
        return "{" + ", ".join(f"{encode_basestring(k)}: {jsonb_text(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(jsonb_text(v) for v in value) + "]"
    return canonical_json(value)


# -- reading rows: values in binary through psycopg's own (C) loaders, then each written as canon-v1 --
# numeric and jsonb come as their text output instead, which is their canonical form already (every
# digit of the numeric, jsonb as it writes itself); a timestamptz as its microseconds, a uuid as its
# bytes, so that no value needs a loader of ours, only a writer.


def _c_loader(type_name: str):
    """The loader psycopg itself uses for a type's binary form (its C one, where it has one)."""
    return psycopg.adapters.get_loader(psycopg.adapters.types[type_name].oid, pq.Format.BINARY)


def _number(text: str) -> str:
    if text in ("NaN", "Infinity", "-Infinity"):
        raise NotCanonical(f"the number {text} is not finite")
    return text


def _uuid(raw: bytes) -> str:
    h = raw.hex()
    return f'"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"'


def _stamp(micros: int) -> str:
    text = stamp_text(micros)
    if text is None:
        raise NotCanonical(f"the timestamp {micros} microseconds from 2000 lies outside years 1-9999")
    return f'"{text}"'


_DATE_INFINITY = 2**31 - 1  # PostgreSQL's binary date: days from 2000-01-01, infinity the int4 extremes


def _date(days: int) -> str:
    if days == _DATE_INFINITY:
        return '"infinity"'
    if days == -_DATE_INFINITY - 1:
        return '"-infinity"'
    day = _DAYS[days] if days in _DAYS else _day(days)
    if day is None:
        raise NotCanonical(f"the date {days} days from 2000 lies outside years 1-9999")
    return f'"{day}"'


def _same(text: str) -> str:
    return text


WRITERS = {"bool": lambda v: "true" if v else "false", "int2": str, "int4": str, "int8": str, "numeric": _number,
           "float8": float_text, "text": encode_basestring, "varchar": encode_basestring, "bpchar": encode_basestring,
           "name": encode_basestring, "uuid": _uuid, "timestamptz": _stamp, "date": _date, "jsonb": _same}
# Columns read as their text output (SELECT column::text), and the types read through another's loader.
AS_TEXT = {"numeric", "jsonb"}


def row_cursor_adapters(cursor, enum_oids: list[int]) -> None:
    """Make a binary cursor load timestamptz as its microseconds, a date as its days, uuid as its bytes, enums as text."""
    cursor.adapters.register_loader("timestamptz", _c_loader("int8"))
    cursor.adapters.register_loader("date", _c_loader("int4"))
    cursor.adapters.register_loader("uuid", _c_loader("bytea"))
    for oid in enum_oids:
        cursor.adapters.register_loader(oid, _c_loader("text"))


class StampBare(adapt.Loader):
    """A timestamptz as canon-v1's text without the quotes (the journal's own recorded_at and sealed_at)."""

    format = pq.Format.BINARY

    def load(self, data) -> str:
        return stamp_text(int.from_bytes(data, "big", signed=True)) or "unwritable"


def journal_cursor_adapters(cursor) -> None:
    """Make a binary cursor load the journal's timestamps as canon-v1's bare text."""
    cursor.adapters.register_loader("timestamptz", StampBare)


@dataclass(frozen=True)
class Shape:
    """What canon-v1 needs of a table: its columns in code-point order, how each is read and written, its key."""

    table: str
    columns: tuple[str, ...]
    as_text: frozenset[str]
    prefixes: tuple[str, ...]
    writers: tuple
    key: tuple[int, ...]
    enums: tuple[int, ...]

    @classmethod
    def of(cls, table: str, columns: list[tuple]) -> Shape:
        """From (column, type name, type kind, array element type, in primary key, type oid) rows in code-point order."""
        names, writers, key, enums, as_text = [], [], [], set(), set()
        for i, (name, typ, typtype, elem, in_key, oid) in enumerate(columns):
            if typtype == "e":
                enums.add(oid)
                writer = encode_basestring
            elif elem in _ARRAY_ELEMENTS:
                writer = canonical_json
            elif typ in WRITERS:
                writer = WRITERS[typ]
                if typ in AS_TEXT:
                    as_text.add(name)
            else:
                raise NotCanonical(f"canon-v1 has no form for column {table}.{name} of type {typ}")
            names.append(name)
            writers.append(writer)
            if in_key:
                key.append(i)
        return cls(table, tuple(names), frozenset(as_text), tuple(f"{encode_basestring(n)}:" for n in names),
                   tuple(writers), tuple(key), tuple(sorted(enums)))

    def parts(self, row) -> list[str | None]:
        """Each column's '"name":value', None where the value is NULL (canon-v1 leaves it out); NotCanonical,
        naming the column, for a value canon-v1 has no form for."""
        try:
            return [None if v is None else p + w(v) for p, w, v in zip(self.prefixes, self.writers, row)]
        except NotCanonical:
            for name, writer, value in zip(self.columns, self.writers, row):
                try:
                    value is None or writer(value)
                except NotCanonical as exc:
                    raise NotCanonical(f"column {name}: {exc}") from None
            raise

    def key_text(self, parts: list[str | None]) -> str:
        """The row's key: the canonical object of its primary key's columns."""
        return "{" + ",".join(parts[i] for i in self.key) + "}"

    def key_value(self, row) -> dict:
        """The row's key as a value (for proofs)."""
        return json.loads(self.key_text(self.parts(row)), parse_float=Decimal)


def row_text(parts: list[str | None]) -> str:
    """A row's canon-v1 text from its parts: the object of its non-NULL columns."""
    return "{" + ",".join(p for p in parts if p is not None) + "}"
