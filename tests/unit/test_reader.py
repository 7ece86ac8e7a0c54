"""The door (core/reader.py), format by format: what it refuses, naming FILE:LINE: $.path, and what
it reads as plain text (a BOM, CRLF)."""

from __future__ import annotations

import io
import json

import pytest

from evalledger.core import reader
from evalledger.core.reader import InputError


def refused(path, data: bytes) -> str:
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        reader.read_json(path)
    return str(exc.value).removeprefix(f"{path}:")


@pytest.mark.parametrize("data, says", [
    (b"[" * 1000 + b"]" * 1000, "1: nested deeper than 64 levels"),
    (b"[" * 70 + b"]" * 70, "1: $[0][0][0][0]...[0][0]: nested deeper than 64 levels"),
    (b'{\n "a": 1,\n "b": {"x": 1,\n  "x": 2}\n}', '4: $.b.x: key "x" given twice in one object'),
    (b'{\n"a":\n NaN}', "3: $.a: NaN is not a number (JSON has no NaN or Infinity)"),
    (b'{"a": -Infinity}', "1: $.a: -Infinity is not a number (JSON has no NaN or Infinity)"),
    (b'{"a": 1e400}', "1: $.a: a number past the range of a float"),
    (b'{"a": [0.5,\n 1e-400]}', "2: $.a[1]: 1e-400 is nearer to zero than a float holds (it would be read as 0)"),
    (b'{"a": -2.5E-0400}', "1: $.a: -2.5E-0400 is nearer to zero than a float holds (it would be read as 0)"),
    (b'{"a": 0.' + b"0" * 400 + b'1}', "1: $.a: 0.0000000000000000000000... is nearer to zero than a float holds"),
    (b'{"a": 9223372036854775808}', "1: $.a: the integer 9223372036854775808 is past the range a ledger field holds"),
    (b'{"a":\n 99999999999999999999}', "2: $.a: the integer 99999999999999999999 is past the range a ledger field holds"),
    (b'{"a": "x\\u0000y"}', "1: $.a: a NUL character, which no text field can hold"),
    (b'{"a\\u0000": 1}', "1: $[\"a\\u0000\"]: in a key: a NUL character"),
    (b'{"a": ["ok", "\\ud800"]}', "1: $.a[1]: a lone surrogate (half of a UTF-16 pair), which is not text"),
    (b'{\n"as_of": "2026-13-45"}', '2: $.as_of: "2026-13-45" is not a date (YYYY-MM-DD)'),
    (b'{"at": "2026-02-30T10:00:00Z"}', '1: $.at: "2026-02-30T10:00:00Z" is not a timestamp (ISO 8601)'),
    ("{\n\"a\": \"caf\xe9\"}".encode("latin-1"), "2: not UTF-8 text (byte 0xE9 at column 10): save the file as UTF-8"),
    (b'{"a": "x\x00"}', "1: a NUL character, which no text field can hold"),
    (b'{"a": }', "1: column 7: not JSON: Expecting value"),
    (b'{"a": 1} x', "1: column 10: not JSON: extra text after the JSON value"),
])
def test_a_json_document_is_refused_by_line_and_path(tmp_path, data, says):
    said = refused(tmp_path / "doc.json", data)
    assert said.startswith(says), said


def test_a_number_near_zero_that_a_float_holds_is_read_as_it_is(tmp_path):
    """Zero spelled any way, and the smallest numbers a float still holds, are not refused as too
    near zero: only a nonzero number a float would read as 0 is."""
    path = tmp_path / "doc.json"
    path.write_bytes(b'{"z": 0e-400, "y": -0.0E-999, "x": 0.' + b"0" * 30 + b', "w": 1e-320, "v": 2.5e-300}')
    value = reader.read_json(path).value
    assert value == {"z": 0.0, "y": 0.0, "x": 0.0, "w": 1e-320, "v": 2.5e-300} and value["w"] > 0


