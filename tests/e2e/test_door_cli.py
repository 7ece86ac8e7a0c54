"""Input that used to get past the door (issue 19, "input that gets past the door"): every file a
command reads goes through core/reader.py, every number is range-checked before the database sees
it, and every refusal is one line naming the file, the line and the field, exit 3, with nothing
half-written."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from tests.cli import kill_when, run_cli, start_script, wait_until
from tests.conftest import REVIEWER_ROLE

REPO = Path(__file__).resolve().parents[2]
DEMO_CATALOG = REPO / "runner/evalledger/suites/brain_eval/fixtures/catalog_v28-2026Q2.json"
DEMO_RUN = REPO / "runner/evalledger/suites/brain_eval/fixtures/brain_eval_demo.json"
GO_HISTORY = REPO / "tests/go/snapshot_roundtrip/testdata/history"
DEEP = "[" * 1000 + "]" * 1000


def one_line_error(result, code=3) -> str:
    assert result.code == code, (result.out, result.err)
    assert result.err.startswith("evalledger: error: ") and result.err.count("\n") == 1, result.err
    assert "Traceback" not in result.err
    return result.err.removeprefix("evalledger: error: ").rstrip("\n")


# --- JSON nested about 1000 deep crashed every command that reads JSON -------------------------


def _deep_commands(tmp_path: Path) -> dict[str, tuple[list[str], Path]]:
    file = tmp_path / "deep.json"
    file.write_text(DEEP)
    jsonl = tmp_path / "deep.jsonl"
    jsonl.write_text(DEEP + "\n")
    store = tmp_path / "store" / "review-pr"
    store.mkdir(parents=True)
    (store / "20260101T000000Z__deep.json").write_text(DEEP)
    work = tmp_path / "fix.diff"
    work.write_text("+x\n")
    run = str(uuid.uuid4())
    return {
        "brain-eval record": (["brain-eval", "record", str(file), "--reviewer", REVIEWER_ROLE], file),
        "catalog load": (["catalog", "load", str(file)], file),
        "capture import": (["capture", "import", str(jsonl)], jsonl),
        "corpus load": (["corpus", "load", str(jsonl)], jsonl),
        "run work-quality --metrics": (["run", "work-quality", "--kind", "bot", "--name", "b", "--task", "t",
                                        "--work-product", str(work), "--judges", "recorded", "--metrics", str(file)],
                                       file),
        "review score --from": (["review", "score", run, "--from", str(jsonl)], jsonl),
        "replay": (["replay", str(file)], file),
        "regress --against": (["regress", "--against", str(file)], file),
        "snapshot show": (["snapshot", "show", str(file)], file),
        "snapshot compare": (["snapshot", "compare", str(file), str(file)], file),
        "snapshot import": (["snapshot", "import", str(store.parent)], store / "20260101T000000Z__deep.json"),
        "run takes-quality --source fs": (["run", "takes-quality", "--source", "fs", "--path", str(jsonl),
                                           "--judges", "recorded"], jsonl),
    }


def test_json_nested_a_thousand_deep_is_one_line_naming_the_file_in_every_command(dsn, reviewers, tmp_path):
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    for name, (args, file) in _deep_commands(tmp_path).items():
        said = one_line_error(run_cli(*args, env=env))
        assert said.startswith(f"{file}:1: ") and "nested deeper than 64 levels" in said, (name, said)


# --- duplicate keys and columns: the last one used to win ---------------------------------------


def test_a_review_csv_naming_a_column_twice_is_refused_and_changes_nothing(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("question_id,hallucinations_detected,total_claims,hallucinations_detected\nEVAL-Q01,0,3,5\n")
    said = one_line_error(run_cli("review", "score", str(uuid.uuid4()), "--from", str(path)))
    assert said == f'{path}:1: column "hallucinations_detected" named twice in the header'


def test_a_key_given_twice_is_refused_in_a_recorded_run_and_a_metrics_file(dsn, reviewers, tmp_path):
    text = DEMO_RUN.read_text()
    doubled = text.replace('"run_trigger": "quarterly",', '"run_trigger": "on_demand",\n  "run_trigger": "quarterly",', 1)
    assert doubled != text
    path = tmp_path / "run.json"
    path.write_text(doubled)
    said = one_line_error(run_cli("brain-eval", "record", str(path), "--reviewer", REVIEWER_ROLE,
                                  env={"DATABASE_URL": dsn}))
    line = doubled[:doubled.rindex('"run_trigger":')].count("\n") + 1
    assert said == f'{path}:{line}: $.run.run_trigger: key "run_trigger" given twice in one object'
    metrics = tmp_path / "metrics.json"
    metrics.write_text('{"cost_usd": 0.1,\n "cost_usd": 99}')
    work = tmp_path / "fix.diff"
    work.write_text("+x\n")
    said = one_line_error(run_cli("run", "work-quality", "--kind", "bot", "--name", "b", "--task", "t",
                                  "--work-product", str(work), "--judges", "recorded", "--metrics", str(metrics),
                                  env={"DATABASE_URL": dsn}))
    assert said == f'{metrics}:2: $.cost_usd: key "cost_usd" given twice in one object'


# --- catalogs: invalid dates, NaN, NUL --------------------------------------------------------


@pytest.mark.parametrize("edit, says", [
    (lambda d: d.update(as_of="2026-13-45"), '$.as_of: "2026-13-45" is not a date (YYYY-MM-DD)'),
    (lambda d: d["questions"][2]["pass_criteria"].update(min_citation_rate="NAN"),
     "$.questions[2].pass_criteria.min_citation_rate: NaN is not a number (JSON has no NaN or Infinity)"),
    (lambda d: d["questions"][4]["sources"][0].update(data="a\u0000b"),
     "$.questions[4].sources[0].data: a NUL character, which no text field can hold"),
])
def test_a_catalog_with_what_no_field_can_hold_is_refused_by_line_and_path(dsn, admin, tmp_path, edit, says):
    document = json.loads(DEMO_CATALOG.read_text())
    if "as_of" not in document:
        document["as_of"] = "2026-04-01"
    edit(document)
    text = json.dumps(document, indent=2).replace('"NAN"', "NaN")
    path = tmp_path / "catalog.json"
    path.write_text(text)
    said = one_line_error(run_cli("catalog", "load", str(path), env={"DATABASE_URL": dsn}))
    assert said.startswith(f"{path}:") and said.endswith(says), said
    assert "SQLSTATE" not in said
    assert admin.execute("SELECT count(*) FROM brain_eval_catalog").fetchone()[0] == 0


# --- an Excel "CSV UTF-8" file, and a prompt saved with a BOM ----------------------------------


def test_an_excel_csv_with_a_bom_and_crlf_reads_as_the_same_file(tmp_path):
    from evalledger.suites.brain_eval import reviewing

    plain = tmp_path / "plain.csv"
    plain.write_text("question_id,hallucinations_detected,total_claims\nEVAL-Q01,0,3\nEVAL-Q02,1,4\n")
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    assert reviewing.read_scores(excel) == [
        reviewing.Scored(s.line, s.question_id, s.fields) for s in reviewing.read_scores(plain)]
    assert [s.fields for s in reviewing.read_scores(excel)] == [
        {"hallucinations_detected": 0, "total_claims": 3}, {"hallucinations_detected": 1, "total_claims": 4}]


def test_a_prompt_file_with_a_bom_and_crlf_is_the_prompt_without_them(dsn, admin, tmp_path):
    prompt = "You are the pipeline brain.\nCite every number.\n"
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf" + prompt.replace("\n", "\r\n").encode())
    plain = tmp_path / "plain.txt"
    plain.write_text(prompt)
    env = {"DATABASE_URL": dsn}
    first = run_cli("brain", "add", "AGT-902", "--model", "anthropic:claude-sonnet-4-6", "--prompt-file", str(bom),
                    env=env)
    assert first.code == 0, first.err
    again = run_cli("brain", "add", "AGT-902", "--model", "anthropic:claude-sonnet-4-6", "--prompt-file",
                    str(plain), env=env)
    assert again.code == 0 and again.out.startswith("already registered: "), (again.out, again.err)
    stored = admin.execute("SELECT system_prompt, system_prompt_hash FROM brain_version").fetchall()
    assert stored == [(prompt, hashlib.sha256(prompt.encode()).hexdigest())]


# --- export: empty windows, --output ----------------------------------------------------------


@pytest.mark.parametrize("since", ["2030-01-01", "0s"])
def test_an_export_window_with_no_time_in_it_is_exit_3(dsn, since):
    said = one_line_error(run_cli("export", "--since", since, env={"DATABASE_URL": dsn}))
    assert "the window [since, until) would be empty" in said


def test_export_output_is_atomic_with_a_trailer_only_a_complete_export_writes(dsn, admin, tmp_path):
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                  "latency_ms, remote, capture_key) SELECT 'query', 'q' || n, true, false, 1, false, "
                  "gen_random_uuid() FROM generate_series(1, 5) n")
    out = tmp_path / "week.ndjson"
    done = run_cli("export", "--output", str(out), env={"DATABASE_URL": dsn})
    assert done.code == 0 and done.out == "", done.err
    rows = out.read_text().splitlines()
    assert len(rows) == 5 and all(json.loads(r)["schema_version"] == 1 for r in rows)  # rows exactly, no trailer
    trailer = json.loads((tmp_path / "week.ndjson.complete.json").read_text())
    assert trailer["rows"] == 5 and trailer["bytes"] == out.stat().st_size
    assert trailer["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert trailer["kind"] == "capture_export_complete" and trailer["next_since"] == trailer["until"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["week.ndjson", "week.ndjson.complete.json"]


@pytest.mark.processes
def test_a_killed_export_leaves_neither_a_file_nor_a_trailer(dsn, admin, tmp_path):
    # About 200 MB of export, far more than the export writes before the kill lands (a few MB), carried
    # by a chunk-id array: a query's bytes go through its normal-form hash index on the way in (a
    # 2,000-byte query a row took 25 s for as many bytes), an array's are stored as they come.
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_chunk_ids, vector_enabled, "
                  "expansion_applied, latency_ms, remote, capture_key) SELECT 'query', 'q', "
                  "array_fill(1234567890123::bigint, ARRAY[1500]), true, false, 1, false, gen_random_uuid() "
                  "FROM generate_series(1, 10000)")
    out = tmp_path / "all.ndjson"
    kill_when(start_script("export", "--output", str(out), env={"DATABASE_URL": dsn}),
              lambda: any(p.name.startswith(".all.ndjson.") and p.stat().st_size > 0 for p in tmp_path.iterdir()),
              "wrote the export's first bytes")
    assert not out.exists() and not (tmp_path / "all.ndjson.complete.json").exists()


# --- doctor checks all eight roles ------------------------------------------------------------


def test_doctor_fails_when_the_retention_role_can_log_in_or_bypass_rls(dsn, admin):
    env = {"DATABASE_URL": dsn}
    ok = run_cli("doctor", env=env)
    assert "ok    roles: all 8 present; none superuser or BYPASSRLS; evalledger_owner, evalledger_code, " \
           "evalledger_retention NOLOGIN\n" in ok.out
    try:
        admin.execute("ALTER ROLE evalledger_retention LOGIN BYPASSRLS")
        both = run_cli("doctor", env=env)
        assert both.code == 1 and "fail  roles: superuser or BYPASSRLS: evalledger_retention\n" in both.out
        admin.execute("ALTER ROLE evalledger_retention NOBYPASSRLS")
        login = run_cli("doctor", env=env)
        assert login.code == 1 and "fail  roles: can log in: evalledger_retention; it should be NOLOGIN\n" in login.out
    finally:
        admin.execute("ALTER ROLE evalledger_retention NOLOGIN NOBYPASSRLS")


# --- errors that named no flag or field -------------------------------------------------------


def test_hours_past_the_column_name_the_flag(dsn):
    said = one_line_error(run_cli("review", "finish", str(uuid.uuid4()), "--hours", "100000",
                                  env={"DATABASE_URL": dsn}))
    assert said == "review finish: Invalid value for '--hours': must be from 0 to 999.99, got 100000"


def test_a_database_url_that_is_not_one_names_the_variable():
    said = one_line_error(run_cli("takes-quality", "list", env={"DATABASE_URL": "not a url"}))
    assert said.startswith("DATABASE_URL: not a PostgreSQL connection string (")
    said = one_line_error(run_cli("--database-url", "not a url", "doctor"))
    assert said.startswith("--database-url: not a PostgreSQL connection string (")


def test_an_unmigrated_database_says_to_migrate(dsn, admin):
    admin.execute("CREATE DATABASE evalledger_door_empty")
    try:
        empty = make_conninfo(dsn, dbname="evalledger_door_empty")
        for args in (["takes-quality", "list"], ["trend"], ["work-quality", "list"]):
            said = one_line_error(run_cli(*args, env={"DATABASE_URL": empty}))
            assert said.endswith("run `evalledger db migrate`"), said
    finally:
        admin.execute("DROP DATABASE evalledger_door_empty WITH (FORCE)")


NOWHERE = "postgresql://nobody@/nodb?host=/nonexistent-evalledger-socket-dir"


def test_an_unreachable_database_says_what_to_check():
    said = one_line_error(run_cli("takes-quality", "list", env={"DATABASE_URL": NOWHERE}))
    assert said.startswith("cannot reach the database at nobody@") and said.endswith(
        "check that it runs and that DATABASE_URL (or --database-url) names it")


@pytest.mark.parametrize("given, env, says", [
    (["--read-url", "not a url"], {}, "--read-url: not a PostgreSQL connection string ("),
    ([], {"DATABASE_READ_URL": "not a url"}, "DATABASE_READ_URL: not a PostgreSQL connection string ("),
    (["--read-url", NOWHERE], {}, "cannot reach the database at nobody@/nonexistent-evalledger-socket-dir:5432/nodb: "),
], ids=["flag", "variable", "unreachable"])
def test_a_bad_read_url_is_one_error_naming_it_for_every_reader(given, env, says):
    """report, export and dashboard read through the one --read-url: a bad one is the same line and
    exit 3 for each, naming the flag or variable it came from (not DATABASE_URL, which was fine)."""
    said = {command: one_line_error(run_cli(command, *given, env={"DATABASE_URL": None, "DATABASE_READ_URL": None, **env}))
            for command in ("report", "export", "dashboard")}
    assert said["report"] == said["export"] == said["dashboard"]
    assert said["report"].startswith(says), said["report"]
    if "cannot reach" in says:
        assert said["report"].endswith("check that it runs and that --read-url (or DATABASE_READ_URL) names it")


def test_serve_refuses_a_bad_read_url_as_the_readers_do():
    """serve takes --read-url only as a flag (it serves reviewers too, so DATABASE_READ_URL does not
    move it), and a bad one is the readers' line and exit 3, before anything listens."""
    said = one_line_error(run_cli("serve", "--read-url", "not a url", env={"DATABASE_URL": None, "DATABASE_READ_URL": None}))
    assert said.startswith("--read-url: not a PostgreSQL connection string ("), said


