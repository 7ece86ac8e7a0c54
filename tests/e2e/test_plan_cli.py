"""`evalledger plan` and doctor's note (issue 36, item 6): the plan as the database computed it, in
text and in JSON valid against its schema; a bad --drop refused in one line; doctor warns about a
suite whose runs cannot detect its own regression threshold, and is quiet when they can."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest

from evalledger.core.paths import package_path
from tests.cli import run_cli
from tests.db.test_plan_from_history import FACTOR, takes_run

pytestmark = pytest.mark.db


def test_plan_prints_what_the_next_run_detects_and_what_a_drop_needs(dsn, connect_as):
    env = {"DATABASE_URL": dsn}
    assert run_cli("plan", env=env).out == "no completed run to plan from, as evalledger_auditor\n"
    runner = connect_as("evalledger_runner")
    takes_run(runner, [{"accuracy": 6}, {"accuracy": 7}, {"accuracy": 8}], "aaaaaaa1")
    takes_run(runner, [{"accuracy": 7}, {"accuracy": 8}, {"accuracy": 9}], "aaaaaaa2")
    shown = run_cli("plan", "--suite", "takes-quality", "--drop", "0.5", "--json", env=env)
    assert shown.code == 0 and shown.err == ""
    document = json.loads(shown.out)
    schema = json.loads(package_path("core", "schemas", "plan.v1.schema.json").read_text())
    jsonschema.validate(document, schema)
    rows = {r["measure"]: r for r in document["rows"]}
    assert rows["accuracy"]["mde"] == pytest.approx(FACTOR * math.sqrt(2 / 3), rel=1e-12)
    assert (rows["accuracy"]["needed_n"], rows["accuracy"]["detectable"], document["drop"]) == (63, False, 0.5)
    text = run_cli("plan", "--drop", "0.5", env=env).out
    assert text.startswith("takes-quality v1.1 (from its last 2 completed runs)\n")
    assert (f"  accuracy: with 3 judges the next run detects a drop of {FACTOR * math.sqrt(2 / 3):.3g} (80% power, "
            "5% two-sided; sd 1); its regression threshold 0.5 is NOT detectable; a drop of 0.5 needs 63 judges\n") in text
    assert "  weight_calibration: no spread in these runs to plan from (3 judges in the latest)\n" in text

    doctor = run_cli("doctor", env=env)
    assert doctor.code == 0  # a note, not a failure
    assert ("warn  plan: takes-quality v1.1: its runs cannot detect its own regression threshold 0.5 at 80% power "
            f"(accuracy detects {FACTOR * math.sqrt(2 / 3):.3g} with 3 judges); `evalledger plan --suite takes-quality "
            "--drop 0.5` says the sample it needs\n") in doctor.out


def test_doctor_is_quiet_when_the_runs_can_detect_their_threshold(dsn, connect_as):
    runner = connect_as("evalledger_runner")
    takes_run(runner, [{"accuracy": 8}, {"accuracy": 8}, {"accuracy": 8.1}], "aaaaaaa1")
    doctor = run_cli("doctor", env={"DATABASE_URL": dsn})
    assert " plan: " not in doctor.out


@pytest.mark.parametrize("args, says", [
    (("--drop", "0"), "--drop"), (("--drop", "nan"), "--drop"), (("--runs", "1"), "--runs"),
])
def test_bad_input_is_refused_in_one_line(dsn, args, says):
    refused = run_cli("plan", *args, env={"DATABASE_URL": dsn})
    assert refused.code == 3 and refused.out == ""
    assert refused.err.startswith("evalledger: error: ") and says in refused.err and refused.err.count("\n") == 1
