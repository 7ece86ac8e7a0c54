"""The CLI end to end: help for every command, exact output, exit codes and one-line errors."""

import os
import re

import click
import psycopg
from click.testing import CliRunner
from psycopg.conninfo import make_conninfo
import pytest

from evalledger.cli import cli
from evalledger.core.migrate import read_migrations
from tests.cli import run_cli


def all_commands(group=cli, path=()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from all_commands(command, (*path, name))


@pytest.mark.parametrize("path", [p for p, _ in all_commands()], ids=" ".join)
def test_every_command_has_help(path):
    command = dict(all_commands())[path]
    assert command.help and command.help.strip(), f"{' '.join(path)} has no docstring"
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    first_line = command.help.strip().splitlines()[0]
    assert " ".join(first_line.split()) in " ".join(result.output.split())


def test_status_lists_every_migration(dsn):
    result = run_cli("db", "status", env={"DATABASE_URL": dsn})
    assert result.code == 0
    assert result.out == "".join(f"applied  {m.id}\n" for m in read_migrations())


def test_migrate_twice_is_a_no_op(dsn):
    result = run_cli("db", "migrate", "--database-url", dsn)
    assert (result.code, result.out) == (0, "up to date\n")


def test_unknown_flag_is_one_line_exit_3():
    result = run_cli("db", "status", "--bogus")
    assert result.code == 3
    assert result.err == "evalledger: error: db status: No such option '--bogus'.\n"


def test_unreachable_database_is_one_line_exit_3(tmp_path):
    result = run_cli("db", "status", env={"DATABASE_URL": f"postgresql://nobody@/nodb?host={tmp_path}"})
    assert result.code == 3
    assert result.err.startswith(f"evalledger: error: cannot reach the database at nobody@{tmp_path}:5432/nodb: ")
    assert result.err.count("\n") == 1


def test_demo_prints_the_database_decision_once(dsn):
    first = run_cli("demo", env={"DATABASE_URL": dsn})
    assert first.code == 0, first.err
    assert "brain-eval (a 30-question harness run of AGT-902" in first.out
    assert "the demo reviewer scores from fixtures/harness_demo_review.jsonl\n" in first.out
    assert "  decision  fail\n" in first.out
    assert ("  rationale Fail: hard criteria missed: lever mapping 6.7pp below 100%; "
            "also confidence calibration 80pp below band.\n") in first.out
    again = run_cli("demo", env={"DATABASE_URL": dsn})
    assert again.code == 0
    assert "was completed by an earlier demo; reading it back" in again.out
    assert "  decision  fail\n" in again.out
    # The run left for the person running the demo, and credentials that sign in (new each demo).
    turns = [re.fullmatch(r"your turn: run (\S+) \(30 questions\) waits for reviewer evalledger_demo_you, "
                          r"password (\S+) \(new each demo\)", line)
             for out in (first.out, again.out) for line in out.splitlines() if line.startswith("your turn")]
    assert len(turns) == 2 and all(turns) and turns[0][1] == turns[1][1] and turns[0][2] != turns[1][2]
    if not os.environ.get("DATABASE_URL"):
        with psycopg.connect(make_conninfo(dsn, user="evalledger_demo_you", password=turns[1][2])) as conn:
            assert conn.execute("SELECT count(*) FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s",
                                (turns[1][1],)).fetchone()[0] == 30
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(make_conninfo(dsn, user="evalledger_demo_you", password=turns[0][2]))


def test_doctor_passes_on_a_migrated_database(dsn):
    result = run_cli("doctor", env={"DATABASE_URL": dsn})
    assert result.code == 0, result.out
    checks = [line.split(":")[0] for line in result.out.splitlines()]
    assert checks[:-1] == [
        "ok    database", "ok    migrations", "ok    version", "ok    roles", "ok    memberships",
        "ok    guard triggers", "ok    code", "ok    event triggers", "ok    journal"]
    # The prices' age is the day's (test_doctor_warns_when_a_price_is_older_than_90_days): a warning at most.
    assert checks[-1] in ("ok    pricing", "warn  pricing")


@pytest.mark.parametrize("days, level", [(0, "ok"), (90, "ok"), (91, "warn"), (400, "warn")])
def test_doctor_warns_when_a_price_is_older_than_90_days(dsn, admin, monkeypatch, days, level):
    """By the database's day, whatever the day the tests run on."""
    import datetime

    from evalledger.judges import pricing

    today = admin.execute("SELECT (now() AT TIME ZONE 'UTC')::date").fetchone()[0]
    taken = today - datetime.timedelta(days=days)
    monkeypatch.setattr(pricing, "oldest_price", lambda: ("openai:gpt-4o", taken))
    result = run_cli("doctor", env={"DATABASE_URL": dsn})
    assert result.code == 0, result.out  # a warning, not a failure
    line = next(line for line in result.out.splitlines() if line.split(":")[0].endswith("pricing"))
    assert line.startswith(f"{level:<6}pricing: the oldest price (of openai:gpt-4o) was taken on "
                           f"{taken.isoformat()}, {days} days ago"), line
    assert ("over 90" in line) == (level == "warn")


def test_doctor_fails_when_a_guard_is_gone(dsn, admin):
    admin.execute("DROP EVENT TRIGGER evalledger_drop_guard_v1")
    admin.execute("DROP EVENT TRIGGER evalledger_ddl_guard_v1")
    admin.execute("ALTER TABLE brain_eval_log DISABLE TRIGGER brain_eval_log_00_append_only")
    result = run_cli("doctor", env={"DATABASE_URL": dsn})
    assert result.code == 1
    assert "fail  guard triggers: not ENABLE ALWAYS: brain_eval_log.brain_eval_log_00_append_only\n" in result.out
    assert "warn  event triggers: absent" in result.out


def test_doctor_on_an_empty_database_says_what_is_missing(dsn, admin):
    admin.execute("CREATE DATABASE evalledger_doctor_empty")
    try:
        empty = make_conninfo(dsn, dbname="evalledger_doctor_empty")
        result = run_cli("doctor", env={"DATABASE_URL": empty})
        assert result.code == 1
        assert "fail  migrations: pending: " in result.out
    finally:
        admin.execute("DROP DATABASE evalledger_doctor_empty WITH (FORCE)")