@pytest.mark.processes
def test_a_connection_lost_mid_run_says_the_same_command_resumes(dsn, admin, standin, tmp_path):
    from tests.e2e.test_takes_quality_cli import CORPUS, write_jsonl

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    path = write_jsonl(tmp_path / "takes.jsonl", CORPUS)
    assert run_cli("corpus", "load", str(path), env=env).code == 0
    standin.gate = threading.Event()
    proc = start_script("run", "takes-quality", "--seed", "3", "--json", env=env, text=True)
    try:
        wait_until(proc, lambda: admin.execute("SELECT count(*) FROM eval_takes_quality_judge_verdicts").fetchone()[0]
                   >= 3, "recorded its three calls as started")
        dbname = admin.execute("SELECT current_database()").fetchone()[0]
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                      "AND pid <> pg_backend_pid()", (dbname,))
        standin.gate.set()
        out, err = proc.communicate(timeout=120)
    finally:
        standin.gate.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3 and out == ""
    assert err.startswith("evalledger: error: the database connection was lost (") and err.count("\n") == 1, err
    assert err.rstrip().endswith("run the same command again: it resumes the run")
    # And it does: the calls in flight were recorded as started, so the next run counts them.
    standin.reset()
    again = run_cli("run", "takes-quality", "--seed", "3", "--json", env=env)
    assert again.code == 0, again.err
    receipt = json.loads(again.out)
    assert receipt["final"] is True and len(receipt["errors"]) == 3
    assert all("no reply: the runner stopped while the call was in flight" in e for e in receipt["errors"])


