"""A proof shows the whole run (issue 35, item 3): the auditor's proof of a run sealed beside a `tuner add`
(an entry the auditor's row-level security hides) checks with check.py alone; a proof with a row removed, a
row added, cut to one row, or relabelled to another run fails; a run's completion journals its manifest."""

from __future__ import annotations

import json

import pytest

from evalledger.ledger import check, proof
from tests.builders import record_run
from tests.cli import run_cli
from tests.e2e.test_journal_cli import digest_to, env, standalone_check  # noqa: F401  (env: a fixture)


@pytest.fixture
def runs(env, admin, connect_as, reviewer_id):  # noqa: F811
    """Two runs: the first completed after a `tuner add`, so that its completion's entries (the run's row and its
    manifest) follow the tuner's in the block completion seals; the second completed before."""
    import uuid

    runner = connect_as("evalledger_runner")
    other = str(record_run(runner, reviewer_id, count=2, brain="AGT-902").eval_run_id)
    run = str(record_run(runner, reviewer_id, count=3, complete=False))
    added = run_cli("tuner", "add", "AGT-902", str(uuid.uuid4()), env=env)
    assert added.code == 0, added.err
    completed = run_cli("brain-eval", "complete", run, env=env)
    assert completed.code in (0, 1), completed.err
    return run, other


@pytest.fixture
def beside_a_tuner(runs):
    return runs[0]


def test_the_auditors_proof_beside_a_tuner_add_checks(env, admin, beside_a_tuner, tmp_path):  # noqa: F811
    digest = digest_to(env, tmp_path / "d.json")
    tuner_block, = admin.execute(
        "SELECT b.block_id FROM evalledger.ledger_block b JOIN evalledger.ledger_journal j "
        "ON j.txid >= b.lo_txid AND j.txid < b.hi_txid WHERE j.table_name = 'prompt_tuner'").fetchone()
    made = run_cli("ledger", "proof", beside_a_tuner, "--digest", str(tmp_path / "d.json"),
                   "--out", str(tmp_path / "p.json"), env=env)
    assert made.code == 0, made.err
    shown = json.loads((tmp_path / "p.json").read_text())
    assert tuner_block == shown["manifest"]["block"], "the run's completion shares a block with the tuner's entry"
    assert shown["schema_version"] == 2 and shown["manifest"]["entry"]["op"] == "MANIFEST"
    assert digest["block"] in {b["header"]["block"] for b in shown["blocks"]}
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "d.json")
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert done.stdout.startswith(f"ok: {len(shown['rows'])} rows of {beside_a_tuner}, every row its manifest names")


def test_the_manifest_names_every_row_of_the_run_and_nothing_else(env, admin, beside_a_tuner, tmp_path):  # noqa: F811
    digest_to(env, tmp_path / "d.json")
    run_cli("ledger", "proof", beside_a_tuner, "--out", str(tmp_path / "p.json"), env=env)
    shown = json.loads((tmp_path / "p.json").read_text())
    named = {(i["table"], check.canonical_json(i["key"])) for i in shown["manifest"]["entry"]["key"]}
    assert named == {(r["table"], check.canonical_json(r["key"])) for r in shown["rows"]}
    assert {t for t, _ in named} >= {"brain_eval_log", "brain_eval_question_score", "brain_analysis_log", "rubric",
                                     "brain_eval_run_review", "brain_eval_review_entry"}
    # One manifest per completed run, in the completion's transaction.
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal j JOIN evalledger.ledger_journal c "
                         "ON c.txid = j.txid AND c.table_name = 'brain_eval_log' AND c.operation = 'UPDATE' "
                         "WHERE j.operation = 'MANIFEST' AND strpos(j.row_key, %s) > 0",
                         (beside_a_tuner,)).fetchone()[0] == 1


