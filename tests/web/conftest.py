"""The review web app on a free localhost port against one database per test module, with demo
harness runs (reviewer A's open and completed ones, reviewer B's open one, and more on request),
raw HTTP clients, and one headless Debian chromium per module.

A browser is slow to start and a sign-in costs a password hash, so a module shares one app, one
database and one browser; each test works on runs or questions of its own and compares the rows
it touched before and after, re-read as the superuser.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID, uuid4

import httpx2
import psycopg
import pytest
import uvicorn
from psycopg import sql

from evalledger.core import db
from evalledger.suites.brain_eval import brains
from evalledger.suites.brain_eval.demo import DEMO_BRAIN, open_demo_run, prompt_path, register_demo, review_and_complete
from evalledger.suites.brain_eval.store import add_reviewer
from evalledger.web.app import create_app
from evalledger.web.sessions import APPLICATION_NAME
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, TEST_PASSWORD, ensure_login_role

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).parent / "artifacts"
AUDITOR_ROLE = "evalledger_test_web_auditor"
TRIGGERS = ("on_demand", "prompt_change", "pre_launch", "model_promotion")


@dataclass
class Web:
    """The running app, its database and the runs it serves."""

    base: str
    dsn: str
    admin: psycopg.Connection
    open_a: UUID
    completed_a: UUID
    open_b: UUID
    more: list = field(default_factory=list)

    def another_run(self, reviewer: str = REVIEWER_ROLE) -> UUID:
        """A fresh open 30-question run for reviewer, of a version of the demo brain of its own (one
        run of a brain, prompt and catalog is open at a time: docs/guards.md, section 31)."""
        label = f"demo_{uuid4().hex[:12]}"
        add_demo_version(self.dsn, label)
        run_id, _ = open_demo_run(self.dsn, reviewer, version_label=label)
        self.more.append(run_id)
        return run_id


def add_demo_version(dsn: str, label: str) -> None:
    """A version of the demo brain of its own: the demo prompt with a line naming label."""
    with db.transaction("owner", dsn) as conn:
        brains.add(conn, DEMO_BRAIN["target_id"], DEMO_BRAIN["model"],
                   prompt_path().read_text(encoding="utf-8") + f"Version {label}.\n", label, DEMO_BRAIN["levers"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """A uvicorn server in a thread, stopped by stop(); uvicorn's own options as given."""

    def __init__(self, app, **config) -> None:
        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on", **config))
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="review-web")
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the review web app did not start")
            time.sleep(0.02)
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture(scope="module")
def web_admin(module_dsn):
    """An autocommit superuser connection on the module's database."""
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        conn.execute("SET search_path = evalledger, public")
        yield conn


def _asks_passwords(dsn: str) -> bool:
    try:
        with psycopg.connect(psycopg.conninfo.make_conninfo(dsn, user=REVIEWER_ROLE, password="not-" + TEST_PASSWORD)):
            return False
    except psycopg.OperationalError:
        return True


@pytest.fixture(scope="module")
def web_reviewers(web_admin, module_dsn) -> dict:
    """Reviewers A and B and an auditor, login roles with TEST_PASSWORD; skipped on a server that
    lets them in without it (the app refuses every such sign-in, by design)."""
    found = {}
    for role in (REVIEWER_ROLE, OTHER_REVIEWER_ROLE):
        ensure_login_role(web_admin, role, "evalledger_reviewer")
        found[role] = add_reviewer(web_admin, role, role.rsplit("_", 1)[-1].upper())
    ensure_login_role(web_admin, AUDITOR_ROLE, "evalledger_auditor")
    if not _asks_passwords(module_dsn):
        pytest.skip("this server lets the test logins in without their password: the web app refuses such sign-ins")
    return found


@pytest.fixture(scope="module")
def web(module_dsn, web_admin, web_reviewers) -> Web:
    """The app (default options) with reviewer A's open and completed runs and reviewer B's open run."""
    register_demo(module_dsn)
    completed, _ = open_demo_run(module_dsn, REVIEWER_ROLE)
    review_and_complete(module_dsn, completed, REVIEWER_ROLE)
    open_a, _ = open_demo_run(module_dsn, REVIEWER_ROLE)
    # One run of a brain, prompt and catalog is open at a time (docs/guards.md, section 31): B's is of
    # a second version of the demo brain, its prompt with a line of its own.
    add_demo_version(module_dsn, "pipeline_brain_v3_b")
    open_b, _ = open_demo_run(module_dsn, OTHER_REVIEWER_ROLE, version_label="pipeline_brain_v3_b")
    served = Served(create_app(module_dsn))
    try:
        yield Web(served.base, module_dsn, web_admin, open_a, completed, open_b)
    finally:
        served.stop()


