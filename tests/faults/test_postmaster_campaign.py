"""The fault campaign's server part: the embedded PostgreSQL's postmaster SIGKILLed in the middle
of a `capture import` and of a `run brain-eval` against the stand-in, at moments the campaign's
seed draws. The same command again starts the server on demand (crash recovery) and resumes: every
row stored once, no question asked again once its answer was stored, `ledger verify` clean. A
cluster of its own (slow): the session's server is shared by every other test of the worker."""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from evalledger.suites.brain_eval.store import add_reviewer
from tests.cli import SCRIPT, recorded_demo_file, run_cli
from tests.clusters import cluster, ok
from tests.conftest import REVIEWER_ROLE, ensure_login_role
from tests.faults.conftest import assert_verified
from tests.faults.test_brain_eval_campaign import BRAIN, JUDGES, Asked, assert_one_run_stored_once, drawn_questions
from tests.outages import killed_when, wait_until
from tests.standin import steps

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.xdist_group("postmaster_cluster")]


@pytest.fixture(scope="module")
def server():
    """An embedded cluster of its own home, migrated; removed after the module."""
    parent = Path(tempfile.mkdtemp(prefix="evalledger-faults-"))
    os.chmod(parent, 0o711)
    with cluster(parent, "home") as made:
        ok(run_cli("db", "migrate", env=made.env))
        yield made


def kill_the_postmaster(made) -> None:
    pid = int((made.server.pgdata / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(pid), 30)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Watcher:
    """Counts on the cluster from a session of its own, made again after the server went away
    (0 while it is down)."""

    def __init__(self, made):
        self.made = made
        self.conn: psycopg.Connection | None = None

    def __call__(self, query: str) -> int:
        try:
            if self.conn is None or self.conn.closed or self.conn.broken:
                self.conn = psycopg.connect(self.made.url(), autocommit=True, connect_timeout=2)
            return self.conn.execute(query).fetchone()[0]
        except psycopg.OperationalError:
            self.conn = None
            return 0

    def close(self):
        if self.conn is not None:
            self.conn.close()


@pytest.fixture
def counted(server):
    watcher = Watcher(server)
    yield watcher
    watcher.close()


def test_the_postmaster_killed_mid_import_and_the_same_import_again_stores_every_line_once(server, counted, tmp_path,
                                                                                         faults):
    total = faults.randint(8000, 15000)
    log = tmp_path / "capture.ndjson"
    log.write_text("".join(json.dumps({"tool_name": "query", "query": f"postmaster line {i}", "vector_enabled": True,
                                       "latency_ms": 1, "remote": False}) + "\n" for i in range(total)))
    rows = "SELECT count(*) FROM evalledger.eval_candidates WHERE query LIKE 'postmaster line %'"
    before = counted(rows)
    at = faults.randint(500, total - 3000)
    killed = []

    def postmaster_at_rows():
        if not killed and counted(rows) >= before + at:
            kill_the_postmaster(server)
            killed.append(True)
        return False  # the import itself is left to end as it will

    killed_when([str(SCRIPT), "capture", "import", str(log)], server.env, postmaster_at_rows)
    print(f"postmaster killed at {at} of {total} rows: {bool(killed)}")
    again = run_cli("capture", "import", str(log), env=server.env)
    assert (again.code, again.err) == (0, ""), again.out + again.err
    # The rows the first import spooled once the server was gone are replayed first, on a line of
    # their own; the file's own counts add up to the file.
    summary = re.fullmatch(rf"(replayed .*\n)?imported {re.escape(str(log))}: {total} rows: (\d+) written, "
                           r"(\d+) already present, 0 failed\n", again.out)
    assert summary and int(summary.group(2)) + int(summary.group(3)) == total, again.out
    with psycopg.connect(server.url(), autocommit=True) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT capture_key), count(DISTINCT query) "
                            "FROM evalledger.eval_candidates WHERE query LIKE 'postmaster line %'").fetchone() == \
            (total, total, total)
    assert_verified(server.env)


def test_the_postmaster_killed_mid_run_and_the_same_run_again_asks_nothing_stored_again(
        server, counted, tmp_path, standin, faults):
    """The runner loses its connection while the brain answers or the judges draft: it stops with
    one line saying to run the same command again, and that resumes the run."""
    env = {**server.env, "EVALLEDGER_HOME": str(server.home), **standin.env()}
    with psycopg.connect(server.url(), autocommit=True) as conn:
        ensure_login_role(conn, REVIEWER_ROLE, "evalledger_reviewer")
        add_reviewer(conn, REVIEWER_ROLE, "A")
        conn.execute("SET search_path = evalledger, public")
        already = conn.execute("SELECT count(*) FROM brain_eval_log").fetchone()[0]
    assert already == 0, "one run per module: the counts below are of it"
    recorded_demo_file(tmp_path, env)
    views = tmp_path / "views"
    views.mkdir()
    (views / "accounts.sql").write_text("CREATE VIEW v_accounts AS SELECT account_id, name FROM accounts;\n")
    for model in (BRAIN, *JUDGES):
        standin.set_default(model, steps.ok(latency_s=0.05))
    questions = drawn_questions(faults, 4, 7)
    n = questions.count(",") + 1
    args = ["run", "brain-eval", "--brain", "AGT-902", "--catalog", "v28-2026Q2", "--trigger", "quarterly",
            "--reviewer", REVIEWER_ROLE, "--views-dir", str(views), "--concurrency", "1", "--questions", questions]
    table = faults.choice(["brain_eval_harness_answer", "brain_eval_judge_suggestion"])
    at = faults.randint(1, n - 1 if table == "brain_eval_harness_answer" else n)
    killed = []

    def postmaster_at_rows():
        if not killed and counted(f"SELECT count(*) FROM evalledger.{table}") >= at:
            kill_the_postmaster(server)
            killed.append(time.monotonic())
        return False

    errors = tempfile.TemporaryFile("w+")
    stopped = killed_when([str(SCRIPT), *args], env, postmaster_at_rows, stderr=errors)
    assert not stopped
    errors.seek(0)
    said = errors.read()
    print(f"postmaster killed at {at} {table} rows: {bool(killed)}; the runner said: {said}")
    server.server.start()  # to read what survived; the same command would start it on demand too
    with psycopg.connect(server.url(), autocommit=True) as admin:
        asked = Asked(admin, standin)
        if killed:
            assert said.startswith("evalledger: error: ") and said.count("\n") == 1, said
            # What happened and what to do (issue 39): the same command resumes the run.
            assert "connection was lost" not in said or said.endswith("run the same command again: it resumes "
                                                                     "the run\n"), said
            asked.killed()
        again = run_cli(*args, env=env)
        assert again.code == 0, again.out + again.err
        assert_one_run_stored_once(admin, n)
        asked.assert_nothing_stored_was_asked_again()
        asked.assert_the_last_resumption_asked_only_the_rest(n)
    assert_verified(env)
