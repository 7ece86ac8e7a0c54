"""The takes corpus: validate JSONL takes, load them into the database, sample them (db or fs).

A take is one JSON object per line with exactly these fields:
slug (no whitespace), kind (lowercase word: fact, take, bet, hunch...), holder, weight (0 to 1),
since (YYYY, YYYY-MM or YYYY-MM-DD), source, claim. Its identity is take_sha, the SHA-256 of
the seven fields, so the same take loaded twice, or read from a file and from the database, is
the same take. A sample is the n takes with the smallest md5("<seed>:<take_sha>"), presented
by (slug, take_sha): the same seed over the same takes gives the same sample, in SQL or here.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable

import psycopg
from psycopg.rows import class_row

from evalledger.core import reader
from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

QUERIES = Queries(__package__)

FIELDS = ("slug", "kind", "holder", "weight", "since", "source", "claim")
_KIND = re.compile(r"^[a-z][a-z0-9_-]*$")
_SINCE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


@dataclass(frozen=True)
class Take:
    """One take, as loaded or sampled."""

    slug: str
    kind: str
    holder: str
    weight: float
    since: str
    source: str
    claim: str

    @property
    def sha(self) -> str:
        """SHA-256 over the seven fields (weight as a float, so 0.80 and 0.8 are one take)."""
        canonical = json.dumps([self.slug, self.kind, self.holder, float(self.weight), self.since,
                                self.source, self.claim], ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def as_prompt_line(self, number: int) -> str:
        """The take as one JSON line for the judge: data, with <, > and & escaped so no take
        can close the block it sits in or pass for markup."""
        line = json.dumps({"n": number, "slug": self.slug, "kind": self.kind, "holder": self.holder,
                           "weight": float(self.weight), "since": self.since, "source": self.source,
                           "claim": self.claim}, ensure_ascii=False)
        return line.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _field_error(where: str, field: str, message: str) -> EvalledgerError:
    return EvalledgerError(f"{where}: {reader.json_path((field,))}: {message}")


def _text(where: str, obj: dict, field: str) -> str:
    value = obj.get(field)
    if not isinstance(value, str):
        raise _field_error(where, field, f"must be a string, got {json.dumps(value)}")
    if not value.strip():
        raise _field_error(where, field, "must not be blank")
    if "\x00" in value:
        raise _field_error(where, field, "must not contain NUL characters")
    return value


def parse_take(obj: Any, where: str) -> Take:
    """Validate one decoded line; raise an error naming where and the field."""
    if not isinstance(obj, dict):
        raise EvalledgerError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = [f for f in FIELDS if f not in obj]
    if missing:
        raise _field_error(where, missing[0], "missing")
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        raise _field_error(where, unknown[0], f"unknown field (a take has {', '.join(FIELDS)})")
    slug = _text(where, obj, "slug")
    if any(c.isspace() for c in slug):
        raise _field_error(where, "slug", f"must not contain whitespace, got {json.dumps(slug)}")
    kind = _text(where, obj, "kind")
    if not _KIND.match(kind):
        raise _field_error(where, "kind", f"must be a lowercase word such as fact, take, bet or hunch, got {json.dumps(kind)}")
    weight = obj["weight"]
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) \
            or not 0 <= weight <= 1:
        raise _field_error(where, "weight", f"must be a number from 0 to 1, got {json.dumps(weight)}")
    since = obj["since"]
    m = _SINCE.match(since) if isinstance(since, str) else None
    try:
        if m is None:
            raise ValueError
        dt.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
    except ValueError:
        raise _field_error(where, "since", f"must be a date YYYY, YYYY-MM or YYYY-MM-DD, got {json.dumps(since)}") from None
    return Take(slug=slug, kind=kind, holder=_text(where, obj, "holder"), weight=float(weight), since=since,
                source=_text(where, obj, "source"), claim=_text(where, obj, "claim"))


def read_lines(path: Path, *, progress: bool = False) -> Iterator[Take]:
    """Every take of a JSONL file (blank lines skipped), streamed through the door; the first bad
    line raises `FILE:LINE: $.x: ...`, with a count of the other bad lines (the file is read
    to its end first, so a caller that writes as it reads writes nothing it keeps)."""
    first: EvalledgerError | None = None
    bad = 0
    for number, text in reader.lines(path, "takes file", progress=f"reading {path}" if progress else None):
        if not text.strip():
            continue
        try:
            take = parse_take(reader.decode_json(text, str(path), number), f"{path}:{number}")
        except EvalledgerError as exc:
            bad += 1
            first = first or exc
            continue
        if first is None:
            yield take
    if first is not None:
        more = f" (and {bad - 1} more bad line{'s' if bad > 2 else ''})" if bad > 1 else ""
        raise EvalledgerError(first.format_message() + more)


def read_file(path: Path) -> list[Take]:
    """Every take of a JSONL file, as read_lines reads them."""
    return list(read_lines(path))


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            raise EvalledgerError(f"{path}: no *.jsonl files in this directory")
        return files
    return [path]


def read_path(path: Path) -> list[Take]:
    """The takes of a JSONL file, or of every *.jsonl file in a directory (by name), deduplicated."""
    unique: dict[str, Take] = {}
    for file in _files(path):
        for take in read_lines(file):
            unique.setdefault(take.sha, take)
    return list(unique.values())


def sample_path(path: Path, *, seed: int, limit: int, slug_prefix: str | None) -> list[Take]:
    """The sample from a JSONL file, or every *.jsonl file in a directory (by name): each take once
    (by its sha), the `limit` smallest by sample_key kept as they stream by, so memory follows the
    sample, not the files."""
    kept: list[tuple[str, str, int, Take]] = []  # a max-heap of the sample by (key, sha), negated
    seen: set[bytes] = set()
    order = 0
    for file in _files(path):
        for take in read_lines(file, progress=True):
            sha = take.sha
            digest = bytes.fromhex(sha)
            if digest in seen:
                continue
            seen.add(digest)
            if slug_prefix is not None and not take.slug.startswith(slug_prefix):
                continue
            order += 1
            entry = (_Desc(sample_key(seed, sha)), _Desc(sha), order, take)
            if len(kept) < limit:
                heapq.heappush(kept, entry)
            elif entry[:2] > kept[0][:2]:
                heapq.heapreplace(kept, entry)
    return _present([entry[3] for entry in kept])


class _Desc(str):
    """A string that sorts backwards (heapq keeps the smallest; the sample keeps the largest out)."""

    def __lt__(self, other):
        return str.__gt__(self, other)

    def __gt__(self, other):
        return str.__lt__(self, other)


def load(conn: psycopg.Connection, takes: Iterable[Take], batch: int = 1000) -> tuple[int, int]:
    """Insert takes in one transaction (the caller's), a batch at a time as they come; return
    (added, already present)."""
    added = seen = 0
    pending: list[dict] = []

    def flush() -> None:
        nonlocal added, seen
        if not pending:
            return
        with conn.cursor() as cur:
            cur.executemany(QUERIES["insert_take"], pending, returning=False)
            done = cur.rowcount
        added += done
        seen += len(pending) - done
        pending.clear()

    for take in takes:
        pending.append({"take_sha": take.sha, "slug": take.slug, "kind": take.kind, "holder": take.holder,
                        "weight": Decimal(repr(take.weight)), "since": take.since, "source": take.source,
                        "claim": take.claim})
        if len(pending) >= batch:
            flush()
    flush()
    return added, seen


def sample_key(seed: int, take_sha: str) -> str:
    """The sampling order of a take for a seed (the same expression as the SQL sample)."""
    return hashlib.md5(f"{seed}:{take_sha}".encode()).hexdigest()


def _present(takes: list[Take]) -> list[Take]:
    return sorted(takes, key=lambda t: (t.slug, t.sha))


def sample_takes(takes: Iterable[Take], *, seed: int, limit: int, slug_prefix: str | None) -> list[Take]:
    """The sample from takes read from files (no database)."""
    pool = [t for t in takes if slug_prefix is None or t.slug.startswith(slug_prefix)]
    pool.sort(key=lambda t: (sample_key(seed, t.sha), t.sha))
    return _present(pool[:limit])


def sample_db(conn: psycopg.Connection, *, seed: int, limit: int, slug_prefix: str | None) -> list[Take]:
    """The sample from the database's corpus."""
    with conn.cursor(row_factory=class_row(Take)) as cur:
        return _present(cur.execute(QUERIES["sample_takes"],
                                    {"prefix": slug_prefix, "seed": str(seed), "limit": limit}).fetchall())
