"""The review web app on a free localhost port against the test's database, with three harness runs
(reviewer A's open one, A's completed one, B's open one), and a headless Debian chromium."""

from __future__ import annotations

import re
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import httpx2
import pytest
import uvicorn

from evalledger.web.app import create_app
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, TEST_PASSWORD, ensure_login_role
from evalledger.suites.brain_eval.demo import open_demo_run, register_demo, review_and_complete

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).parent / "artifacts"
AUDITOR_ROLE = "evalledger_test_web_auditor"


@dataclass
class Web:
    """The running app and the runs it serves."""

    base: str
    dsn: str
    open_a: UUID
    completed_a: UUID
    open_b: UUID


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """A uvicorn server in a thread, stopped by stop()."""

    def __init__(self, app) -> None:
        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on"))
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


@pytest.fixture
def serve(dsn):
    """Start an app on dsn (create_app's keyword arguments as given); stopped after the test."""
    started = []

    def start(**options) -> str:
        served = Served(create_app(dsn, **options))
        started.append(served)
        return served.base

    yield start
    for served in started:
        served.stop()


@pytest.fixture
def web(dsn, admin, reviewers, serve) -> Web:
    """The app with reviewer A's open and completed runs and reviewer B's open run."""
    ensure_login_role(admin, AUDITOR_ROLE, "evalledger_auditor")
    register_demo(dsn)
    completed, _ = open_demo_run(dsn, REVIEWER_ROLE)
    review_and_complete(dsn, completed, REVIEWER_ROLE)
    return Web(serve(), dsn, open_demo_run(dsn, REVIEWER_ROLE)[0], completed, open_demo_run(dsn, OTHER_REVIEWER_ROLE)[0])


def question_rows(admin, run_id) -> list[tuple]:
    """Every question row of a run, with the trail and the suggestions shown, as the superuser reads them."""
    rows = admin.execute("SELECT question_id, hallucinations_detected, total_claims, staleness_correctly_recognized, "
                         "diagnosis_accuracy_score, narrative_coherence_rating, reviewer_comments, question_passed "
                         "FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s ORDER BY question_id",
                         (run_id,)).fetchall()
    trail = admin.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s",
                          (run_id,)).fetchone()
    shown = admin.execute("SELECT count(*) FROM evalledger.brain_eval_suggestion_shown WHERE eval_run_id = %s",
                          (run_id,)).fetchone()
    reviews = admin.execute("SELECT count(*) FROM evalledger.brain_eval_run_review WHERE eval_run_id = %s",
                            (run_id,)).fetchone()
    return [*rows, ("trail", trail), ("shown", shown), ("sign-offs", reviews)]


class Client:
    """Raw HTTP as a browser would send it (httpx2 keeps the cookies), for forged requests."""

    def __init__(self, base: str) -> None:
        self.http = httpx2.Client(base_url=base, follow_redirects=False, timeout=10)

    def sign_in(self, login: str, password: str = TEST_PASSWORD) -> httpx2.Response:
        form = self.http.get("/sign-in")
        token = csrf_of(form.text)
        return self.http.post("/sign-in", data={"csrf_token": token, "login": login, "password": password})

    def close(self) -> None:
        self.http.close()


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


@pytest.fixture
def client():
    made = []

    def make(base: str) -> Client:
        made.append(Client(base))
        return made[-1]

    yield make
    for c in made:
        c.close()


needs_chromium = pytest.mark.skipif(not CHROMIUM.exists() or not CHROMEDRIVER.exists(),
                                    reason="needs Debian's chromium and chromium-driver "
                                           "(apt-get install chromium chromium-driver; .ci/run installs them)")


@pytest.fixture
def browser(monkeypatch, request):
    """A headless Debian chromium at a laptop's 1366x768, through Debian's chromedriver: both paths
    given, so selenium-manager has nothing to find or download."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1366,768", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    ARTIFACTS.mkdir(exist_ok=True)
    yield driver
    driver.save_screenshot(str(ARTIFACTS / f"{request.node.name}-last.png"))
    driver.quit()


def shot(driver, name: str) -> Path:
    """Keep a screenshot in tests/web/artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path

