"""--recompute with code the database cannot change: the package's own functions, from the very files
the triggers run (sql/ and triggers/ of the installed package), installed into the verifying session's
temporary schema (pg_temp) for the check, each call of one of them pointed there. Nothing of the
database's own functions decides (but the per-table key functions journal_attach_v2 generates, which
only name the rows); the server binary that runs them is still trusted (docs/ledger.md).
"""

from __future__ import annotations

import functools
import re

import psycopg
from psycopg import sql

from evalledger.core import paths

from .journal import QUERIES

_FUNCTION = re.compile(r"^\s*CREATE (?:OR REPLACE )?FUNCTION evalledger\.(\w+)\s*\(", re.S)
_REPLACING = re.compile(r"^(\s*CREATE)\s+FUNCTION\b")
_DOLLAR = re.compile(r"\$([A-Za-z_]\w*)?\$")


def statements(text: str) -> list[str]:
    """The SQL statements of a file, split at semicolons outside quotes, dollar quotes and comments."""
    found, start, i, n = [], 0, 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if c == "'":
            i = text.find("'", i + 1) + 1 or n
            continue
        if c == "$":
            tag = _DOLLAR.match(text, i)
            if tag:
                end = text.find(tag.group(0), tag.end())
                i = n if end < 0 else end + len(tag.group(0))
                continue
        if c == ";":
            found.append(text[start:i])
            start = i + 1
        i += 1
    if text[start:].strip():
        found.append(text[start:])
    return found


@functools.cache
def package_functions() -> tuple[tuple[str, str], ...]:
    """(name, CREATE FUNCTION text) of every function the package's current files install, but trigger functions."""
    root = paths.database_root()
    made = []
    for folder in ("sql", "triggers"):
        for path in sorted((root / folder).rglob("*.sql")):
            for statement in statements(path.read_text("utf-8")):
                named = _FUNCTION.match(_strip_comments(statement))
                if named and not re.search(r"\bRETURNS\s+trigger\b", statement, re.I):
                    made.append((named.group(1), _strip_comments(statement).strip()))
    return tuple(made)


def _strip_comments(statement: str) -> str:
    """The statement without its leading comment lines."""
    lines = statement.splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines)


def in_temp(text: str, names: set[str]) -> str:
    """A function's text with it, and every call of a package function in it, in pg_temp instead of evalledger."""
    return re.sub(r"\bevalledger\.(\w+)(\s*\()", lambda m: (f"pg_temp.{m.group(1)}{m.group(2)}" if m.group(1) in names
                                                          else m.group(0)), text)


# The tables whose rows the recompute names by their journal key (`'table', evalledger.journal_key_v1(...`
# in the package's ledger_recompute_v3): their key functions are made in pg_temp the way journal_attach_v2 makes
# them, from the package's journal_source_v1.
_KEYED = re.compile(r"'(\w+)', evalledger\.journal_key_v1\(")


def keyed(functions: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The tables the package's recompute names rows of, in its order."""
    text = "\n".join(body for name, body in functions if name == "ledger_recompute_v3")
    return tuple(dict.fromkeys(_KEYED.findall(text)))


def install(conn: psycopg.Connection) -> int:
    """Install the package's functions into conn's temporary schema, in conn's transaction; how many."""
    functions = package_functions()
    names = {name for name, _ in functions} | {"journal_key_v1"}
    conn.execute(QUERIES["recompute_install_session"])
    for _, text in functions:
        conn.execute(_REPLACING.sub(r"\1 OR REPLACE FUNCTION", in_temp(text, names), count=1))
    tables = keyed(functions)
    for table in tables:
        body = conn.execute(QUERIES["recompute_key_source"], {"table": f"evalledger.{table}"}).fetchone()[0]
        conn.execute(sql.SQL(QUERIES["recompute_key_function"]).format(table=sql.Identifier(table),
                                                                       body=sql.Literal(in_temp(body, names))))
    return len(functions) + len(tables)
