"""The harness commands' --json output is valid against the schemas shipped in the package."""

from __future__ import annotations

import json

import jsonschema
import pytest

from evalledger.core.paths import package_path
from tests.cli import run_cli


def read_json(result, name: str) -> dict:
    """stdout as JSON, valid against suites/brain_eval/schemas/<name>.v1.schema.json."""
    assert result.code == 0, result.err
    assert result.err == "", result.err
    document = json.loads(result.out)
    found = json.loads(package_path("suites", "brain_eval", "schemas", f"{name}.v1.schema.json").read_text())
    jsonschema.validate(document, found, format_checker=jsonschema.FormatChecker())
    return document


@pytest.fixture
def env(dsn):
    return {"DATABASE_URL": dsn}


VIEWS = """
CREATE SCHEMA crm;
CREATE TABLE crm.accounts (account_id int PRIMARY KEY, name text, status text, arr numeric);
CREATE VIEW crm.v_active AS SELECT account_id, name FROM crm.accounts WHERE status = 'active';
CREATE VIEW crm.v_big AS SELECT account_id, arr FROM crm.accounts WHERE arr > 1000 ORDER BY arr DESC;
"""


def test_contracts_hash_json_from_live_views_and_files(env, admin, tmp_path):
    admin.execute(VIEWS)
    live = read_json(run_cli("contracts", "hash", "--schema", "crm", "--json", env=env), "contracts_hash")
    assert [v["name"] for v in live["views"]] == ["v_active", "v_big"]
    assert live["source"].startswith("database ") and live["source"].endswith(" schema crm")

    files = tmp_path / "views"
    files.mkdir()
    (files / "crm.sql").write_text(
        "create view crm.v_active as select account_id, name from accounts where (status = 'active');\n"
        "CREATE VIEW v_big AS SELECT account_id, arr FROM crm.accounts WHERE (arr > 1000::numeric) ORDER BY arr DESC;\n")
    from_files = read_json(run_cli("contracts", "hash", "--dir", str(files), "--schema", "crm", "--json", env=env),
                           "contracts_hash")
    assert from_files["brain_view_contracts_hash"] == live["brain_view_contracts_hash"]
    assert from_files["views"] == live["views"]


def test_contracts_hash_schema_refuses_another_shape():
    found = json.loads(package_path("suites", "brain_eval", "schemas", "contracts_hash.v1.schema.json").read_text())
    good = {"brain_view_contracts_hash": "a" * 64, "canonical_form": "canon-v1", "source": "folder x schema crm",
            "views": [{"name": "v", "sha256": "b" * 64}]}
    jsonschema.validate(good, found)
    for bad in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "views"},
                {**good, "views": [{"name": "v", "sha256": "short"}]}, {**good, "brain_view_contracts_hash": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, found)


# -- run brain-eval and review show -----------------------------------------------------------------

from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE  # noqa: E402
from tests.e2e.test_harness_cli import demo_file, harness, run_args  # noqa: E402,F401  (fixtures)


def test_run_brain_eval_and_review_show_json(env, harness):
    run = read_json(run_cli(*run_args(harness, "--questions", "EVAL-Q03,EVAL-Q07,EVAL-Q24", "--json"), env=env),
                    "run_brain_eval")
    assert (run["resumed"], run["answers_mode"], run["judges_mode"], run["asked"], run["failed"]) == (
        False, "recorded", "recorded", 3, {})
    assert run["brain"]["target_id"] == "AGT-902" and run["catalog_version"] == "v28-2026Q2"
    assert run["contracts"]["source"] == f"folder {harness}"
    assert [a["question_id"] for a in run["answers"]] == ["EVAL-Q03", "EVAL-Q07", "EVAL-Q24"]
    assert [a["contract_error"] for a in run["answers"]] == [None, None, "not a JSON document"]
    assert len(run["suggestions"]) == 6  # three judges on each answer that keeps the contract

    again = read_json(run_cli(*run_args(harness, "--questions", "EVAL-Q03,EVAL-Q07,EVAL-Q24", "--json"), env=env),
                      "run_brain_eval")
    assert (again["eval_run_id"], again["resumed"], again["asked"]) == (run["eval_run_id"], True, 0)

    blind = read_json(run_cli("review", "show", run["eval_run_id"], "--as", REVIEWER_ROLE, "--json", env=env),
                      "review_show")
    assert [(len(r["suggestions"]), r["suggestions_hidden"]) for r in blind] == [(0, True), (0, True), (0, True)]
    review = read_json(run_cli("review", "show", run["eval_run_id"], "--as", REVIEWER_ROLE, "--show-suggestions",
                               "--json", env=env), "review_show")
    assert [r["question_id"] for r in review] == ["EVAL-Q03", "EVAL-Q07", "EVAL-Q24"]
    assert [(len(r["suggestions"]), r["suggestions_hidden"]) for r in review] == [(3, False), (3, False), (0, False)]
    assert review[0]["uses_stale_fixture"] is True and review[2]["contract_error"] == "not a JSON document"
    one = read_json(run_cli("review", "show", run["eval_run_id"], "EVAL-Q07", "--as", REVIEWER_ROLE, "--json",
                            env=env), "review_show")
    assert one == [review[1]]
    stranger = run_cli("review", "show", run["eval_run_id"], "--as", OTHER_REVIEWER_ROLE, "--json", env=env)
    assert (stranger.code, stranger.out) == (3, "")

    # The shapes are closed: one key more anywhere is refused.
    schemas = {n: json.loads(package_path("suites", "brain_eval", "schemas", f"{n}.v1.schema.json").read_text())
               for n in ("run_brain_eval", "review_show")}
    for name, bad in [("run_brain_eval", {**run, "extra": 1}),
                      ("run_brain_eval", {**run, "answers": [{**run["answers"][0], "extra": 1}]}),
                      ("run_brain_eval", {**run, "suggestions": [{**run["suggestions"][0], "verdict": "pass"}]}),
                      ("run_brain_eval", {**run, "brain": {**run["brain"], "extra": 1}}),
                      ("review_show", [{**review[0], "extra": 1}]),
                      ("review_show", [{**review[0], "suggestions": [{**review[0]["suggestions"][0], "x": 1}]}]),
                      ("review_show", [{k: v for k, v in review[0].items() if k != "narrative"}])]:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schemas[name])

