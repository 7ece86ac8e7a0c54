"""Each verdict with its uncertainty, through the command line (issue 36, docs/statistics.md): after the
demo, `brain-eval show --json`, `takes-quality show` and `snapshot show` carry the intervals the
database computed (the same numbers its functions return), the plain texts print them beside the
verdicts, the takes-quality receipt with its optional stderr and ci95 is still one every reader of
schema_version 1 accepts, and the snapshot's optional fields round-trip; no verdict changes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from evalledger.core import reader
from evalledger.core.paths import package_path
from evalledger.suites.takes_quality import receipts
from evalledger.suites.work_quality import go_json, snapshot as snap_mod
from tests.cli import run_cli

pytestmark = [pytest.mark.db, pytest.mark.shared_db]


def schema(folder: str, name: str) -> dict:
    return json.loads(package_path(*folder.split("/"), "schemas", f"{name}.v1.schema.json").read_text())


@pytest.fixture
def demo_env(dsn, shared_rows):
    def build():
        env = {"DATABASE_URL": dsn}
        assert run_cli("demo", env=env).code == 0
        return env
    return shared_rows("demo", build)


def test_brain_eval_show_carries_each_aggregates_interval(demo_env, admin):
    run_id = run_cli("brain-eval", "list", "--decision", "fail", "-q", env=demo_env).out.strip()
    shown = run_cli("brain-eval", "show", run_id, "--json", env=demo_env)
    document = json.loads(shown.out)
    jsonschema.validate(document, schema("suites/brain_eval", "brain_eval_run"))
    u = document["uncertainty"]
    # The numbers are the database's own, as the run's completion stored them (to the last bit), which
    # its functions asked again give too; and the estimates are the aggregates the decision used.
    assert json.dumps(u, sort_keys=True) == json.dumps(admin.execute(
        "SELECT uncertainty FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s", (run_id,)).fetchone()[0],
        sort_keys=True)
    assert u == admin.execute("SELECT evalledger.brain_eval_uncertainty_v1(%s)", (run_id,)).fetchone()[0]
    for key, value in document["aggregated_scores"].items():
        assert (u[key] is None) == (value is None)
        if value is not None:
            assert u[key]["estimate"] == pytest.approx(float(value), rel=1e-12)
            assert u[key]["ci95"][0] <= u[key]["estimate"] <= u[key]["ci95"][1]
    assert u["hallucination_rate"]["criterion"]["bound"] == u["hallucination_rate"]["ci95"][1]
    assert u["staleness_recognition_rate"]["method"] == "exact"  # 5 of 5 recognised
    assert document["decision"] == "fail" and shown.code == 1  # the decision and its exit code as before

    text = run_cli("brain-eval", "show", run_id, env=demo_env).out
    h = u["hallucination_rate"]
    assert (f"    hallucination rate {100 * h['estimate']:.1f}% (95% CI {100 * h['ci95'][0]:.1f}–"
            f"{100 * h['ci95'][1]:.1f}%, {h['n']} claims in {h['clusters']} questions); criterion <= 2.0%: "
            f"upper bound {100 * h['ci95'][1]:.1f}%\n") in text
    assert "    staleness recognition 100.0% (95% CI 54.9–100.0%, 5 questions in " in text


def test_takes_quality_show_carries_the_judges_spread_and_a_receipt_every_reader_accepts(demo_env, admin, tmp_path):
    run_id = run_cli("takes-quality", "list", "-q", env=demo_env).out.split()[0]
    shown = run_cli("takes-quality", "show", run_id, "--json", env=demo_env)
    document = json.loads(shown.out)
    jsonschema.validate(document, schema("suites/takes_quality", "takes_quality_run"))
    u = document["uncertainty"]
    assert u == admin.execute("SELECT evalledger.takes_quality_uncertainty_v1(%s)", (int(run_id),)).fetchone()[0]
    receipt = document["receipt"]
    for dim, scores in receipt["scores"].items():
        assert scores["stderr"] == u[dim]["stderr"] and scores["ci95"] == u[dim]["ci95"]
        assert u[dim]["n"] == len(scores["scores"]) and u[dim]["method"] == "judges"
        assert u[dim]["estimate"] == pytest.approx(sum(scores["scores"]) / len(scores["scores"]), rel=1e-12)
    # The receipt with its optional fields is one the contract and this runner's reader accept.
    jsonschema.validate(receipt, schema("suites/takes_quality", "takes_quality_receipt"))
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(receipt))
    assert receipts.load(path) == receipt
    assert receipts.check(reader.parse_json(json.dumps(receipt), "receipt")) == receipt
    # seed 000's own disk-only reader, `replay`, re-renders it and exits by its verdict; --json keeps the fields.
    replayed = run_cli("replay", str(path), "--json")
    assert replayed.code == {"pass": 0, "fail": 1, "inconclusive": 2}[receipt["verdict"]]
    assert json.loads(replayed.out)["scores"] == receipt["scores"]
    assert run_cli("replay", str(path)).code == replayed.code
    # The stored receipt is the trigger's, unchanged: no stderr in it.
    stored = admin.execute("SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE id = %s",
                           (int(run_id),)).fetchone()[0]
    assert all("stderr" not in s for s in stored["scores"].values())
    assert {k: {f: v for f, v in s.items() if f not in ("stderr", "ci95")} for k, s in receipt["scores"].items()} \
        == stored["scores"]
    text = run_cli("takes-quality", "show", run_id, env=demo_env).out
    assert "uncertainty (the judges' spread on this sample, not the sampling of takes; docs/statistics.md)\n" in text
    a = u["accuracy"]
    assert f"  accuracy {a['estimate']:.2f} (95% CI {a['ci95'][0]:.2f}–{a['ci95'][1]:.2f}, 3 judges)\n" in text


def test_snapshot_show_prints_the_intervals_and_its_optional_fields_round_trip(demo_env, admin):
    plain = run_cli("snapshot", "show", "demo-run-2", "--json", env=demo_env).out
    stored = admin.execute("SELECT snapshot_json FROM evalledger.eval_work_quality_snapshots WHERE run_id = 'demo-run-2'"
                           ).fetchone()[0]
    u = admin.execute("SELECT evalledger.work_quality_uncertainty_v1(%s::jsonb)", (json.dumps(stored),)).fetchone()[0]
    with_u = run_cli("snapshot", "show", "demo-run-2", "--json", "--uncertainty", env=demo_env).out
    snap = snap_mod.loads(with_u)
    assert snap.aggregate.stderr == {k: v["stderr"] for k, v in u.items()}
    assert snap.aggregate.ci95 == {k: v["ci95"] for k, v in u.items()}
    assert go_json.dumps(snap) == with_u
    # Without --uncertainty the Snapshot is the seed's shape, exactly as stored.
    snap.aggregate.stderr = snap.aggregate.ci95 = None
    assert go_json.dumps(snap) == plain
    text = run_cli("snapshot", "show", "demo-run-2", env=demo_env).out
    o = u["overall"]
    assert f"  overall {o['estimate']:.3f} (95% CI {o['ci95'][0]:.3f}–{o['ci95'][1]:.3f}, 2 judges)\n" in text
    assert "compared  with demo-run-1: WORSE" in text
