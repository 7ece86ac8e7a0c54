"""The demo's brain-eval harness run: the demo catalog's 30 questions answered by the recorded
brain, drafted on by the recorded judges, scored by a scripted demo reviewer through the path a
person uses (`review score --from`, `review finish`), then completed and decided by the database."""

from __future__ import annotations

import secrets

from evalledger.core import db
from evalledger.core import reader
from evalledger.core.paths import package_path

from . import brains, catalog, contracts, harness, reviewing
from . import store as brain_eval
from .store import QUERIES

DEMO_REVIEWER_ROLE = "evalledger_demo_reviewer"
# The reviewer the person running the demo signs in as, in the browser or the terminal.
YOUR_REVIEWER_ROLE = "evalledger_demo_you"
# An auditor's login printed beside it: the reviewer's panels count its completed runs only, so they
# stay empty until it completes one; the auditor reads every panel.
DEMO_AUDITOR_ROLE = "evalledger_demo_auditor"
DEMO_BRAIN = {"target_id": "AGT-902", "model": "anthropic:claude-sonnet-4-6", "version_label": "pipeline_brain_v3",
              "levers": ("add_pipeline_generation", "exec_sponsor_outreach", "expansion_offer", "rep_coaching",
                         "save_play")}
DEMO_HOURS = 3.5
DEMO_NOTES = {"confidence_calibration_in_band": "High-confidence share runs hot on forecast questions.",
              "lever_mapping_correctness": "A 50% discount is not a lever AGT-902 may propose."}


def fixture_path():
    """A recorded run with the automatic fields only (`brain-eval record`'s example)."""
    return package_path("fixtures", "brain_eval_demo.json", package=__package__)


def prompt_path():
    """The system prompt of the demo brain version."""
    return package_path("fixtures", "brain_eval_demo_prompt.txt", package=__package__)


def review_path():
    """The scripted demo reviewer's numbers for the demo harness run."""
    return package_path("fixtures", "harness_demo_review.jsonl", package=__package__)


def views_path():
    """The folder of brain-ready views whose contracts the demo run hashes."""
    return package_path("fixtures", "brain_views", package=__package__)


def ensure_demo_reviewer(url: str, role: str = DEMO_REVIEWER_ROLE, name: str = "Demo reviewer",
                         password: str | None = None) -> None:
    """A demo reviewer: a login role of its own in evalledger_reviewer, registered as a reviewer;
    with password, that is its password from now on (else a random one nobody needs)."""
    with db.transaction(None, url) as conn:
        _, done = brain_eval.ensure_reviewer_role(conn, role, lambda: password or secrets.token_urlsafe(24))
        if password and done != "created":
            brain_eval.set_role_password(conn, role, password)
    with db.transaction("owner", url) as conn:
        brain_eval.add_reviewer(conn, role, name)


def register_demo(url: str) -> None:
    """The demo catalog and brain version, as the owner registers them (once)."""
    with db.transaction("owner", url) as conn:
        catalog.load(conn, catalog.check_file(catalog.demo_catalog_path()), catalog.demo_catalog_path().name)
        brains.add(conn, system_prompt=reader.read_text(prompt_path(), "prompt file"), **DEMO_BRAIN)


def open_demo_run(url: str, reviewer_role: str, trigger: str = "quarterly", version_label: str | None = None):
    """The demo brain's harness run over the demo catalog for reviewer_role (a registered reviewer),
    answered by the recorded brain and drafted on by the recorded judges: the open one an
    identical earlier call started, or a new one. version_label: another registered version of the
    demo brain (one run of a brain, prompt and catalog is open at a time). (run id, judge drafts
    asked now)."""
    from evalledger.judges.panel import Panel, run_sync

    found = contracts.from_folder(views_path())
    with db.transaction("runner", url) as conn:
        brain = brains.resolve(conn, DEMO_BRAIN["target_id"], version_label or DEMO_BRAIN["version_label"])
        planned = harness.plan(conn, brain, "v28-2026Q2", None, reviewer_role, trigger, found, "recorded")
        run_id, resumed, answered = harness.start_or_resume(conn, planned)
    panel = Panel(harness.DEFAULT_JUDGES, suite=__package__, judges="recorded", concurrency=8, timeout_s=60,
                  max_retries=0)
    run_sync(harness.execute(planned, run_id, answered, url=url, concurrency=8, timeout_s=60, max_retries=0,
                             budget=panel.budget, progress=None, resumed=resumed))
    judged = run_sync(harness.judge(run_id, panel, url=url, progress=None))
    return run_id, judged.asked


