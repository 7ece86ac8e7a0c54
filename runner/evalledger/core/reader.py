"""The door: one reader per input format (text, JSON, JSONL, CSV) for every file the CLI reads.

Each reader refuses, in one line naming ``FILE:LINE: $.path``, what no ledger field can hold and
what a person did not mean: text that is not UTF-8 (the line of the first bad byte), a NUL, a
lone surrogate, a JSON document nested deeper than MAX_DEPTH or larger than MAX_DOCUMENT_BYTES,
a key (or a CSV column) given twice, NaN and Infinity, an integer past a bigint, a string that
reads as a date or a timestamp and is none (2026-13-45). A UTF-8 byte-order mark is dropped and
CRLF line ends read as LF, so a file saved by Excel or Notepad reads as the same text. JSONL and
CSV stream line by line, so memory stays flat at any size, with a progress bar on a terminal.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, BinaryIO, Callable

from .errors import EvalledgerError

MAX_DEPTH = 64
MAX_DOCUMENT_BYTES = 64 * 2**20
MAX_LINE_BYTES = 8 * 2**20
BIGINT = (-(2**63), 2**63 - 1)
BOM = "\ufeff"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}(?::?\d{2})?)?",
                        re.IGNORECASE)
_WS = re.compile(r"[ \t\n\r]*")


class InputError(EvalledgerError):
    """A file (or stdin) refused at the door: one line, FILE:LINE: $.path: what is wrong. file,
    line, at (a JSONPath or a column) and detail are its parts, for a caller that lists problems."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, at: str | None = None,
                 detail: str | None = None) -> None:
        super().__init__(message)
        self.file, self.line, self.at, self.detail = file, line, at, detail


def json_path(path) -> str:
    """A path of keys and indexes as a JSONPath: $.questions[3].pass_criteria (a path of more than
    ten steps shows its first four and its last two)."""
    path = tuple(path)
    if len(path) > 10:
        return json_path(path[:4]) + "..." + json_path(path[-2:])[1:]
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out


def place(name: str, line: int | None, path=()) -> str:
    """FILE:LINE, then $.path when there is one."""
    at = f"{name}:{line}" if line is not None else name
    return f"{at}: {json_path(path)}" if path else at


# -- text ----------------------------------------------------------------------------------------


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def decode(data: bytes, name: str, first_line: int = 1) -> str:
    """UTF-8 bytes as text (a leading BOM dropped), or InputError naming the line and column of the
    first byte that is not UTF-8, or of a NUL."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[:exc.start].decode("utf-8", "replace")
        line = first_line + good.count("\n")
        column = len(good) - (good.rfind("\n") + 1) + 1
        raise InputError(f"{name}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02X} at column {column}): "
                         "save the file as UTF-8") from None
    if first_line == 1 and text.startswith(BOM):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError(f"{name}:{first_line - 1 + _line_of(text, nul)}: a NUL character, which no text field "
                         "can hold")
    return text


def _opened(path: Path, what: str) -> BinaryIO:
    """path open for reading, or the one line that says why it cannot be."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _read_bytes(path: Path, what: str, limit: int | None) -> bytes:
    with _opened(path, what) as handle:
        try:
            data = handle.read(limit + 1) if limit is not None else handle.read()
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if limit is not None and len(data) > limit:
        raise InputError(f"{path}: larger than {limit // 2**20} MiB: a {what} is read whole, and this one is too "
                         "big to be one")
    return data


def read_text(path: Path, what: str = "file") -> str:
    """A text file the user named: UTF-8 (a BOM dropped), CRLF and CR read as LF, no NUL."""
    text = decode(_read_bytes(Path(path), what, MAX_DOCUMENT_BYTES), str(path))
    return text.replace("\r\n", "\n").replace("\r", "\n")


# -- JSON values ---------------------------------------------------------------------------------


class _Twice(dict):
    """An object that named a key twice (json's hook keeps the last; the door refuses it)."""

    twice: str = ""


_decoding = threading.local()


def _pairs(pairs: list) -> dict:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    _decoding.twice = True
    seen = set()
    for key, _ in pairs:
        if key in seen:
            twice = _Twice(found)
            twice.twice = key
            return twice
        seen.add(key)
    return found  # pragma: no cover


