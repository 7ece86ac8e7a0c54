"""work-quality end to end, in process (click's CliRunner): a real PostgreSQL, the real openai and
anthropic SDKs pointed at the provider stand-in, snapshot files on disk."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalledger.cli import cli
from evalledger.suites.work_quality import snapshot as snap_mod
from evalledger.suites.work_quality.snapshot import DIMENSIONS
from tests.standin import FAKE_KEYS, steps

PANEL = "openai:gpt-4o,anthropic:claude-opus-4-7"
GO_HISTORY = Path(__file__).resolve().parents[1] / "go" / "snapshot_roundtrip" / "testdata" / "history"


@pytest.fixture
def env(standin, dsn, tmp_path):
    return {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"),
            "EVALLEDGER_WORK_QUALITY_MODELS": None}


@pytest.fixture
def work(tmp_path) -> Path:
    path = tmp_path / "fix.diff"
    path.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    return path


class Judges:
    """What the stand-in's judges answer: per model, every dimension at one score."""

    def __init__(self, standin):
        self.scores = {"gpt-4o": 0.8, "claude-opus-4-7": 0.8}
        self.value = {}
        standin.responder = self.respond

    def respond(self, model, system, user):
        score = self.scores[model]
        body = {d: score for d in DIMENSIONS}
        body["value_for_money"] = self.value.get(model, score)
        body.update(narrative=f"{model} read the diff.", confidence=0.7,
                    relative_vs_prev={d: "n/a" for d in DIMENSIONS}, relative_narrative="")
        return body


@pytest.fixture
def judges(standin):
    return Judges(standin)


def wq(env, work, *args, input=None):
    argv = ["run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix add()",
            "--work-product", str(work), "--models", PANEL, "--retries", "0", "--deadline", "0", *args]
    return CliRunner().invoke(cli, argv, env=env, input=input, catch_exceptions=False)


def invoke(env, *args):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def store_files(tmp_path, name="review-pr"):
    return sorted((tmp_path / "home" / "quality" / name).glob("*.json"))


def count(admin, sql, *params):
    return admin.execute(sql, params).fetchone()[0]


# --- two runs, the second regresses ----------------------------------------------------------


def test_two_runs_the_second_regresses_and_the_gate_exits_1(env, work, judges, standin, admin, tmp_path):
    first = wq(env, work, "--run-id", "run-1", "--gate", "--json", "--family", "anthropic")
    assert first.exit_code == 0, first.stderr
    assert first.stderr == ""
    [path1] = store_files(tmp_path)
    assert first.stdout == path1.read_text()  # --json: the snapshot and nothing else
    snap1 = snap_mod.loads(first.stdout)
    assert snap1.comparison is None and snap1.prev_run_id == "" and snap1.aggregate.mean_scores["overall"] == 0.8
    assert [v.same_family_as_bot for v in snap1.aggregate.verdicts] == [False, True]
    assert snap1.aggregate.note == "judge anthropic:claude-opus-4-7 shares the assessed run's family (anthropic)"
    first_prompts = standin.requests
    assert len(first_prompts) == 2
    assert all("no previous assessment" in r.system and "first snapshot" in r.user for r in first_prompts)
    assert all(set(DIMENSIONS) <= set(r.schema["properties"]) for r in first_prompts)

    judges.scores = {"gpt-4o": 0.7, "claude-opus-4-7": 0.71}  # overall 0.705: a drop of 0.095
    second = wq(env, work, "--run-id", "run-2", "--gate")
    assert second.exit_code == 1, second.stderr
    assert second.stderr == ("regression: overall dropped -0.095 (vs run-1) (tolerance 0.08)\n"
                             "regression: value_for_money dropped -0.095 (vs run-1) (tolerance 0.08)\n")
    assert "compared  with run-1: WORSE  overall -0.095, value_for_money -0.095" in second.stdout
    path1_again, path2 = store_files(tmp_path)
    assert path1_again == path1
    snap2 = snap_mod.loads(path2.read_text())
    assert snap2.prev_run_id == "run-1" and snap2.comparison.verdict == "worse"
    assert snap2.comparison.overall_delta == -0.095  # numeric in the database, not 0.7050000000000001 - 0.8
    # The second prompt shows the judges the first snapshot and asks for the relative judgement.
    later = standin.requests[2:]
    assert all("prev_run_id: run-1" in r.user and "overall: 0.80" in r.user and "relative_vs_prev" in r.system
               and "PREVIOUS assessment" in r.system for r in later)
    # The ledger holds both snapshots and all four verdicts, as the file says.
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots WHERE completed_at IS NOT NULL") == 2
    assert count(admin, "SELECT count(*) FROM eval_work_quality_judge_verdicts WHERE contributes") == 4
    assert count(admin, "SELECT snapshot_json -> 'comparison' FROM eval_work_quality_snapshots WHERE run_id = 'run-2'"
                 ) == json.loads(path2.read_text())["comparison"]
    dump = json.dumps(admin.execute("SELECT to_jsonb(v)::text FROM eval_work_quality_judge_verdicts v").fetchall())
    for key in FAKE_KEYS.values():
        assert key not in dump and key not in second.stdout + second.stderr


