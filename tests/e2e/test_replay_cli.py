"""`evalledger run replay` (BrainBench-Real, issue 40) end to end: captured rows asked again of a
scripted brain through each adapter, the decision the database takes, the captured mode kept,
a run killed halfway resumed without asking a recorded query again, chained windows, and bad
input refused before anything is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.cli import SCRIPT, kill_when, run_cli, start_script
from tests.conftest import capture_times_since

FIXTURE = Path(__file__).parents[2] / "runner/evalledger/suites/replay/fixtures/captured_demo.jsonl"
EXAMPLE = "evalledger.suites.replay.example_brain:answer"
INSERT = ("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,"
          " expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied, latency_ms, remote,"
          " capture_key, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, gen_random_uuid(), %s)"
          " RETURNING id")


def import_demo(dsn: str) -> None:
    result = run_cli("capture", "import", str(FIXTURE), env={"DATABASE_URL": dsn})
    assert result.code == 0, result.err


def replay(dsn: str, *args: str, env: dict | None = None):
    return run_cli("run", "replay", *args, env={"DATABASE_URL": dsn, **(env or {})})


def as_json(result) -> dict:
    assert result.code in (0, 1, 2), result.err
    return json.loads(result.out)


def scripted_brain(tmp_path: Path, body: str, name: str = "brain.py") -> str:
    """A command adapter: a Python script answering one request on stdin (body: the reply's code,
    given `request`), logging each id it was asked to asked.log; the --command line running it."""
    script = tmp_path / name
    script.write_text(textwrap.dedent("""\
        import json, sys, os
        sys.path.insert(0, {runner!r})
        from evalledger.suites.replay.example_brain import answer
        request = json.load(sys.stdin)
        with open({log!r}, "a") as log:
            log.write(str(request["id"]) + "\\n")
        """).format(runner=str(Path(__file__).parents[2] / "runner"), log=str(tmp_path / "asked.log"))
        + textwrap.dedent(body))
    return f"{sys.executable} {script}"


def asked(tmp_path: Path) -> list[int]:
    log = tmp_path / "asked.log"
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def test_unchanged_retrieval_passes(dsn, admin, tmp_path):
    import_demo(dsn)
    doc = as_json(replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--json"))
    assert doc["decision"] == "pass", doc["rationale"]
    assert doc["rationale"].startswith("Pass: mean recall 1.000 over 9 replayed queries")
    assert len(doc["queries"]) == 9
    for q in doc["queries"]:
        assert set(q) >= {"capture_id", "recall", "jaccard", "rbo", "sources_gained", "sources_lost",
                          "latency_ratio", "status"}
        assert (q["status"], q["recall"], q["jaccard"], q["rbo"], q["sources_gained"], q["sources_lost"]) == \
            ("replayed", 1.0, 1.0, 1.0, [], [])
        assert 0 < q["latency_ratio"] < 1
    stored = admin.execute("SELECT brain_version, adapter_kind, adapter, decision, completed_at IS NOT NULL "
                           "FROM evalledger.replay_run").fetchall()
    assert stored == [("v1", "python", EXAMPLE, "pass", True)]


def test_a_brain_that_lost_a_source_for_a_third_of_the_queries_fails_naming_them(dsn, admin, tmp_path):
    import_demo(dsn)
    ids = dict(admin.execute("SELECT query, id FROM evalledger.eval_candidates").fetchall())
    result = replay(dsn, "--brain-version", "v2", "--command", scripted_brain(tmp_path, """\
        lost = request["query"].startswith(("onboarding", "pricing", "renewal risk"))
        print(json.dumps(answer(request, drop_source="wiki" if lost else None)))
        """), "--json")
    assert result.code == 1, result.err
    doc = json.loads(result.out)
    assert doc["decision"] == "fail"
    lost = sorted(ids[q] for q in ("onboarding playbook setup", "pricing plan discount"))
    assert f"2 queries below 0.5: capture {lost[0]} (recall 0.000), capture {lost[1]} (recall 0.000)" \
        in doc["rationale"], doc["rationale"]
    by_id = {q["capture_id"]: q for q in doc["queries"]}
    assert by_id[ids["renewal risk playbook"]]["recall"] == 0.5
    assert by_id[ids["renewal risk playbook"]]["sources_lost"] == ["wiki"]
    assert by_id[ids["onboarding playbook setup"]]["sources_lost"] == ["wiki"]
    assert by_id[ids["rate limit error 429"]]["sources_lost"] == []
    assert sum(1 for q in doc["queries"] if q["sources_lost"]) == 3


def test_keyword_only_rows_are_replayed_keyword_only_or_recorded_not_replayable(dsn, admin, tmp_path):
    import_demo(dsn)
    keyword_only = {i for i, v in admin.execute("SELECT id, vector_enabled FROM evalledger.eval_candidates") if not v}
    assert len(keyword_only) == 2
    # The adapter sees the mode: it answers keyword-only rows keyword-only.
    seen = tmp_path / "modes.log"
    command = scripted_brain(tmp_path, f"""\
        open({str(seen)!r}, "a").write(json.dumps([request["id"], request["vector_enabled"]]) + "\\n")
        print(json.dumps(answer(request)))
        """)
    doc = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--json"))
    modes = dict(json.loads(line) for line in seen.read_text().splitlines())
    assert {i for i, vector in modes.items() if not vector} == keyword_only
    assert doc["decision"] == "pass"
    assert {q["status"] for q in doc["queries"]} == {"replayed"}
    assert admin.execute("SELECT count(*) FROM evalledger.replay_query WHERE NOT vector_enabled "
                         "AND NOT captured_vector_enabled").fetchone()[0] == 2
    # A brain that answers every row with vector search: the keyword-only rows are not replayable,
    # never counted; one that declines the vector rows leaves too few to decide.
    doc = as_json(replay(dsn, "--brain-version", "v1-always-vector", "--command", scripted_brain(tmp_path, """\
        print(json.dumps(dict(answer(request), vector_enabled=True)))
        """, "vector.py"), "--json"))
    statuses = {q["capture_id"]: q["status"] for q in doc["queries"]}
    assert {i for i, s in statuses.items() if s == "not_replayable"} == keyword_only
    assert all(q["recall"] is None for q in doc["queries"] if q["status"] == "not_replayable")
    assert doc["decision"] == "pass" and "2 not replayable" in doc["rationale"]
    result = replay(dsn, "--brain-version", "v1-keyword", "--python", EXAMPLE, "--tool", "search", "--json",
                    env={"EXAMPLE_BRAIN_KEYWORD_ONLY": "1"})
    assert result.code == 2, result.err
    doc = json.loads(result.out)
    assert doc["decision"] == "inconclusive"
    assert doc["rationale"] == ("Inconclusive: 2 of 4 queries replayed in their captured mode, at least 3 needed "
                                "(2 not replayable, 0 adapter failures).")


def test_adapter_failures_are_recorded_with_stderr_s_last_line(dsn, admin, tmp_path):
    import_demo(dsn)
    command = scripted_brain(tmp_path, """\
        if "429" in request["query"]:
            print("loading index", file=sys.stderr)
            print("index shard 7 is gone", file=sys.stderr)
            sys.exit(4)
        if "pricing" in request["query"]:
            print("not json")
            sys.exit(0)
        print(json.dumps(answer(request)))
        """)
    doc = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--json"))
    failed = {q["capture_id"]: q for q in doc["queries"] if q["status"] == "adapter_failed"}
    assert len(failed) == 2
    errors = sorted(q["error"] for q in failed.values())
    assert errors[0] == "exit 4: index shard 7 is gone"
    assert errors[1].startswith("the reply is not JSON")
    # 2 of 9 failed, above the rubric's share of 0.1.
    assert doc["decision"] == "fail" and "2 of 9 queries failed in the adapter" in doc["rationale"]


@pytest.mark.processes
@pytest.mark.process_timeouts
def test_a_timeout_is_an_adapter_failure(dsn, admin, tmp_path):
    import_demo(dsn)
    command = scripted_brain(tmp_path, """\
        import time
        if "pricing" in request["query"]:
            time.sleep(30)
        print(json.dumps(answer(request)))
        """)
    doc = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--timeout", "5", "--json"))
    failed = [q for q in doc["queries"] if q["status"] == "adapter_failed"]
    assert [q["error"] for q in failed] == ["timed out after 5 s"]


class _Brain(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        from evalledger.suites.replay.example_brain import answer

        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps(answer(request)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_url_adapter_is_posted_the_same_json(dsn, admin):
    import_demo(dsn)
    server = HTTPServer(("127.0.0.1", 0), _Brain)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/replay"
        doc = as_json(replay(dsn, "--brain-version", "v1", "--url", url, "--json"))
    finally:
        server.shutdown()
    assert doc["decision"] == "pass"
    assert admin.execute("SELECT adapter_kind, adapter FROM evalledger.replay_run").fetchall() == [("url", url)]


def test_an_export_file_is_replayed_as_the_ledger_is(dsn, admin, tmp_path):
    import_demo(dsn)
    export = run_cli("export", env={"DATABASE_URL": dsn})
    path = tmp_path / "week.ndjson"
    path.write_text(export.out)
    doc = as_json(replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--from", str(path), "--json"))
    assert doc["decision"] == "pass" and len(doc["queries"]) == 9
    assert doc["window"]["source"] == "file"
    assert admin.execute("SELECT count(*) FROM evalledger.replay_query q JOIN evalledger.replay_run r "
                         "USING (replay_run_id) WHERE r.source = 'file' AND q.recall = 1").fetchone()[0] == 9


@pytest.mark.parametrize("line, says", [
    ('{"id": 1}', "$.tool_name: missing"),
    ("not json", "not JSON"),
    ('[1, 2]', "not a JSON object"),
    ('{"schema_version": 2, "id": 1}', "schema_version 2"),
])
def test_a_bad_line_of_an_export_file_is_refused_naming_it_and_nothing_is_written(dsn, admin, tmp_path, line, says):
    import_demo(dsn)
    good = run_cli("export", "--limit", "1", env={"DATABASE_URL": dsn}).out
    path = tmp_path / "bad.ndjson"
    path.write_text(good + line + "\n")
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--from", str(path))
    assert result.code == 3
    assert result.err.startswith(f"evalledger: error: {path}:2: ") and says in result.err, result.err
    assert len(result.err.splitlines()) == 1
    assert admin.execute("SELECT count(*) FROM evalledger.replay_run").fetchone()[0] == 0


def test_a_duplicated_id_in_an_export_file_is_refused(dsn, admin, tmp_path):
    import_demo(dsn)
    good = run_cli("export", "--limit", "1", env={"DATABASE_URL": dsn}).out
    path = tmp_path / "twice.ndjson"
    path.write_text(good + good)
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--from", str(path))
    assert result.code == 3 and f"{path}:2: $.id:" in result.err, result.err


def test_options_that_do_not_go_together_are_refused(dsn, tmp_path):
    result = replay(dsn, "--brain-version", "v1")
    assert result.code == 3 and "one of --command, --url or --python" in result.err
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--url", "http://127.0.0.1:9/")
    assert result.code == 3 and "not --url and --python" in result.err
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--from", str(FIXTURE), "--since", "7d")
    assert result.code == 3 and "--since: a window of the ledger's captured rows" in result.err
    result = replay(dsn, "--brain-version", "v1", "--python", "no_such_module_here:answer")
    assert result.code == 3 and "cannot import no_such_module_here" in result.err


def test_chained_since_windows_replay_each_row_once(dsn, admin, tmp_path):
    since = capture_times_since(admin, 3)
    first = [admin.execute(INSERT, ("query", f"acme renewal {n}", ["accounts/acme"], [101, 102], ["crm"], None, None,
                                    None, True, False, 50, True, since + timedelta(minutes=n))).fetchone()[0]
             for n in range(3)]
    command = scripted_brain(tmp_path, """\
        print(json.dumps(answer(request)))
        """)
    one = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--since", since.isoformat(), "--json"))
    assert sorted(q["capture_id"] for q in one["queries"]) == sorted(first)
    # Rows captured after the first window's end (the next window holds them, not this one).
    later = [admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, "
                           "retrieved_chunk_ids, source_ids, vector_enabled, expansion_applied, latency_ms, remote, "
                           "capture_key) VALUES ('query', %s, '{accounts/acme}', '{101,102}', '{crm}', true, false, "
                           "50, true, gen_random_uuid()) RETURNING id", (f"acme renewal later {n}",)).fetchone()[0]
             for n in range(2)]
    two = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--since",
                         one["window"]["next_since"], "--json"))
    assert sorted(q["capture_id"] for q in two["queries"]) == sorted(later)
    assert sorted(asked(tmp_path)) == sorted(first + later)  # each row asked once
    three = replay(dsn, "--brain-version", "v1", "--command", command, "--since", two["window"]["next_since"])
    assert three.code == 2, three.err  # an empty window: too few to decide
    assert sorted(asked(tmp_path)) == sorted(first + later)


def test_the_gate_fails_unless_the_decision_is_pass(dsn, admin, tmp_path):
    import_demo(dsn)
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, "--gate")
    assert result.code == 0 and "gate: pass" in result.out
    result = replay(dsn, "--brain-version", "v1-keyword", "--python", EXAMPLE, "--gate", "--tool", "search",
                    env={"EXAMPLE_BRAIN_KEYWORD_ONLY": "1"})
    assert result.code == 1
    assert result.err.startswith("gate: inconclusive: Inconclusive:")


def test_the_same_window_replayed_again_is_read_back_without_a_query(dsn, admin, tmp_path):
    import_demo(dsn)
    until = admin.execute("SELECT clock_timestamp()").fetchone()[0].isoformat()
    command = scripted_brain(tmp_path, """\
        print(json.dumps(answer(request)))
        """)
    first = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--until", until, "--json"))
    assert len(asked(tmp_path)) == 9
    result = replay(dsn, "--brain-version", "v1", "--command", command, "--until", until)
    assert result.code == 0, result.err
    assert "recorded earlier: reading it back, no query asked" in result.out
    assert len(asked(tmp_path)) == 9
    again = as_json(replay(dsn, "--brain-version", "v1", "--command", command, "--until", until, "--json"))
    assert again == first


def test_a_run_left_open_past_the_hot_tier_is_closed_by_the_next_one(dsn, admin, tmp_path):
    """The runner's run of the same request, left open (one query recorded) until it aged past the
    hot tier, where the runner can no longer read or resume it: the same command closes it, says so,
    and replays the window in a new run; the old one is decided inconclusive, saying why."""
    from tests.db.test_replay_ages_with_retention import age

    import_demo(dsn)
    request = json.dumps({"since": None, "until": None, "tool": None, "limit": None, "remote": None})
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_runner")
        stale = admin.execute(
            "INSERT INTO evalledger.replay_run (brain_version, adapter_kind, adapter, source, request, until_at) "
            "VALUES ('v1', 'python', %s, 'ledger', %s, evalledger.capture_export_bound_v2()) RETURNING replay_run_id",
            (EXAMPLE, request)).fetchone()[0]
    age(admin, stale, "now() - interval '25 months'")
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE)
    assert result.code == 0, result.err
    assert (f"replay run {stale} of this request was left open past the hot tier, where no runner can resume it: "
            "the database closed it and decided it on what it recorded (an auditor reads the decision)" in result.out)
    assert "decision  pass" in result.out
    assert admin.execute("SELECT decision, rationale FROM evalledger.replay_run WHERE replay_run_id = %s",
                         (stale,)).fetchone() == (
        "inconclusive", "Inconclusive: closed unfinished, 0 of the 9 captured rows it planned recorded (0 replayed "
        "in their captured mode): the run was left open past the hot tier, where no runner can resume it, and a "
        "new run of the same request closed it.")


def test_the_same_window_replayed_past_the_hot_tier_says_why_it_cannot_be_read_back(dsn, admin, tmp_path):
    from tests.db.test_replay_ages_with_retention import age

    import_demo(dsn)
    until = admin.execute("SELECT clock_timestamp()").fetchone()[0].isoformat()
    args = ("--brain-version", "v1", "--python", EXAMPLE, "--until", until)
    first = as_json(replay(dsn, *args, "--json"))
    age(admin, first["replay_run_id"], "now() - interval '25 months'")
    result = replay(dsn, *args)
    assert result.code == 3
    assert result.err == (f"evalledger: error: brain v1 through python {EXAMPLE} replayed this window (or file) in "
                          "a run recorded before the hot tier this role reads: it cannot be read back here (an "
                          "auditor reads it); replay another window, or name another --brain-version\n")


def test_the_receipt_is_the_json_document(dsn, admin, tmp_path):
    import_demo(dsn)
    home = tmp_path / "home"
    result = replay(dsn, "--brain-version", "v1", "--python", EXAMPLE, env={"EVALLEDGER_HOME": str(home)})
    assert result.code == 0, result.err
    receipt = next((home / "eval-receipts").glob("replay-*.json"))
    assert f"receipt   {receipt}" in result.out
    assert json.loads(receipt.read_text())["decision"] == "pass"


@pytest.mark.processes
@pytest.mark.process_timeouts
def test_a_replay_killed_halfway_resumes_without_asking_a_recorded_query_again(dsn, admin, tmp_path):
    import_demo(dsn)
    gate = tmp_path / "go"
    command = scripted_brain(tmp_path, f"""\
        import time
        n = len(open({str(tmp_path / 'asked.log')!r}).read().split())
        while n > 4 and not os.path.exists({str(gate)!r}):
            time.sleep(0.05)
        print(json.dumps(answer(request)))
        """)
    args = ["run", "replay", "--brain-version", "v1", "--command", command, "--concurrency", "1"]
    env = {**os.environ, "DATABASE_URL": dsn}
    kill_when(start_script(*args, env=env),
              lambda: admin.execute("SELECT count(*) FROM evalledger.replay_query").fetchone()[0] >= 4,
              "recorded four queries")
    recorded = {i for (i,) in admin.execute("SELECT capture_id FROM evalledger.replay_query")}
    assert len(recorded) == 4
    asked_before = asked(tmp_path)
    gate.write_text("")
    done = subprocess.run([str(SCRIPT), *args, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert len(doc["queries"]) == 9 and doc["decision"] == "pass"
    asked_after = asked(tmp_path)[len(asked_before):]
    assert not recorded & set(asked_after), "a recorded query was asked again"
    # Each recorded query was asked once in all (the one the kill interrupted, not recorded, may be
    # asked by both runs: its answer never reached the ledger).
    assert all(asked(tmp_path).count(i) == 1 for i in recorded)
    assert admin.execute("SELECT count(*) FROM evalledger.replay_run").fetchone()[0] == 1


@pytest.mark.processes
@pytest.mark.process_timeouts
def test_two_replays_of_the_same_window_at_once_ask_each_query_once(dsn, admin, tmp_path):
    import_demo(dsn)
    until = admin.execute("SELECT clock_timestamp()").fetchone()[0].isoformat()  # one window for both
    command = scripted_brain(tmp_path, """\
        import time
        time.sleep(0.1)
        print(json.dumps(answer(request)))
        """)
    args = [str(SCRIPT), "run", "replay", "--brain-version", "v1", "--command", command, "--until", until, "--json"]
    env = {**os.environ, "DATABASE_URL": dsn}
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    docs = [json.loads(out) for out, _ in outs]
    assert docs[0]["replay_run_id"] == docs[1]["replay_run_id"]
    assert sorted(asked(tmp_path)) == sorted(q["capture_id"] for q in docs[0]["queries"])