class _Refused(ValueError):
    """A number json's hooks refuse; token is how the text spells it (to find its line)."""

    def __init__(self, message: str, token: str) -> None:
        super().__init__(message)
        self.token = token


def _constant(name: str):
    raise _Refused(f"{name} is not a number (JSON has no NaN or Infinity)", name)


def _int(text: str) -> int:
    # Only for an integer too long to be a bigint (past 4,300 digits Python would refuse to read it).
    if len(text.lstrip("-")) > 19:
        shown = text if len(text) <= 24 else text[:24] + "..."
        raise _Refused(f"the integer {shown} is past the range a ledger field holds (a 64-bit integer)", text)
    return int(text)


# Numbers are read by json's C scanner; their range is checked in check_value, where the path is known.
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_problem(value: str) -> str | None:
    if "\x00" in value:
        return "a NUL character, which no text field can hold"
    if _SURROGATE.search(value):
        return "a lone surrogate (half of a UTF-16 pair), which is not text"
    if len(value) >= 10 and value[:4].isdigit():
        if _DATE.fullmatch(value):
            try:
                date.fromisoformat(value)
            except ValueError:
                return f"{json.dumps(value)} is not a date (YYYY-MM-DD)"
        elif (m := _TIMESTAMP.fullmatch(value)):
            try:
                datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
            except ValueError:
                return f"{json.dumps(value)} is not a timestamp (ISO 8601)"
    return None


def check_value(value: Any) -> tuple[tuple, str] | None:
    """The first thing the door refuses in a decoded JSON value, as (path, message), or None."""
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return path, f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, dict):
            if isinstance(item, _Twice):
                return (*path, item.twice), f"key {json.dumps(item.twice)} given twice in one object"
            for key, child in reversed(item.items()):
                problem = _text_problem(key)
                if problem:
                    return (*path, key), f"in a key: {problem}"
                stack.append((child, (*path, key)))
        elif isinstance(item, list):
            stack.extend((child, (*path, i)) for i, child in reversed(list(enumerate(item))))
        elif isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                return path, problem
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return path, "a number past the range of a float"
        elif isinstance(item, int) and not isinstance(item, bool) and not BIGINT[0] <= item <= BIGINT[1]:
            return path, f"the integer {item} is past the range a ledger field holds (a 64-bit integer)"
    return None


def json_lines(text: str) -> dict[tuple, int]:
    """The line each value of a (valid) JSON text starts on, keyed by its path of keys and indexes."""
    found: dict[tuple, int] = {}
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(index: int) -> int:
        lo, hi = 0, len(newlines)
        while lo < hi:
            mid = (lo + hi) // 2
            if newlines[mid] < index:
                lo = mid + 1
            else:
                hi = mid
        return lo + 1

    def skip(index: int) -> int:
        return _WS.match(text, index).end()

    # An explicit stack, not recursion: a document is checked for depth after it is read.
    index = skip(0)
    todo: list = [("value", ())]
    containers: list = []
    while todo:
        kind, path = todo.pop()
        index = skip(index)
        if kind == "value":
            found[path] = line_of(index)
            opener = text[index]
            if opener in "{[":
                index = skip(index + 1)
                closer = "}" if opener == "{" else "]"
                if text[index] == closer:
                    index += 1
                    continue
                containers.append([opener, path, 0])
                todo.append(("next", path))
                todo.append(("member", path))
            else:
                index = json.JSONDecoder().raw_decode(text, index)[1]
        elif kind == "member":
            opener, at, position = containers[-1]
            if opener == "{":
                key, index = json.decoder.scanstring(text, index + 1)
                index = skip(index) + 1  # the colon
                todo.append(("value", (*at, key)))
            else:
                todo.append(("value", (*at, position)))
                containers[-1][2] += 1
        else:  # "next": a comma and another member, or the closer
            if text[index] == ",":
                index += 1
                todo.append(("next", path))
                todo.append(("member", path))
            else:
                index += 1
                containers.pop()
    return found