def test_what_json_allows_is_read_as_it_is(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes("\ufeff{\"at\": \"2026-02-28T10:00:00.123456789Z\", \"d\": \"2026-01-02\",\r\n \"n\": "
                     "-9223372036854775808, \"f\": 0.1, \"s\": \"2026-13 is not a date pattern\"}\r\n".encode())
    document = reader.read_json(path)
    assert document.value == {"at": "2026-02-28T10:00:00.123456789Z", "d": "2026-01-02",
                              "n": -(2**63), "f": 0.1, "s": "2026-13 is not a date pattern"}
    assert document.where("n") == f"{path}:2: $.n"


def test_a_document_too_big_to_read_whole_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_DOCUMENT_BYTES", 100)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(["x" * 200]))
    with pytest.raises(InputError, match="larger than 0 MiB: a file is read whole"):
        reader.read_json(path)


def test_text_drops_a_bom_and_reads_crlf_and_cr_as_lf(tmp_path):
    path = tmp_path / "prompt.txt"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\rline three\n")
    assert reader.read_text(path) == "line one\nline two\nline three\n"
    missing = tmp_path / "missing.txt"
    with pytest.raises(InputError, match=f"^{missing}: no such prompt file$"):
        reader.read_text(missing, "prompt file")
    with pytest.raises(InputError, match="a folder, not a file"):
        reader.read_text(tmp_path)


def test_jsonl_streams_numbered_lines_and_names_the_line_of_each_refusal():
    source = reader.text_stream('\ufeff{"a": 1}\r\n\r\n{"a": 2}\n{"a": 3, "a": 4}\n')
    got = []
    with pytest.raises(InputError, match=r'^<input>:4: \$\.a: key "a" given twice'):
        for number, value in reader.read_jsonl(source, name="<input>"):
            got.append((number, value))
    assert got == [(1, {"a": 1}), (3, {"a": 2})]


def test_a_jsonl_line_longer_than_the_limit_is_refused_by_its_line(monkeypatch):
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 10)
    with pytest.raises(InputError, match=r"^x:2: a line longer than 0 MiB"):
        list(reader.read_jsonl(io.BytesIO(b'{"a": 1}\n{"a": "0123456789"}\n'), name="x"))


def test_csv_header_and_rows_are_checked_with_the_line_each_row_starts_on(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_bytes(b'\xef\xbb\xbfquestion_id,comment\r\nEVAL-Q01,"two\r\nlines"\r\n\r\nEVAL-Q02,ok\r\n')
    table = reader.read_csv(path)
    assert table.columns == ["question_id", "comment"]
    assert list(table.rows) == [(2, {"question_id": "EVAL-Q01", "comment": "two\nlines"}),
                                (5, {"question_id": "EVAL-Q02", "comment": "ok"})]


@pytest.mark.parametrize("data, says", [
    (b"question_id,x,x\nEVAL-Q01,1,2\n", '1: column "x" named twice in the header'),
    (b"question_id,,x\nEVAL-Q01,1,2\n", "1: column 2 of the header has no name"),
    (b"question_id,x\nEVAL-Q01\n", "2: 1 cells, but the header names 2"),
    (b"question_id,x\nEVAL-Q01,\"unclosed\n", "2: not CSV: unexpected end of data"),
    (b"question_id,x\nEVAL-Q01,caf\xe9\n", "2: not UTF-8 text (byte 0xE9 at column 13)"),
    (b"", "1: empty: a CSV file starts with a header row"),
])
def test_a_csv_file_is_refused_by_line(tmp_path, data, says):
    path = tmp_path / "scores.csv"
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        table = reader.read_csv(path)
        list(table.rows)
    assert str(exc.value) == f"{path}:{says}" or str(exc.value).startswith(f"{path}:{says}")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_on_a_terminal_only_and_never_under_a_test(monkeypatch):
    big = 8 * 2**20
    assert not reader.Progress("reading x", big, stream=Terminal()).enabled  # pytest sets PYTEST_CURRENT_TEST
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert not reader.Progress("reading x", big, stream=io.StringIO()).enabled  # a pipe, a log
    assert not reader.Progress("reading x", 1000, stream=Terminal()).enabled  # a small file needs none
    screen = Terminal()
    bar = reader.Progress("reading x", big, stream=screen)
    bar.advance(big // 2)
    bar.finish()
    assert "reading x [############------------] 50%" in screen.getvalue()
    assert screen.getvalue().endswith("\r\x1b[K")