def test_latin_1_takes_are_named_by_their_line(dsn, tmp_path):
    path = tmp_path / "takes.jsonl"
    good = {"slug": "a/b", "kind": "take", "holder": "ann", "weight": 0.5, "since": "2026", "source": "s",
            "claim": "fine"}
    second = json.dumps({**good, "claim": "CAFE"})
    path.write_bytes(json.dumps(good).encode() + b"\n" + second.encode().replace(
        b"CAFE", "caf\xe9".encode("latin-1")) + b"\n")
    said = one_line_error(run_cli("corpus", "load", str(path), env={"DATABASE_URL": dsn}))
    column = second.index("CAFE") + 4  # the character after "caf"
    assert said == f"{path}:2: not UTF-8 text (byte 0xE9 at column {column}): save the file as UTF-8"


# --- a read-only EVALLEDGER_HOME, and a full disk ---------------------------------------------


@pytest.mark.parametrize("args", [["doctor"], ["db", "up"]])
def test_an_evalledger_home_that_cannot_be_written_is_one_line(args):
    home = "/proc/evalledger-home-that-cannot-be"  # no one, root included, creates a folder in /proc
    said = one_line_error(run_cli(*args, env={"EVALLEDGER_HOME": home, "DATABASE_URL": None}))
    assert said.startswith(f"EVALLEDGER_HOME={home}: cannot write its lock file pg.lock (")
    assert said.endswith("or set DATABASE_URL to use another PostgreSQL")


