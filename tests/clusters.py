"""Real clusters for the backup and dump tests: embedded servers of their own homes, the primary
they copy, and what a role sees of a ledger, compared whole."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from evalledger.core.embedded import EmbeddedServer
from tests.cli import run_cli
from tests.conftest import REVIEWER_ROLE, TEST_PASSWORD, ensure_login_role
from tests.provisioning import TEST_SERVER_SETTINGS

ROLES = ("evalledger_owner", "evalledger_runner", "evalledger_reviewer", REVIEWER_ROLE, "evalledger_revops",
         "evalledger_auditor", "evalledger_agent", "evalledger_retention")
PANELS = ("brain_quarterly_trend_v1", "most_failing_questions_v1", "stale_fixture_pass_rate_v1",
          "reviewer_calibration_v1", "cost_per_run_v1", "prompt_drift_v1", "work_quality_history_v1")


class Cluster:
    """An embedded cluster of its own home, removed (data, socket, home) by remove()."""

    def __init__(self, home: Path):
        self.home = home
        self.server = EmbeddedServer(home)

    @property
    def env(self) -> dict:
        return {"EVALLEDGER_HOME": str(self.home), "DATABASE_URL": "", "DATABASE_READ_URL": ""}

    def url(self, dbname: str = "evalledger") -> str:
        return psycopg.conninfo.make_conninfo(self.server.dsn(), dbname=dbname)

    def start(self, backed_up: bool = False) -> "Cluster":
        """Start it without the flushes a test cluster needs not (a cluster backed up or replicated
        keeps full_page_writes, which base backups rely on)."""
        self.server.start()
        settings = {k: v for k, v in TEST_SERVER_SETTINGS.items() if not (backed_up and k == "full_page_writes")}
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            for name, value in settings.items():
                conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
            conn.execute("SELECT pg_reload_conf()")
        return self

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self.server.remove()
        shutil.rmtree(self.home, ignore_errors=True)


@contextlib.contextmanager
def cluster(parent: Path, name: str, start: bool = True, backed_up: bool = False):
    made = Cluster(parent / name)
    try:
        yield made.start(backed_up) if start else made
    finally:
        made.remove()


def ok(result):
    assert result.code == 0, f"exit {result.code}\n{result.out}\n{result.err}"
    return result


def ledger_primary():
    """The primary: the demo's ledger, a reviewer login with a password, and a hot and a cold run,
    in a folder of its own (parent) that other clusters and archives of the tests share."""
    parent = Path(tempfile.mkdtemp(prefix="evalledger-backup-test-"))
    os.chmod(parent, 0o711)  # as root, the server's system user reaches the archive folder inside
    try:
        yield from _primary(parent)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _primary(parent: Path):
    from tests.db.test_dashboards import tiered_ledger
    from evalledger.suites.brain_eval.store import add_reviewer

    with cluster(parent, "primary", backed_up=True) as made:
        ok(run_cli("db", "migrate", env=made.env))
        with psycopg.connect(made.url(), autocommit=True) as admin:
            admin.execute("SET search_path = evalledger, public")
            ensure_login_role(admin, REVIEWER_ROLE, "evalledger_reviewer")
            reviewer = add_reviewer(admin, REVIEWER_ROLE, "A")

            def connect_as(role):
                conn = psycopg.connect(made.url(), autocommit=True)
                conn.execute("SET search_path = evalledger, public")
                conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
                opened.append(conn)
                return conn

            opened = []
            with _journalled_clocks():
                made.cold, made.hot = tiered_ledger(admin, connect_as, reviewer)
            for conn in opened:
                conn.close()
        ok(run_cli("demo", env=made.env))
        made.parent = parent
        yield made


@contextlib.contextmanager
def _journalled_clocks():
    """The cold run aged as the retention tests age runs, but with the journal's triggers left on:
    the rewrite is an UPDATE entry of the journal, so `ledger verify` holds the aged ledger whole
    (docs/ledger.md, "a change the journal was left on for")."""
    from tests.db import test_retention

    lifting = test_retention.clocks_unguarded

    @contextlib.contextmanager
    def sparing_the_journal(admin, tables):
        with lifting(admin, tables):
            for table in tables:
                for (name,) in admin.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT "
                                             "tgisinternal AND tgname LIKE %s", (f"evalledger.{table}", r"%\_90\_journal%")):
                    admin.execute(sql.SQL("ALTER TABLE evalledger.{} ENABLE ALWAYS TRIGGER {}").format(
                        sql.Identifier(table), sql.Identifier(name)))
            yield

    test_retention.clocks_unguarded = sparing_the_journal
    try:
        yield
    finally:
        test_retention.clocks_unguarded = lifting


def every_role_sees(url: str) -> dict:
    """{(role, relation): its rows as sorted text, or the SQLSTATE refusing it} for every ledger role."""
    seen = {}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        relations = [r for (r,) in conn.execute(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'evalledger' "
            "AND c.relkind IN ('r', 'p', 'v') ORDER BY 1")]
        for role in ROLES:
            for relation in relations:
                try:
                    with conn.transaction():
                        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
                        rows = conn.execute(sql.SQL("SELECT t::text FROM {} t").format(sql.SQL(relation))).fetchall()
                    seen[role, relation] = sorted(r[0] for r in rows)
                except psycopg.Error as exc:
                    seen[role, relation] = f"refused {exc.sqlstate}"
    return seen


def dashboards(env: dict) -> dict:
    """Every panel as RevOps and as the auditor read it; the rows in a fixed order (a panel's query has
    none, and a restored or loaded table may return them in another)."""
    shown = {}
    for panel in PANELS:
        for role in ("revops", "auditor"):
            found = json.loads(ok(run_cli("dashboard", panel, "--as", role, "--json", env=env)).out)
            key = next(k for k, v in found.items() if isinstance(v, list))
            found[key] = sorted(found[key], key=lambda row: json.dumps(row, sort_keys=True))
            shown[panel, role] = found
    return shown


def assert_the_same_ledger(url: str, env: dict, before: dict, shown: dict) -> None:
    """The ledger at url is the one seen before: every role's rows, every dashboard, doctor with no
    failure, and the reviewer's login signing in with the password it had."""
    assert every_role_sees(url) == before
    assert dashboards(env) == shown
    ok(run_cli("doctor", env=env))  # exit 0: no check fails
    with psycopg.connect(psycopg.conninfo.make_conninfo(url, user=REVIEWER_ROLE, password=TEST_PASSWORD)) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == REVIEWER_ROLE

