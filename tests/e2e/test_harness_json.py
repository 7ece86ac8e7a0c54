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