def test_without_the_gate_a_regression_is_reported_and_exits_0(env, work, judges):
    assert wq(env, work, "--run-id", "a").exit_code == 0
    judges.scores = {"gpt-4o": 0.5, "claude-opus-4-7": 0.5}
    result = wq(env, work, "--run-id", "b")
    assert result.exit_code == 0
    assert "regression: overall dropped -0.300 (vs a) (tolerance 0.08)" in result.stdout


def test_a_drop_of_exactly_the_tolerance_passes_the_gate_and_a_wider_tolerance_too(env, work, judges):
    assert wq(env, work, "--run-id", "a").exit_code == 0
    judges.scores = {"gpt-4o": 0.72, "claude-opus-4-7": 0.72}  # -0.08 exactly
    result = wq(env, work, "--run-id", "b", "--gate")
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "gate: no regression (tolerance 0.08)")
    judges.scores = {"gpt-4o": 0.6, "claude-opus-4-7": 0.6}  # -0.12 from b
    assert wq(env, work, "--run-id", "c", "--gate", "--tolerance", "0.15").exit_code == 0
    assert wq(env, work, "--run-id", "d", "--gate", "--tolerance", "0.15").exit_code == 0  # same scores: no drop


# --- judges skipped, all failing, same family ------------------------------------------------


def test_a_skipped_judge_is_noted_and_the_other_carries_the_snapshot(env, work, judges, standin):
    standin.script("claude-opus-4-7", steps.server_error(500))
    result = wq(env, work, "--run-id", "a", "--json")
    assert result.exit_code == 0, result.stderr
    snap = snap_mod.loads(result.stdout)
    assert [v.model for v in snap.aggregate.verdicts] == ["openai:gpt-4o"]
    assert snap.aggregate.disagreement is None  # one judge: no spread to show
    assert snap.aggregate.note.startswith("judge anthropic:claude-opus-4-7 skipped: provider_error: HTTP 500")


def test_an_off_contract_reply_is_skipped(env, work, judges, standin):
    standin.responder = lambda model, s, u: judges.respond(model, s, u) if model == "gpt-4o" else {"overall": 3}
    result = wq(env, work, "--run-id", "a", "--json")
    assert result.exit_code == 0, result.stderr
    assert "judge anthropic:claude-opus-4-7 skipped: incomplete_scores" in snap_mod.loads(result.stdout).aggregate.note


def test_all_judges_failing_is_exit_3_and_no_snapshot_is_written(env, work, judges, standin, admin, tmp_path):
    standin.set_default("*", steps.server_error(503))
    result = wq(env, work, "--run-id", "a")
    assert result.exit_code == 3
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("evalledger: error: no judge produced a verdict")
    assert store_files(tmp_path) == []
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots WHERE completed_at IS NOT NULL") == 0


# --- evidence and input errors ---------------------------------------------------------------