def review_and_complete(url: str, run_id, reviewer_role: str = DEMO_REVIEWER_ROLE) -> brain_eval.Decision:
    """The scripted demo reviewer's numbers entered as reviewer_role through `review score --from`'s
    path, its sign-off, then the runner's completion: the database's decision."""
    scored = reviewing.read_scores(review_path())
    with db.transaction(None, url) as conn:
        db.set_local_role(conn, reviewer_role)
        reviewing.apply_scores(conn, run_id, review_path(), scored)
        brain_eval.sign_off_run(conn, run_id, DEMO_HOURS, DEMO_NOTES)
    with db.transaction("runner", url) as conn:
        return brain_eval.complete_run(conn, run_id)


def your_run(url: str, echo=print) -> None:
    """A second demo run of the same brain, left open for the person running the demo to review as
    YOUR_REVIEWER_ROLE (a fresh password each demo, printed)."""
    password = secrets.token_urlsafe(12)
    ensure_demo_reviewer(url, YOUR_REVIEWER_ROLE, "You (demo)", password)
    run_id, _ = open_demo_run(url, YOUR_REVIEWER_ROLE, "on_demand")
    echo(f"your turn: run {run_id} (30 questions) waits for reviewer {YOUR_REVIEWER_ROLE}, "
         f"password {password} (new each demo)")
    echo(f"  in a browser: `evalledger serve`, open http://127.0.0.1:8765/ and sign in as {YOUR_REVIEWER_ROLE}")
    auditor_password = secrets.token_urlsafe(12)
    if ensure_demo_auditor(url, auditor_password):
        echo(f"  to read every dashboard panel, sign in as auditor {DEMO_AUDITOR_ROLE}, password {auditor_password} "
             "(new each demo): the reviewer's panels count its completed runs only, and stay empty until it "
             "completes one")
    echo(f"  in the terminal: `evalledger review {run_id} --as {YOUR_REVIEWER_ROLE}`")


def ensure_demo_auditor(url: str, password: str) -> bool:
    """DEMO_AUDITOR_ROLE as an auditor's login with password (created, or its password set anew);
    False when the connecting user may not (no CREATEROLE, or the role is someone else's and no
    auditor)."""
    from psycopg import errors, sql

    try:
        with db.transaction(None, url) as conn:
            exists, auditor = conn.execute(QUERIES["auditor_login_exists"], {"role": DEMO_AUDITOR_ROLE}).fetchone()
            if exists and not auditor:
                return False
            if not exists:
                conn.execute(sql.SQL(QUERIES["create_auditor_login"]).format(
                    role=sql.Identifier(DEMO_AUDITOR_ROLE), password=sql.Literal(password)))
            else:
                brain_eval.set_role_password(conn, DEMO_AUDITOR_ROLE, password)
    except errors.InsufficientPrivilege:
        return False
    return True


def brain_eval_demo(url: str, echo=print) -> brain_eval.Decision:
    """Run (or, after an earlier demo, read back) the demo harness run and return its decision."""
    ensure_demo_reviewer(url)
    register_demo(url)
    with db.transaction("runner", url) as conn:
        reviewer_id = brain_eval.reviewer_id(conn, DEMO_REVIEWER_ROLE)
        version_id = conn.execute(QUERIES["brain_version_id"], {
            "target_id": DEMO_BRAIN["target_id"],
            "version": brains.resolve(conn, DEMO_BRAIN["target_id"], DEMO_BRAIN["version_label"]).version}).fetchone()[0]
        done = conn.execute(QUERIES["completed_harness_run"], {
            "brain_version_id": version_id, "reviewer_user_id": reviewer_id}).fetchone()
        if done:
            echo(f"run {done[0]} was completed by an earlier demo; reading it back")
            return brain_eval.read_decision(conn, done[0])
    run_id, drafts = open_demo_run(url, DEMO_REVIEWER_ROLE)
    echo(f"run {run_id}: 30 answers from the recorded brain, {drafts} judge drafts; "
         f"the demo reviewer scores from fixtures/{review_path().name}")
    return review_and_complete(url, run_id)