@pytest.fixture
def serve(module_dsn, web):
    """Start another app on the module's database (create_app's keyword arguments as given, and
    uvicorn's under `uvicorn`); stopped after the test. Its base URL."""
    started = []

    def start(uvicorn_options: dict | None = None, **options) -> str:
        served = Served(create_app(module_dsn, **options), **(uvicorn_options or {}))
        started.append(served)
        return served.base

    yield start
    for served in started:
        served.stop()


def question_rows(admin, run_id) -> list[tuple]:
    """Every question row of a run, with the trail, the suggestions shown and the sign-offs, as the
    superuser reads them."""
    rows = admin.execute("SELECT question_id, hallucinations_detected, total_claims, staleness_correctly_recognized, "
                         "diagnosis_accuracy_score, narrative_coherence_rating, reviewer_comments, question_passed "
                         "FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s ORDER BY question_id",
                         (run_id,)).fetchall()
    counts = [(table, admin.execute(sql.SQL("SELECT count(*) FROM evalledger.{} WHERE eval_run_id = %s").format(
        sql.Identifier(table)), (run_id,)).fetchone()[0])
        for table in ("brain_eval_review_entry", "brain_eval_suggestion_shown", "brain_eval_run_review")]
    return [*rows, *counts]


def login_connections(admin, *logins: str, at_most: int | None = None) -> int:
    """How many connections the web app holds for these logins (its application_name), on any
    database; with at_most, after waiting up to two seconds for closed ones to leave the server's
    list (a backend exits a moment after its client closes)."""
    deadline = time.monotonic() + 2
    while True:
        found = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = ANY (%s) AND application_name = %s",
                              (list(logins), APPLICATION_NAME)).fetchone()[0]
        if at_most is None or found <= at_most or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


class Client:
    """Raw HTTP as a browser would send it (httpx2 keeps the cookies), for what a browser would not send."""

    def __init__(self, base: str, **options) -> None:
        self.http = httpx2.Client(base_url=base, follow_redirects=False, timeout=20, **options)

    def sign_in(self, login: str, password: str = TEST_PASSWORD, **fields) -> httpx2.Response:
        form = self.http.get("/sign-in")
        return self.http.post("/sign-in", data={"csrf_token": csrf_of(form.text), "login": login,
                                                "password": password, **fields})

    def form_of(self, path: str) -> tuple[httpx2.Response, str]:
        """A page and the CSRF token of its forms."""
        page = self.http.get(path)
        return page, csrf_of(page.text)

    def close(self) -> None:
        self.http.close()


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


@pytest.fixture
def client():
    """Make raw HTTP clients of a base URL, closed after the test."""
    made = []

    def make(base: str, **options) -> Client:
        made.append(Client(base, **options))
        return made[-1]

    yield make
    for c in made:
        c.close()


@pytest.fixture(scope="module")
def signed_in(web):
    """Reviewer A's raw HTTP client on the module's app, signed in once."""
    reviewer = Client(web.base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    yield reviewer
    reviewer.close()


@contextlib.contextmanager
def refused_connections(admin, login: str):
    """The database out of reach for login, as the app sees it: its connections are cut and new
    ones refused (CONNECTION LIMIT 0), until the block ends."""
    admin.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT 0").format(sql.Identifier(login)))
    try:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (login,))
        yield
    finally:
        admin.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT -1").format(sql.Identifier(login)))


needs_chromium = pytest.mark.skipif(not CHROMIUM.exists() or not CHROMEDRIVER.exists(),
                                    reason="needs Debian's chromium and chromium-driver "
                                           "(apt-get install chromium chromium-driver; .ci/run installs them)")


def start_browser(width: int = 1366, height: int = 768):
    """A headless Debian chromium through Debian's chromedriver: both paths given, so
    selenium-manager has nothing to find or download."""
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--disable-extensions", "--no-first-run",
                "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    return driver


@pytest.fixture(scope="module")
def browser(request):
    """One headless chromium for the module, at a laptop's 1366x768."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip("needs Debian's chromium and chromium-driver")
    driver = start_browser()
    yield driver
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{request.module.__name__.rsplit('.', 1)[-1]}-last.png"))
    driver.quit()


def shot(driver, name: str) -> Path:
    """Keep a screenshot in tests/web/artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
