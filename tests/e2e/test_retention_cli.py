"""evalledger hold add|release|list and retention plan|apply, as a user runs them."""

from __future__ import annotations

import json
import uuid

import jsonschema
import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from evalledger.core.paths import package_path
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.cli import run_cli
from tests.conftest import TEST_PASSWORD, ensure_login_role
from tests.db.test_retention import age_run


def read_json(result, name):
    assert result.code == 0, result.err
    found = json.loads(result.out)
    jsonschema.validate(found, json.loads(package_path("core", "schemas", f"{name}.v1.schema.json").read_text()))
    return found


@pytest.fixture
def env(dsn):
    return {"DATABASE_URL": dsn}


@pytest.fixture
def old_run(admin, connect_as, reviewer_id):
    """A run of AGT-902 recorded 8 years ago: past the purge horizon."""
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    run_id = record_run(connect_as("evalledger_runner"), reviewer_id, brain="AGT-902", count=2, complete=False)
    age_run(admin, run_id, "now() - interval '8 years'")
    return run_id


def plan_of(env) -> dict[str, dict]:
    return {r["table_name"]: r for r in read_json(run_cli("retention", "plan", "--json", env=env),
                                                  "retention_plan")["rows"]}


def test_a_hold_keeps_a_run_until_released_then_apply_purges_it(env, admin, old_run):
    added = run_cli("hold", "add", "--run", str(old_run), "--reason", "litigation 2026-17", env=env)
    assert added.code == 0, added.err
    hold_id = int(added.out.split()[1])
    assert added.out.startswith(f"hold {hold_id} placed at ")

    plan = plan_of(env)
    assert (plan["brain_eval_log"]["due"], plan["brain_eval_log"]["held"]) == (0, 1)
    assert plan["brain_eval_log"]["held_by"] == f"hold {hold_id} (run {old_run}): 1"
    text = run_cli("retention", "plan", env=env).out.splitlines()
    assert text[0].split() == ["table_name", "hot", "cold", "due", "held", "held_by"]

    kept = run_cli("retention", "apply", env=env)
    assert (kept.code, kept.out) == (0, "nothing is due for purge\n")

    released = run_cli("hold", "release", str(hold_id), "--reason", "settled", env=env)
    assert released.code == 0, released.err
    assert released.out.startswith(f"hold {hold_id} released at ")
    again = run_cli("hold", "release", str(hold_id), "--reason", "twice", env=env)
    assert (again.code, again.err.strip()) == (3, f"evalledger: error: hold {hold_id} is already released "
                                                  "(evalledger hold list)")
    unknown = run_cli("hold", "release", str(hold_id + 1000), "--reason", "no such hold", env=env)
    assert (unknown.code, unknown.err.strip()) == (3, f"evalledger: error: no hold {hold_id + 1000} "
                                                      "(evalledger hold list)")

    assert plan_of(env)["brain_eval_log"]["due"] == 1
    purged = read_json(run_cli("retention", "apply", "--json", env=env), "retention_purge")["rows"]
    assert {(r["table_name"], r["eval_run_id"]) for r in purged} >= {
        ("brain_eval_log", str(old_run)), ("brain_eval_question_score", str(old_run)), ("legal_hold", str(old_run))}
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                         (old_run,)).fetchone()[0] == 0
    log = admin.execute("SELECT purged_by, table_name, eval_run_id FROM evalledger.retention_purge_log "
                        "ORDER BY purge_log_id").fetchall()
    assert [(t, str(r) if r else None) for _, t, r in log] == [(r["table_name"], r["eval_run_id"]) for r in purged]
    assert run_cli("retention", "apply", env=env).out == "nothing is due for purge\n"


@pytest.mark.parametrize("scope", ["brain", "range"])
def test_brain_and_range_holds(env, admin, old_run, scope):
    args = (["--brain", "AGT-902"] if scope == "brain"
            else ["--from", "2000-01-01T00:00:00+00:00", "--to", "2099-12-31T00:00:00+00:00"])
    added = run_cli("hold", "add", *args, "--reason", "matter 7", env=env)
    assert added.code == 0, added.err
    assert run_cli("retention", "apply", env=env).out == "nothing is due for purge\n"
    rows = read_json(run_cli("hold", "list", "--active", "--json", env=env), "holds")["rows"]
    assert [(r["scope"], r["reason"], r["brain"]) for r in rows] == [
        (scope, "matter 7", "AGT-902" if scope == "brain" else None)]
    assert rows[0]["placed_by"] == admin.info.user


@pytest.mark.parametrize("args, says", [
    (["--brain", "AGT-902", "--run", str(uuid.uuid4())], "a hold covers exactly one of --brain, --run or --from/--to"),
    (["--from", "2020-01-01"], "a range hold needs both --from and --to"),
    (["--from", "2021-01-01", "--to", "2020-01-01"], "is after --to"),
    (["--run", "not-a-run"], "--run 'not-a-run' is not a run id (a UUID)"),
    (["--run", "00000000-0000-0000-0000-000000000000"], "no run 00000000-0000-0000-0000-000000000000"),
    (["--brain", "AGT-999"], "no target 'AGT-999'"),
])
def test_a_bad_hold_is_one_line_and_writes_nothing(env, admin, args, says):
    result = run_cli("hold", "add", *args, "--reason", "r", env=env)
    assert result.code == 3 and says in result.err and len(result.err.strip().splitlines()) == 1, result.err
    assert admin.execute("SELECT count(*) FROM evalledger.legal_hold").fetchone()[0] == 0


def test_only_the_installer_or_the_retention_role_applies(dsn, admin, old_run):
    """A login that may act as the owner and the auditor, but not as evalledger_retention."""
    name = "evalledger_test_not_a_purger"
    ensure_login_role(admin, name, "evalledger_owner")
    admin.execute(f"GRANT evalledger_auditor TO {name}")
    env = {"DATABASE_URL": make_conninfo(dsn, user=name, password=TEST_PASSWORD)}
    assert run_cli("retention", "plan", env=env).code == 0
    refused = run_cli("retention", "apply", env=env)
    assert refused.code == 3
    assert refused.err.strip() == ("evalledger: error: only the installer or a member of evalledger_retention purges "
                                   "(GRANT evalledger_retention TO <user>)")
    with psycopg.connect(make_conninfo(dsn, user=name, password=TEST_PASSWORD), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SET ROLE evalledger_retention")
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 1