def _deep_line(text: str) -> int:
    """The line where a JSON text first goes deeper than MAX_DEPTH (strings skipped)."""
    depth, in_string, escaped = 0, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return _line_of(text, index)
        elif char in "]}":
            depth -= 1
    return 1


def _float(text: str) -> float:
    # Only for a text that may spell a number too near zero for a float (a negative exponent of
    # three digits, or a run of 20 digits): read as 0.0 it would enter the ledger as another number.
    value = float(text)
    if value == 0.0 and any(digit in "123456789" for digit in text.lower().partition("e")[0]):
        shown = text if len(text) <= 24 else text[:24] + "..."
        raise _Refused(f"{shown} is nearer to zero than a float holds (it would be read as 0)", text)
    return value


_SLOW_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_int,
                                 parse_float=_float)


def _decode_slowly(text: str, name: str, line: int | None) -> Any:
    """decode_json for a text holding a run of 20 digits or more, or a negative exponent of three
    digits (maybe in a string): integers are read by a hook that refuses one too long before Python
    reads it, and numbers by one that refuses one a float would read as 0."""
    try:
        value = _SLOW_DECODER.decode(text)
    except _Refused as exc:
        raise _refused(exc, text, name, line) from None
    return _checked(value, text, name, line)


class _Spot:
    """Where a refused number stood, in a second read that lets it through to find its path."""


def _spot_of(value: Any, spot: _Spot, path: tuple = ()) -> tuple | None:
    if value is spot:
        return path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _spot_of(item, spot, (*path, key))
        if found is not None:
            return found
    return None


def _refused(exc: _Refused, text: str, name: str, line: int | None) -> InputError:
    """A number a hook refused, named by FILE:LINE: $.path: the text is read again with the refused
    spelling standing as a marker, whose path (the first, in document order) is the field."""
    spot = _Spot()
    try:
        marked = json.JSONDecoder(parse_constant=lambda _name: spot,
                                  parse_int=lambda t: spot if t == exc.token else int(t),
                                  parse_float=lambda t: spot if t == exc.token else float(t)).decode(text)
        path = _spot_of(marked, spot) or ()
    except (ValueError, RecursionError):
        path = ()
    if line is None:
        lines = json_lines(text) if path else {}
        found = path
        while found and found not in lines:
            found = found[:-1]
        line = lines[found] if found else _line_of(text, max(text.find(exc.token), 0))
    return InputError(f"{place(name, line, path)}: {exc}", file=name, line=line, at=json_path(path) if path else None,
                      detail=str(exc))


def decode_json(text: str, name: str, line: int | None = None) -> Any:
    """One JSON text (a document, or one JSONL line: `line` is its number) as a value the door
    lets in, or InputError naming where it is refused."""
    _decoding.twice = False
    folded = text.translate(_DIGITS)
    try:
        if "0" * 20 in folded or "e-000" in folded or "E-000" in folded:
            # maybe a huge integer, or a number too near zero: refused by its own spelling
            return _decode_slowly(text, name, line)
        value, end = _DECODER.raw_decode(text, _WS.match(text, 0).end())
        extra = _WS.match(text, end).end()
        if extra != len(text):
            raise json.JSONDecodeError("extra text after the JSON value", text, extra)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise InputError(f"{name}:{at}: column {exc.colno}: not JSON: {exc.msg}", file=name, line=at,
                         at=f"column {exc.colno}", detail=f"not JSON: {exc.msg}") from None
    except _Refused as exc:  # from a hook: NaN, Infinity, a number out of range
        raise _refused(exc, text, name, line) from None
    except RecursionError:
        raise InputError(f"{name}:{line or _deep_line(text)}: nested deeper than {MAX_DEPTH} levels") from None
    return _checked(value, text, name, line)


# What in a JSON text may hide something the door refuses: an escape (a NUL or a surrogate), a
# string that starts like a date, a long run of digits, a big exponent. A text with none of them,
# no key twice and too few brackets to nest past MAX_DEPTH needs no walk of its values. Digits are
# folded to 0 first, so each test is a plain substring search (a regex here costs more than the
# JSON parse itself).
_DIGITS = str.maketrans("123456789", "000000000")
_HINTS = ('"0000-00-00', "0" * 19, "e000", "e+000", "e-000", "E000", "E+000", "E-000")