def test_the_manifest_covers_the_tables_the_proof_reads(admin):
    """The manifest function's tables are the proof's RUN_TABLES (but legal holds, which come after), with the
    analyses and the rubric: one list, held equal."""
    source, = admin.execute("SELECT prosrc FROM pg_proc WHERE proname = 'brain_eval_manifest_v1'").fetchone()
    import re

    by_run = set(re.findall(r"FROM evalledger\.(\w+) x WHERE x\.eval_run_id = run", source))
    assert by_run == {t for t, _ in proof.RUN_TABLES} - set(check.AFTER_COMPLETION)
    assert set(re.findall(r"FROM evalledger\.(\w+) x\n", source)) == {"brain_analysis_log", "rubric"}


@pytest.mark.parametrize("tamper, says", [
    ("removed", "a row of the run's manifest is missing from the proof"),
    ("added", "the run's manifest does not name it: a row added to the proof"),
    ("cut to one row", "a row of the run's manifest is missing from the proof"),
    ("relabelled", "the proof is of run "),
])
def test_a_proof_that_is_not_the_whole_run_fails(env, runs, tmp_path, tamper, says):  # noqa: F811
    beside_a_tuner, other = runs
    digest_to(env, tmp_path / "d.json")
    for run, name in ((beside_a_tuner, "p.json"), (other, "q.json")):
        assert run_cli("ledger", "proof", run, "--digest", str(tmp_path / "d.json"), "--out", str(tmp_path / name),
                       env=env).code == 0
    shown = json.loads((tmp_path / "p.json").read_text())
    theirs = json.loads((tmp_path / "q.json").read_text())
    if tamper == "removed":
        shown["rows"] = [r for r in shown["rows"] if r["table"] != "brain_eval_question_score"][:-1] + \
            [r for r in shown["rows"] if r["table"] == "brain_eval_question_score"][1:]
    elif tamper == "added":  # a question row of the other run, itself in the ledger and checking alone
        shown["rows"].append(next(r for r in theirs["rows"] if r["table"] == "brain_eval_question_score"))
        shown["blocks"] += [b for b in theirs["blocks"] if b not in shown["blocks"]]
    elif tamper == "cut to one row":
        shown["rows"] = shown["rows"][:1]
    else:  # the whole proof relabelled to the other run
        shown["subject"]["run"] = other
    (tmp_path / "p.json").write_text(json.dumps(shown))
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "d.json")
    assert done.returncode == 1, done.stdout
    assert says in done.stdout and all(line.startswith("FAIL: ") for line in done.stdout.splitlines()), done.stdout


def test_a_proof_of_a_run_not_complete_is_refused(env, connect_as, reviewer_id, tmp_path):  # noqa: F811
    open_run = str(record_run(connect_as("evalledger_runner"), reviewer_id, count=2, complete=False))
    digest_to(env, tmp_path / "d.json")
    made = run_cli("ledger", "proof", open_run, env=env)
    assert made.code == 3 and f"run {open_run} has no manifest: it is not complete" in made.err


def test_a_cancelled_runs_manifest_names_its_closure(env, connect_as, reviewer_id, tmp_path):  # noqa: F811
    """The manifest is journalled at the completing transaction's commit: a cancellation's closure, written in
    it, is in it."""
    open_run = str(record_run(connect_as("evalledger_runner"), reviewer_id, count=2, complete=False))
    cancelled = run_cli("brain-eval", "cancel", open_run, "--reason", "the fixture was wrong", env=env)
    assert cancelled.code in (0, 1), cancelled.err
    digest_to(env, tmp_path / "d.json")
    assert run_cli("ledger", "proof", open_run, "--out", str(tmp_path / "p.json"), env=env).code == 0
    shown = json.loads((tmp_path / "p.json").read_text())
    assert {"key": {"eval_run_id": open_run}, "table": "brain_eval_run_closure"} in shown["manifest"]["entry"]["key"]
    done = standalone_check(tmp_path, tmp_path / "p.json", tmp_path / "d.json")
    assert done.returncode == 0, done.stdout
