"""Harness runs for the web tests and the web bench: the demo catalog's 30 questions answered by the
recorded brain and drafted on by the recorded judges, reviewed by a reviewer of the test's choice,
exactly as `make demo` records them (but left open for the reviewer)."""

from __future__ import annotations

from uuid import UUID

from evalledger.core import db
from evalledger.core.errors import read_user_text
from evalledger.suites.brain_eval import brains, catalog, contracts, harness, reviewing
from evalledger.suites.brain_eval import store
from evalledger.suites.brain_eval.demo import DEMO_BRAIN, DEMO_HOURS, DEMO_NOTES, prompt_path, review_path, views_path


def open_run(url: str, reviewer_role: str) -> UUID:
    """A new open 30-question harness run of the demo brain for reviewer_role (a registered
    reviewer), with its recorded answers and judge drafts; url is a connection that may act as
    the owner and the runner."""
    from evalledger.judges.panel import parse_panel, resolve_modes, run_sync
    from evalledger.judges.pricing import Budget

    with db.transaction("owner", url) as conn:
        catalog.load(conn, catalog.check_file(catalog.demo_catalog_path()), catalog.demo_catalog_path().name)
        brains.add(conn, system_prompt=read_user_text(prompt_path(), "prompt file"), **DEMO_BRAIN)
    found = contracts.from_folder(views_path())
    with db.transaction("runner", url) as conn:
        brain = brains.resolve(conn, DEMO_BRAIN["target_id"], DEMO_BRAIN["version_label"])
        planned = harness.plan(conn, brain, "v28-2026Q2", None, reviewer_role, "quarterly", found, "recorded")
        run_id, resumed, answered = harness.start_or_resume(conn, planned)
    judges = parse_panel(harness.DEFAULT_JUDGES)
    budget = Budget(None)
    run_sync(harness.execute(planned, run_id, answered, url=url, concurrency=4, timeout_s=60, max_retries=0,
                             budget=budget, progress=None, resumed=resumed))
    run_sync(harness.judge(run_id, judges, resolve_modes(judges, "evalledger.suites.brain_eval", "recorded"), url=url,
                           concurrency=4, timeout_s=60, max_retries=0, budget=budget, progress=None))
    return run_id


def complete(url: str, run_id: UUID, reviewer_role: str) -> None:
    """The demo reviewer's numbers entered as reviewer_role, its sign-off, and completion."""
    scored = reviewing.read_scores(review_path())
    with db.transaction(None, url) as conn:
        db.set_local_role(conn, reviewer_role)
        reviewing.apply_scores(conn, run_id, review_path(), scored)
        store.sign_off_run(conn, run_id, DEMO_HOURS, DEMO_NOTES)
    with db.transaction("runner", url) as conn:
        store.complete_run(conn, run_id)