def _needs_walk(text: str, folded: str, twice: bool) -> bool:
    return (twice or "\\u" in text or text.count("[") + text.count("{") > MAX_DEPTH
            or any(hint in folded for hint in _HINTS))


def _checked(value: Any, text: str, name: str, line: int | None, folded: str | None = None) -> Any:
    twice = getattr(_decoding, "twice", False)
    _decoding.twice = False
    if not _needs_walk(text, text.translate(_DIGITS) if folded is None else folded, twice):
        return value
    problem = check_value(value)
    if problem is not None:
        path, message = problem
        if line is None:
            lines = json_lines(text)
            found = path
            while found not in lines:
                found = found[:-1]
            line = lines[found]
        raise InputError(f"{place(name, line, path)}: {message}", file=name, line=line, at=json_path(path),
                         detail=message)
    return value


@dataclass
class Document:
    """A JSON document read whole: its value, and where each of its values is (for messages)."""

    name: str
    text: str
    value: Any
    _lines: dict | None = None

    def line(self, path=()) -> int:
        """The line the value at path starts on (its nearest parent's, for a path the document lacks)."""
        if self._lines is None:
            self._lines = json_lines(self.text)
        found = tuple(path)
        while found not in self._lines:
            found = found[:-1]
        return self._lines[found]

    def where(self, *path) -> str:
        """FILE:LINE: $.path of a value."""
        return place(self.name, self.line(path), path)

    def refuse(self, path, message: str) -> InputError:
        """The error naming a value of this document."""
        return InputError(f"{self.where(*path)}: {message}")


def read_json(path: Path, what: str = "file") -> Document:
    """A JSON document in a file the user named, read whole (at most MAX_DOCUMENT_BYTES)."""
    text = decode(_read_bytes(Path(path), what, MAX_DOCUMENT_BYTES), str(path))
    return Document(str(path), text, decode_json(text, str(path)))


def parse_json(text: str, name: str) -> Document:
    """A JSON document already in memory (a BOM dropped), checked like a file."""
    text = text.removeprefix(BOM)
    return Document(name, text, decode_json(text, name))



def schema_problems(validator, document: Any) -> list[tuple[tuple, str]]:
    """Where document breaks the JSON Schema validator holds, in the validator's order: (the path of
    each value, one short line saying what is wrong with it), for Document.refuse."""
    problems = []
    for error in validator.iter_errors(document):
        if error.validator == "additionalProperties":
            message = error.message
        elif error.validator == "enum":
            message = f"{json.dumps(error.instance)[:60]} is not one of {', '.join(map(str, error.validator_value))}"
        else:
            message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
        problems.append((tuple(error.absolute_path), message))
    return problems


# -- streams: JSONL and CSV ----------------------------------------------------------------------


