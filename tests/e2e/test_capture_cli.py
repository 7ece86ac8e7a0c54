"""`evalledger export`, `capture import|status|replay`, doctor's capture check and the demo's
capture step, end to end through the real console script."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta

import psycopg
import pytest

from evalledger.ops.doctor import _capture_failures
from tests.cli import SCRIPT, run_cli
from tests.conftest import capture_times_since

INSERT = ("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,"
          " expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied, latency_ms, remote, job_id,"
          " subagent_id, capture_key, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
          " gen_random_uuid(), %s)")


def test_export_prints_the_seed_rows_and_the_window_exactly(dsn, admin):
    since = capture_times_since(admin, 3)
    at = since + timedelta(hours=1, microseconds=1)
    until = later = since + timedelta(hours=2)  # a row at the bound belongs to the next window
    admin.execute(INSERT, ("query", 'say "hi"\n\\ é', ["a", "b"], [3, 3, 1], ["s"], True, "low", "high", True, False,
                           412.5, True, 9, None, at))
    admin.execute(INSERT, ("search", "x", [], [], [], None, None, None, False, False, 7, False, None, None, at))
    admin.execute(INSERT, ("query", "later", [], [], [], None, None, None, True, True, 1, False, None, None, later))
    result = run_cli("export", "--since", f"{since:%Y-%m-%dT%H:%M:%SZ}", "--until", f"{until:%Y-%m-%dT%H:%M:%SZ}",
                     env={"DATABASE_URL": dsn})
    assert result.code == 0, result.err
    assert result.out == (
        '{"schema_version":1,"id":2,"tool_name":"search","query":"x","retrieved_slugs":[],'
        '"retrieved_chunk_ids":[],"source_ids":[],"expand_enabled":null,"detail":null,'
        '"detail_resolved":null,"vector_enabled":false,"expansion_applied":false,"latency_ms":7,'
        f'"remote":false,"job_id":null,"subagent_id":null,"created_at":"{z(at)}"}}\n'
        '{"schema_version":1,"id":1,"tool_name":"query","query":"say \\"hi\\"\\n\\\\ é",'
        '"retrieved_slugs":["a","b"],"retrieved_chunk_ids":[3,3,1],"source_ids":["s"],'
        '"expand_enabled":true,"detail":"low","detail_resolved":"high","vector_enabled":true,'
        '"expansion_applied":false,"latency_ms":412.5,"remote":true,"job_id":9,"subagent_id":null,'
        f'"created_at":"{z(at)}"}}\n')
    assert json.loads(result.out.splitlines()[1])["query"] == 'say "hi"\n\\ é'
    assert result.err == (
        f"export: window created_at >= {z(since)} and < {z(until)} (tool: all, limit: none)\n"
        f"export: 2 rows; the next window starts at --since {z(until)}\n")
    following = run_cli("export", "--since", z(until), env={"DATABASE_URL": dsn})
    assert [json.loads(line)["query"] for line in following.out.splitlines()] == ["later"]
    only_search = run_cli("export", "--tool", "search", "--limit", "1", env={"DATABASE_URL": dsn})
    assert [json.loads(line)["id"] for line in only_search.out.splitlines()] == [2]
    assert only_search.err.endswith("export: limit 1 reached: older rows of this window were not exported\n")


def z(at: datetime) -> str:
    """A timestamp as export prints it: UTC, microseconds, Z."""
    return f"{at:%Y-%m-%dT%H:%M:%S.%fZ}"


def test_bad_export_flags_exit_3_with_one_line():
    cases = {
        ("--since", "yesterday"): "evalledger: error: export: Invalid value for '--since': 'yesterday' is neither a "
                                  "duration (45s, 30m, 24h, 7d, 2w) nor an ISO 8601 timestamp\n",
        ("--since", "7y"): "evalledger: error: export: Invalid value for '--since': '7y' is neither a duration "
                           "(45s, 30m, 24h, 7d, 2w) nor an ISO 8601 timestamp\n",
        ("--until", "7d"): "evalledger: error: export: Invalid value for '--until': '7d' is not an ISO 8601 "
                           "timestamp\n",
        ("--tool", "browse"): "evalledger: error: export: Invalid value for '--tool': 'browse' is not one of "
                              "'query', 'search'.\n",
        ("--limit", "0"): "evalledger: error: export: Invalid value for '--limit': must be from 1 to 2,147,483,647, "
                          "got 0\n",
        ("--limit", "-5"): "evalledger: error: export: Invalid value for '--limit': must be from 1 to "
                           "2,147,483,647, got -5\n",
        ("--limit", "ten"): "evalledger: error: export: Invalid value for '--limit': 'ten' is not an integer\n",
        ("--limit", "99999999999999999999"): "evalledger: error: export: Invalid value for '--limit': must be from 1 "
                                             "to 2,147,483,647, got 99999999999999999999\n",
    }
    for args, err in cases.items():
        result = run_cli("export", *args)
        assert (result.code, result.out, result.err) == (3, "", err), args


@pytest.mark.processes
def test_a_closed_pipe_ends_the_export_quietly(dsn, admin):
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                  "latency_ms, remote, capture_key) SELECT 'query', repeat('q', 500), true, false, 1, false, "
                  "gen_random_uuid() FROM generate_series(1, 20000)")
    done = subprocess.run(["bash", "-c", f'set -o pipefail; "{SCRIPT}" export | head -n 2'],
                          env={"DATABASE_URL": dsn, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr
    assert done.stderr.startswith("export: window created_at < ")


def write_log(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


ROW = {"tool_name": "query", "query": "mail jane@example.com", "vector_enabled": True, "latency_ms": 3,
       "remote": False}


def test_import_goes_through_the_capture_path_once(dsn, admin, tmp_path):
    log = write_log(tmp_path / "capture.ndjson", [ROW, "", {**ROW, "query": "x" * 51201},
                                                   {**ROW, "schema_version": 1, "id": 99,
                                                    "created_at": "2020-01-01T00:00:00Z"}, ROW])
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    first = run_cli("capture", "import", str(log), env=env)
    refused = (rf"{re.escape(str(log))}:3: refused \(check_violation\): new row for relation \"eval_candidates_p\d{{6}}\" "
               r"violates check constraint \"eval_candidates_query_max_50kb\"\n")
    assert first.code == 0 and re.fullmatch(refused, first.err), first.err
    assert first.out == (f"imported {log}: 4 rows: 3 written, 0 already present, 1 failed (check_violation 1)\n")
    again = run_cli("capture", "import", str(log), env=env)
    assert re.fullmatch(refused, again.err), again.err
    assert again.out == f"imported {log}: 4 rows: 0 written, 3 already present, 1 failed (check_violation 1)\n"
    assert [r[0] for r in admin.execute("SELECT query FROM evalledger.eval_candidates")] == ["mail [REDACTED]"] * 3
    assert admin.execute("SELECT count(*) FROM evalledger.eval_capture_failures").fetchone()[0] == 1


def test_import_names_the_line_and_field_of_a_malformed_row(dsn, admin, tmp_path):
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    cases = [
        (["{not json"], ":1: column 2: not JSON: "),
        ([ROW, "[1, 2]"], ":2: expected a JSON object, got list"),
        ([ROW, ROW, {**ROW, "latency_ms": "slow"}], ":3: $.latency_ms: expected a number"),
        ([{**ROW, "remote": None}], ":1: $.remote: expected true or false"),
        ([{k: v for k, v in ROW.items() if k != "query"}], ":1: $.query: missing"),
        ([{**ROW, "colour": "red"}], ":1: $.colour: unknown field"),
        ([{**ROW, "schema_version": 2}], ":1: $.schema_version: expected 1, got 2"),
        # The door (core/reader.py): what no field can hold, by line and path.
        (['{"tool_name": "query", "tool_name": "search"}'], ':1: $.tool_name: key "tool_name" given twice'),
        ([{**ROW, "query": "a\u0000b"}], ":1: $.query: a NUL character"),
        (['{"latency_ms": NaN}'], ":1: $.latency_ms: NaN is not a number"),
        (["[" * 1000 + "]" * 1000], ":1: nested deeper than 64 levels"),
    ]
    for lines, message in cases:
        log = write_log(tmp_path / "bad.ndjson", lines)
        result = run_cli("capture", "import", str(log), env=env)
        assert result.code == 3, lines
        assert result.err.startswith(f"evalledger: error: {log}{message}"), result.err
        assert result.err.count("\n") == 1
    assert admin.execute("SELECT count(*) FROM evalledger.eval_candidates").fetchone()[0] == 0
    missing = run_cli("capture", "import", str(tmp_path / "nope.ndjson"), env=env)
    assert missing.code == 3 and missing.err == f"evalledger: error: {tmp_path / 'nope.ndjson'}: no such capture log\n"
    latin = tmp_path / "latin.ndjson"
    latin.write_bytes(json.dumps(ROW).encode() + b"\n" + json.dumps({**ROW, "query": "QUERY"}).encode().replace(
        b"QUERY", "caf\xe9".encode("latin-1")) + b"\n")
    latin_result = run_cli("capture", "import", str(latin), env=env)
    assert latin_result.err.startswith(f"evalledger: error: {latin}:2: not UTF-8 text (byte 0xE9 at column ")
    excel = tmp_path / "excel.ndjson"
    excel.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROW).encode() + b"\r\n")
    assert run_cli("capture", "import", str(excel), env=env).code == 0


def test_capture_status_follows_the_resolution_order(tmp_path):
    env = {"EVALLEDGER_HOME": str(tmp_path), "EVALLEDGER_CONTRIBUTOR_MODE": "1"}
    spool = tmp_path / "capture" / "spool.ndjson"
    assert run_cli("capture", "status", env=env).out == (
        f"capture: on (EVALLEDGER_CONTRIBUTOR_MODE=1)\nscrub_pii: true\nspool: 0 records waiting in {spool}\n")
    (tmp_path / "config.json").write_text('{"eval": {"capture": false, "scrub_pii": false}}')
    assert run_cli("capture", "status", env=env).out == (
        f"capture: off (config.json eval.capture = false)\nscrub_pii: false\nspool: 0 records waiting in {spool}\n")


def test_replay_writes_the_spool(dsn, admin, tmp_path):
    from evalledger.suites.capture.writer import CaptureWriter

    down = CaptureWriter(f"postgresql://nobody@/nodb?host={tmp_path}", home=tmp_path, background=False)
    down.write([dict(ROW), dict(ROW)])
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    result = run_cli("capture", "replay", env=env)
    assert (result.code, result.out) == (0, "replayed 3 spooled records: 2 rows written, 0 already present, "
                                         "1 failure recorded (db_down 1)\n")
    assert admin.execute("SELECT count(*) FROM evalledger.eval_candidates").fetchone()[0] == 2


def test_doctor_warns_on_capture_failures_per_reason(dsn, admin):
    for reason in ("check_violation", "db_down", "check_violation"):
        admin.execute("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at) "
                      "VALUES (gen_random_uuid(), %s, now())", (reason,))
    admin.execute("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at) "
                  "VALUES (gen_random_uuid(), 'other', now() - interval '25 hours')")
    result = run_cli("doctor", env={"DATABASE_URL": dsn})
    assert result.code == 0, result.out
    assert [line for line in result.out.splitlines() if " capture failures:" in line] == [
        "warn  capture failures: 3 in the last 24 hours (check_violation 2, db_down 1); "
        "see evalledger.eval_capture_failures"]


def test_doctor_capture_check_is_quiet_without_tables_or_rights(dsn, admin):
    admin.execute("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at) "
                  "VALUES (gen_random_uuid(), 'other', now())")
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert [f.check for f in _capture_failures(conn)] == ["capture failures"]
        conn.execute("SET ROLE evalledger_agent")
        assert _capture_failures(conn) == []
        conn.execute("RESET ROLE")
        conn.execute("SET ROLE evalledger_reviewer")
        assert _capture_failures(conn) == []


def test_the_demo_captures_scrubbed_rows_once(dsn, admin):
    first = run_cli("demo", env={"DATABASE_URL": dsn})
    assert first.code == 0, first.err
    assert "capture (demo queries with an email, a card number and a bearer token" in first.out
    assert "  captured 3 new, 0 already there;" in first.out
    for secret in ("jane.doe@example.com", "4111 1111 1111 1111", "sk-live-51HqLyjWDarjtT1zdp7dc"):
        assert secret not in first.out
    assert first.out.count("[REDACTED]") == 3
    again = run_cli("demo", env={"DATABASE_URL": dsn})
    assert "  captured 0 new, 3 already there;" in again.out
    assert admin.execute("SELECT count(*) FROM evalledger.eval_candidates").fetchone()[0] == 3