def test_a_git_range_and_stdin_are_evidence(env, judges, standin, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
                                     *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    (repo / "app.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    (repo / "app.py").write_text("x = 2\n")
    git("commit", "-qam", "two")
    result = wq(env, "git:HEAD~1..HEAD", "--repo", str(repo), "--run-id", "g", "--json")
    assert result.exit_code == 0, result.stderr
    assert snap_mod.loads(result.stdout).evidence_digest.startswith("git diff HEAD~1..HEAD: 1 file changed")
    assert "-x = 1\n+x = 2" in standin.requests[0].user
    piped = wq(env, "-", "--run-id", "s", "--json", input="created issue #7: login fails\n")
    assert piped.exit_code == 0, piped.stderr
    assert snap_mod.loads(piped.stdout).evidence_digest == "stdin: 1 line, 30 characters; begins: created issue #7: login fails"


@pytest.mark.parametrize("metrics, says", [
    ('{"tokens": "many"}', ":1: $.tokens: expected an integer, got a string"),
    ('{"cost_usd": 1, "price": 2}', ":1: $.price: unknown field"),
    ('{"tokens": 1,\n "cost_usd": }', ":2: column 14: not JSON"),
    ('{"tokens": 1,\n "tokens": 2}', ':2: $.tokens: key "tokens" given twice in one object'),
    ('{"cost_usd": NaN}', ":1: $.cost_usd: NaN is not a number (JSON has no NaN or Infinity)"),
    ('{"tokens": 99999999999999999999}', ":1: $.tokens: the integer 99999999999999999999 is past the range"),
    ("null", ":1: expected an object, got null"),
])
def test_bad_metrics_are_exit_3_naming_the_field_with_nothing_written(env, work, judges, standin, admin, tmp_path,
                                                                      metrics, says):
    path = tmp_path / "m.json"
    path.write_text(metrics)
    result = wq(env, work, "--metrics", str(path))
    assert result.exit_code == 3 and says in result.stderr and str(path) in result.stderr
    assert result.stderr.count("\n") == 1
    assert standin.requests == [] and store_files(tmp_path) == []
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots") == 0


def test_metrics_reach_the_snapshot_and_the_prompt(env, work, judges, standin, tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"cost_usd": 0.12, "tokens": 3456, "duration_ms": 9000, "iterations": 2, "model_calls": 5, '
                    '"retries": 1}')
    result = wq(env, work, "--metrics", str(path), "--run-id", "m", "--json")
    assert result.exit_code == 0, result.stderr
    assert snap_mod.loads(result.stdout).metrics == snap_mod.Metrics(0.12, 3456, 9000, 2, 5, 1)
    assert "cost_usd: 0.1200\ntokens: 3456" in standin.requests[0].user


@pytest.mark.parametrize("args, says", [
    (["--work-product", "/nonexistent/x.diff"], "/nonexistent/x.diff: no such file or directory"),
    (["--name", " "], "--name: must not be blank"),
    (["--run-id", "a\nb"], "--run-id: must be one line"),
    (["--models", "openai:gpt-4o,openai:gpt-4o"], "on the panel twice"),
    (["--tolerance", "-1"], "Invalid value for '--tolerance': must be 0 or more, got -1\n"),
    (["--tolerance", "nan"], "Invalid value for '--tolerance': 'nan' is not a finite number\n"),
    (["--concurrency", "0"], "Invalid value for '--concurrency': must be from 1 to 1,024, got 0\n"),
    (["--timeout", "-1"], "Invalid value for '--timeout': must be more than 0, got -1\n"),
    (["--retries", "-1"], "Invalid value for '--retries': must be from 0 to 100, got -1\n"),
])
def test_bad_options_are_exit_3_before_any_call(env, work, judges, standin, args, says):
    result = wq(env, work, *args)
    assert result.exit_code == 3 and says in result.stderr
    assert standin.requests == []


def test_the_same_run_id_again_reads_the_snapshot_back_without_calls(env, work, judges, standin, tmp_path):
    first = wq(env, work, "--run-id", "a", "--json")
    calls = len(standin.requests)
    again = wq(env, work, "--run-id", "a", "--json")
    assert again.exit_code == 0 and again.stdout == first.stdout and len(standin.requests) == calls
    assert len(store_files(tmp_path)) == 1


def test_the_panel_comes_from_the_environment(env, work, judges, standin):
    result = CliRunner().invoke(cli, ["run", "work-quality", "--kind", "feature", "--name", "perm", "--task", "t",
                                      "--work-product", str(work), "--json"],
                                env={**env, "EVALLEDGER_WORK_QUALITY_MODELS": "openai/gpt-4o"})
    assert result.exit_code == 0, result.stderr
    assert [v.model for v in snap_mod.loads(result.stdout).aggregate.verdicts] == ["openai:gpt-4o"]


def test_offline_the_recorded_judges_are_labelled(dsn, work, tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": None,
           "ANTHROPIC_API_KEY": None}
    unasked = wq(env, work, "--run-id", "offline")
    assert unasked.exit_code == 3
    assert unasked.stderr == ("evalledger: error: no API key for openai:gpt-4o (set OPENAI_API_KEY), "
                              "anthropic:claude-opus-4-7 (set ANTHROPIC_API_KEY): set them for live judges, or pass "
                              "--judges recorded to use the replies recorded with evalledger's demo (written for the "
                              "demo's corpus, not yours)\n")
    assert store_files(tmp_path) == []
    result = wq(env, work, "--run-id", "offline", "--judges", "recorded")
    assert result.exit_code == 0, result.stderr
    assert "judges: recorded replies shipped with evalledger, not live calls" in result.stdout
    [path] = store_files(tmp_path)
    assert snap_mod.loads(path.read_text()).aggregate.note.startswith(
        "recorded replies shipped with evalledger, not live calls: openai:gpt-4o, anthropic:claude-opus-4-7")


# --- reading: list, show, compare, import -----------------------------------------------------


def test_snapshot_list_show_and_compare(env, work, judges, tmp_path):
    wq(env, work, "--run-id", "a")
    judges.scores = {"gpt-4o": 0.7, "claude-opus-4-7": 0.7}
    wq(env, work, "--run-id", "b")
    listed = invoke(env, "snapshot", "list", "review-pr", "--json")
    assert [(r["run_id"], r["verdict"], r["regression_reasons"]) for r in json.loads(listed.stdout)] == [
        ("a", None, []), ("b", "worse", ["overall dropped -0.100 (vs a)", "value_for_money dropped -0.100 (vs a)"])]
    path_a, path_b = store_files(tmp_path)
    shown = invoke(env, "snapshot", "show", "b", "--json")
    assert shown.exit_code == 0 and shown.stdout == path_b.read_text()
    assert "compared  with a: WORSE" in invoke(env, "snapshot", "show", str(path_b)).stdout
    regressed = invoke(env, "snapshot", "compare", str(path_a), "b")
    assert regressed.exit_code == 1
    assert regressed.stderr == "regression: overall dropped -0.100 (vs a) (tolerance 0.08)\n" \
                               "regression: value_for_money dropped -0.100 (vs a) (tolerance 0.08)\n"
    assert invoke(env, "snapshot", "compare", "a", "b", "--tolerance", "0.1").exit_code == 0  # exactly 0.1: none
    improved = invoke(env, "snapshot", "compare", "b", "a", "--json")
    assert improved.exit_code == 0 and json.loads(improved.stdout)["comparison"]["verdict"] == "better"
    missing = invoke(env, "snapshot", "show", "nope")
    assert missing.exit_code == 3 and "no completed snapshot with this run id" in missing.stderr


def test_snapshot_import_of_a_go_history_is_idempotent_and_then_the_baseline(env, work, judges, admin, tmp_path):
    first = invoke(env, "snapshot", "import", str(GO_HISTORY))
    assert (first.exit_code, first.stdout) == (0, f"imported 2 snapshots from {GO_HISTORY}\n")
    again = invoke(env, "snapshot", "import", str(GO_HISTORY / "review-pr"))
    assert (again.exit_code, again.stdout) == (0, f"imported 0 snapshots from {GO_HISTORY / 'review-pr'} "
                                                  f"(2 already in the ledger)\n")
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots") == 2
    # The ledger's copy of a Go-written file shows exactly as the file is.
    name = sorted(p.name for p in (GO_HISTORY / "review-pr").glob("*.json"))[0]
    assert invoke(env, "snapshot", "show", "run-a", "--json").stdout == (GO_HISTORY / "review-pr" / name).read_text()
    result = wq(env, work, "--run-id", "live", "--json")
    assert snap_mod.loads(result.stdout).prev_run_id == "run-b"


def test_a_broken_history_file_imports_nothing(env, admin, tmp_path):
    target = tmp_path / "hist" / "bot"
    target.mkdir(parents=True)
    for path in (GO_HISTORY / "review-pr").glob("*.json"):
        (target / path.name).write_text(path.read_text())
    bad = target / "20990101T000000Z__bad.json"
    bad.write_text('{\n  "schema_version": 1,\n  "kind": "bot",\n  "name": "x",\n  "run_id": 5\n}\n')
    result = invoke(env, "snapshot", "import", str(tmp_path / "hist"))
    assert result.exit_code == 3 and f"{bad}:5: $.run_id: expected a string, got a number" in result.stderr
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots") == 0


def test_another_schema_version_is_skipped_with_a_warning(env, admin, tmp_path):
    target = tmp_path / "hist" / "bot"
    target.mkdir(parents=True)
    for path in (GO_HISTORY / "review-pr").glob("*.json"):
        doc = path.read_text()
        (target / path.name).write_text(doc.replace('"schema_version": 1', '"schema_version": 2')
                                        if "run-b" in path.name else doc)
    result = invoke(env, "snapshot", "import", str(target))
    assert result.exit_code == 0 and result.stdout == f"imported 1 snapshot from {target}\n"
    assert "schema_version 2, not 1: skipped" in result.stderr


def test_a_store_history_is_the_baseline_when_the_ledger_has_none(env, work, judges, tmp_path):
    store = tmp_path / "store"
    (store / "review-pr").mkdir(parents=True)
    for path in (GO_HISTORY / "review-pr").glob("*.json"):
        (store / "review-pr" / path.name).write_text(path.read_text())
    result = wq(env, work, "--run-id", "live", "--store", str(store))
    assert result.exit_code == 0, result.stderr
    assert "imported 2 earlier snapshots of review-pr" in result.stdout
    assert "compared  with run-b: BETTER" in result.stdout
    assert len(list((store / "review-pr").glob("*.json"))) == 3


# --- the demo step ---------------------------------------------------------------------------


def test_the_demo_judges_twice_and_prints_the_regression(dsn, tmp_path, capsys, monkeypatch):
    from evalledger.suites.work_quality.demo import work_quality_demo

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    outcome = work_quality_demo(dsn, store=str(tmp_path / "store"))
    out = capsys.readouterr().out
    # The second run's replies are the ones recorded for its own prompt, not the defaults.
    assert outcome.snapshot.comparison.verdict == "worse"
    assert "compared  with demo-run-1: WORSE  overall -0.600, value_for_money -0.750" in out
    assert "regression: overall dropped -0.600 (vs demo-run-1)" in out
    again = work_quality_demo(dsn, store=str(tmp_path / "store"))
    assert again.already_recorded and "read back" in capsys.readouterr().out


def test_a_stale_store_file_warns_on_stderr_and_json_stdout_stays_the_snapshot(env, work, judges, tmp_path):
    store = tmp_path / "store"
    (store / "review-pr").mkdir(parents=True)
    for path in (GO_HISTORY / "review-pr").glob("*.json"):
        doc = path.read_text()
        (store / "review-pr" / path.name).write_text(
            doc.replace('"schema_version": 1', '"schema_version": 2') if "run-b" in path.name else doc)
    result = wq(env, work, "--run-id", "live", "--store", str(store), "--json")
    assert result.exit_code == 0, result.stderr
    assert "schema_version 2, not 1: skipped" in result.stderr
    assert snap_mod.loads(result.stdout).prev_run_id == "run-a"  # the stale newer file is no baseline


def test_a_run_stopped_halfway_resumes_asking_only_the_missing_judge(env, work, judges, standin, connect_as, admin):
    import hashlib

    from psycopg.types.json import Jsonb

    from evalledger.suites.work_quality import evidence

    runner = connect_as("evalledger_runner")
    sha = hashlib.sha256(evidence.gather(str(work)).text.encode()).hexdigest()
    sid = runner.execute(
        "INSERT INTO eval_work_quality_snapshots (origin, kind, name, run_id, task, evidence_sha256, models) "
        "VALUES ('run', 'bot', 'review-pr', 'half', 'fix add()', %s, %s) RETURNING snapshot_id",
        (sha, PANEL.split(","))).fetchone()[0]
    runner.execute("INSERT INTO eval_work_quality_judge_verdicts (snapshot_id, model, recorded, response_json) "
                   "VALUES (%s, 'openai:gpt-4o', false, %s)",
                   (sid, Jsonb({**{d: 0.6 for d in DIMENSIONS}, "narrative": "earlier", "confidence": 0.5})))
    result = wq(env, work, "--run-id", "half")
    assert result.exit_code == 0, result.stderr
    assert "was started earlier and has no snapshot yet: judging it again, calling only the judges without a " \
           "verdict" in result.stdout
    assert [r.model for r in standin.requests] == ["claude-opus-4-7"]
    assert count(admin, "SELECT count(*) FROM eval_work_quality_judge_verdicts WHERE NOT call_started") == 2
    assert count(admin, "SELECT snapshot_json #> '{aggregate,mean_scores,overall}' FROM eval_work_quality_snapshots"
                 ) == 0.7


@pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain on PATH (install Debian's golang-go)")
def test_go_reads_and_rewrites_the_files_a_real_run_writes(env, work, judges, standin, tmp_path):
    from tests.unit.test_work_quality_go import build_reader, run_reader

    assert wq(env, work, "--run-id", "a", "--family", "openai").exit_code == 0
    judges.scores = {"gpt-4o": 0.3333333333333333, "claude-opus-4-7": 0.1}
    standin.responder = lambda model, s, u: {**judges.respond(model, s, u), "narrative": "<b>&</b> \u2028 ok",
                                             "relative_vs_prev": {d: "worse" for d in DIMENSIONS},
                                             "relative_narrative": "worse than \"a\""}
    assert wq(env, work, "--run-id", "b").exit_code == 0
    files = store_files(tmp_path)
    assert len(files) == 2 and "comparison" in files[1].read_text()
    done = run_reader(build_reader(tmp_path), *files)
    assert done.returncode == 0, done.stderr