class Progress:
    """Bytes read of a big file, as a bar on stderr when stderr is a terminal (not in a pipe, a
    log or a test)."""

    def __init__(self, label: str, total: int | None, stream=None, min_bytes: int = 4 * 2**20) -> None:
        self.stream = stream or sys.stderr
        self.label, self.total = label, total
        self.enabled = (bool(getattr(self.stream, "isatty", lambda: False)()) and "PYTEST_CURRENT_TEST" not in os.environ
                        and (total is None or total >= min_bytes))
        self.done = 0
        self._last = 0.0

    def advance(self, size: int) -> None:
        self.done += size
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        if self.total:
            width = 24
            filled = min(width, width * self.done // self.total)
            bar = f"[{'#' * filled}{'-' * (width - filled)}] {100 * self.done // self.total}%"
        else:
            bar = f"{self.done / 2**20:.1f} MiB"
        self.stream.write(f"\r{self.label} {bar}\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _open(source: Path | str | BinaryIO, what: str) -> tuple[BinaryIO, str, int | None, bool]:
    """(handle, name, size, whether to close it) of a path, '-' (stdin) or an open binary file."""
    if source == "-":
        return sys.stdin.buffer, "<stdin>", None, False
    if not isinstance(source, (str, Path)):
        return source, getattr(source, "name", "<input>"), None, False
    path = Path(source)
    handle = _opened(path, what)
    try:
        size = os.fstat(handle.fileno()).st_size
    except OSError:
        size = None
    return handle, str(path), size, True


def lines(source: Path | str | BinaryIO, what: str = "file", *, progress: str | None = None,
          name: str | None = None) -> Iterator[tuple[int, str]]:
    """(number, text) of each line, decoded and checked (UTF-8, no NUL, at most MAX_LINE_BYTES),
    its line end (LF or CRLF) removed; a BOM before the first is dropped. Streams."""
    handle, shown, size, close = _open(source, what)
    shown = name or shown
    bar = Progress(progress or f"reading {shown}", size) if progress is not None else None
    try:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if bar is not None:
                bar.advance(len(raw))
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise InputError(f"{shown}:{number}: a line longer than {MAX_LINE_BYTES // 2**20} MiB")
            text = decode(raw, shown, number)
            if number == 1 and text.startswith(BOM):
                text = text[1:]
            yield number, text.removesuffix("\n").removesuffix("\r")
    finally:
        if bar is not None:
            bar.finish()
        if close:
            handle.close()


def read_jsonl(source: Path | str | BinaryIO, what: str = "file", *, progress: str | None = None,
               name: str | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSONL file, each checked by the door. Streams."""
    for number, text in lines(source, what, progress=progress, name=name):
        if text.strip():
            yield number, decode_json(text, name or _name_of(source), number)


def _name_of(source) -> str:
    if source == "-":
        return "<stdin>"
    return str(source) if isinstance(source, (str, Path)) else getattr(source, "name", "<input>")


@dataclass
class Table:
    """A CSV file's header and its rows: each row (line number, {column: cell})."""

    name: str
    columns: list[str]
    rows: Iterator[tuple[int, dict[str, str]]]


def read_csv(source: Path | str, what: str = "file", *, progress: str | None = None) -> Table:
    """A CSV file with a header row: its columns (none blank, none twice) and its rows (each with
    as many cells as the header), streamed; the line of a row is where it starts."""
    name = _name_of(source)
    numbered = lines(source, what, progress=progress)
    starts: list[int] = []

    def physical() -> Iterator[str]:
        for number, text in numbered:
            starts.append(number)
            yield text + "\n"

    reader = csv.reader(physical(), strict=True)

    def next_record() -> tuple[int, list[str]] | None:
        before = len(starts)
        try:
            record = next(reader)
        except StopIteration:
            return None
        except csv.Error as exc:
            raise InputError(f"{name}:{starts[-1] if starts else 1}: not CSV: {exc}") from None
        return (starts[before] if before < len(starts) else starts[-1]), record

    first = next_record()
    if first is None:
        raise InputError(f"{name}:1: empty: a CSV file starts with a header row")
    header_line, columns = first
    columns = [c.strip() for c in columns]
    for index, column in enumerate(columns):
        if not column:
            raise InputError(f"{name}:{header_line}: column {index + 1} of the header has no name")
        if column in columns[:index]:
            raise InputError(f"{name}:{header_line}: column {json.dumps(column)} named twice in the header")

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        while (found := next_record()) is not None:
            number, record = found
            if not any(cell.strip() for cell in record):
                continue
            if len(record) != len(columns):
                raise InputError(f"{name}:{number}: {len(record)} cells, but the header names {len(columns)}")
            for column, cell in zip(columns, record):
                problem = _text_problem(cell)
                if problem:
                    raise InputError(f"{name}:{number}: column {column}: {problem}")
            yield number, dict(zip(columns, record))

    return Table(name, columns, rows())


def copy_to_spool(source: BinaryIO, into: Callable[[], BinaryIO]) -> BinaryIO:
    """Copy a stream (stdin) into a temporary file a reader can go over twice; rewound."""
    spool = into()
    while chunk := source.read(2**20):
        spool.write(chunk)
    spool.seek(0)
    return spool


def text_stream(data: str) -> BinaryIO:
    """Text as a binary stream a reader reads (for tests and in-memory sources)."""
    return io.BytesIO(data.encode("utf-8"))
