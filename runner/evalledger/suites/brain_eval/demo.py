"""The demo's brain-eval run: the shipped, recorded run, scored and decided by the database."""

from __future__ import annotations

import hashlib
import uuid

import click

from evalledger.core import db
from evalledger.core.errors import read_user_text
from evalledger.demo import DEMO_NAMESPACE
from evalledger.core.paths import package_path

from . import brains
from . import store as brain_eval
from .store import QUERIES

DEMO_REVIEWER_ROLE = "evalledger_demo_reviewer"


DEMO_BRAIN = {"target_id": "AGT-902", "model": "anthropic:claude-sonnet-4-6", "version_label": "pipeline_brain_v3",
              "levers": ("add_coverage", "reassign_owner")}


def fixture_path():
    """The shipped, recorded brain-eval run."""
    return package_path("fixtures", "brain_eval_demo.json", package=__package__)


def prompt_path():
    """The system prompt of the brain version the recorded run is of."""
    return package_path("fixtures", "brain_eval_demo_prompt.txt", package=__package__)


def brain_eval_demo(url: str) -> brain_eval.Decision:
    """Record the fixture run as the runner (once) and return the database's decision."""
    path = fixture_path()
    fixture = brain_eval.load_fixture(path)
    run_id = uuid.uuid5(DEMO_NAMESPACE, hashlib.sha256(path.read_bytes()).hexdigest())
    with db.transaction("owner", url) as conn:
        reviewer_id = brain_eval.add_reviewer(conn, DEMO_REVIEWER_ROLE, "Demo reviewer")
        # A run's prompt must be one its brain registered: as a user would, with `brain add`.
        brains.add(conn, system_prompt=read_user_text(prompt_path(), "prompt file"), **DEMO_BRAIN)
    with db.transaction("runner", url) as conn:
        if conn.execute(QUERIES["run_exists"], {"eval_run_id": run_id}).fetchone():
            click.echo(f"run {run_id} was recorded by an earlier demo; reading it back")
            return brain_eval.read_decision(conn, run_id)
        fixture["run"]["eval_run_id"] = run_id
        return brain_eval.record_fixture_run(conn, fixture, reviewer_id)
