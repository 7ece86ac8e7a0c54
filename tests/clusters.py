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
            made.cold, made.hot = tiered_ledger(admin, connect_as, reviewer)
            for conn in opened:
                conn.close()
            _history_rewritten(admin, made.url())
        ok(run_cli("demo", env=made.env))
        made.parent = parent
        yield made


def _history_rewritten(admin, dsn: str) -> None:
    """The cold run aged as the retention tests age runs (the triggers lifted), then the journal and its
    blocks rewritten to match, as if its rows had been written 25 months ago: verify holds the primary
    whole. (Aged with the journal left on, each aging would be an UPDATE entry, which verify rightly
    names: the ledger's rules never allow one.)"""
    from tests.ledger_forge import rejournal, reseal, verified

    changed = [(f.table, f.key) for f in verified(dsn).findings if f.kind == "row_changed"]
    assert changed, "the aging changed no row"
    for table, key in dict.fromkeys(changed):
        rejournal(admin, dsn, table, key)
    reseal(admin, dsn, 1)
    left = verified(dsn).findings
    assert not left, left


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