def test_a_receipt_that_cannot_be_written_says_how_to_write_it_again(dsn, standin, tmp_path, monkeypatch):
    import errno

    from evalledger.suites.takes_quality import receipts
    from tests.e2e.test_takes_quality_cli import CORPUS, write_jsonl

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    assert run_cli("corpus", "load", str(write_jsonl(tmp_path / "t.jsonl", CORPUS)), env=env).code == 0

    def full(path, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(receipts, "write_atomic", full)
    said = one_line_error(run_cli("run", "takes-quality", "--seed", "5", env=env))
    assert "cannot write the receipt (No space left on device); run " in said
    run_id = int(said.split("; run ")[1].split()[0])
    assert said.endswith(f"`evalledger replay --from-db {run_id}` writes the file again once it can be written")
    monkeypatch.undo()
    rebuilt = run_cli("replay", "--from-db", str(run_id), env=env)
    assert rebuilt.code == 0 and "rebuilt from the database; disk copy written to " in rebuilt.out


def test_a_nul_the_database_cannot_take_is_explained_without_a_missing_sqlstate(dsn):
    from evalledger.core import db

    with psycopg.connect(dsn) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("SELECT %s::text", ("a\x00b",))
    said = str(db.explain(exc.value))
    assert "NUL" in said and "SQLSTATE" not in said


def test_a_snapshot_file_that_cannot_be_written_says_the_same_run_id_writes_it(dsn, standin, tmp_path, monkeypatch):
    import errno

    from evalledger.suites.work_quality import history
    from evalledger.suites.work_quality.snapshot import DIMENSIONS

    standin.responder = lambda model, system, user: {
        **{d: 0.8 for d in DIMENSIONS}, "narrative": "read it", "confidence": 0.7,
        "relative_vs_prev": {d: "n/a" for d in DIMENSIONS}, "relative_narrative": ""}
    work = tmp_path / "fix.diff"
    work.write_text("+x\n")
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    args = ["run", "work-quality", "--kind", "bot", "--name", "b", "--task", "t", "--work-product", str(work),
            "--models", "openai:gpt-4o,anthropic:claude-opus-4-7", "--run-id", "build-7"]

    def full(self, snap):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "b/20260101T000000Z__build-7.json")

    monkeypatch.setattr(history.SnapshotStore, "write", full)
    said = one_line_error(run_cli(*args, env=env))
    assert said == ("snapshot store: cannot write the snapshot file (b/20260101T000000Z__build-7.json: No space "
                    "left on device); snapshot build-7 of b is complete in the ledger: the same command again "
                    "(--run-id build-7) writes the file once it can be written")
    monkeypatch.undo()
    standin.reset()
    again = run_cli(*args, env=env)
    assert again.code == 0 and standin.requests == [] and "reading it back, no calls made" in again.out
