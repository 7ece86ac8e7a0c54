"""`make demo`: the main job end to end on whatever database the user points at."""

from __future__ import annotations

import hashlib
import uuid
from importlib import resources

import click

from . import brain_eval, db
from .migrate import migrate

DEMO_REVIEWER_ROLE = "evalledger_demo_reviewer"
# A fixed namespace: the same fixture always yields the same run id, so a second demo finds the
# first run instead of writing another.
DEMO_NAMESPACE = uuid.UUID("6c1e0f3a-8d52-4a43-9f0e-3b7d2a1c5e90")


def fixture_path():
    """The shipped, recorded brain-eval run."""
    return resources.files("evalledger") / "fixtures" / "brain_eval_demo.json"


def brain_eval_demo(url: str) -> brain_eval.Decision:
    """Record the fixture run as the runner (once) and return the database's decision."""
    path = fixture_path()
    fixture = brain_eval.load_fixture(path)
    run_id = uuid.uuid5(DEMO_NAMESPACE, hashlib.sha256(path.read_bytes()).hexdigest())
    with db.transaction("owner", url) as conn:
        reviewer_id = brain_eval.add_reviewer(conn, DEMO_REVIEWER_ROLE, "Demo reviewer")
    with db.transaction("runner", url) as conn:
        if conn.execute("SELECT 1 FROM brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone():
            click.echo(f"run {run_id} was recorded by an earlier demo; reading it back")
            return brain_eval.read_decision(conn, run_id)
        fixture["run"]["eval_run_id"] = run_id
        return brain_eval.record_fixture_run(conn, fixture, reviewer_id)


def print_decision(decided: brain_eval.Decision) -> None:
    """The decision, its rationale and the aggregates, as the database computed them."""
    click.echo(f"  run       {decided.eval_run_id}  ({decided.brain_under_test}, {decided.question_count} questions)")
    click.echo(f"  decision  {decided.decision}")
    click.echo(f"  rationale {decided.decision_rationale}")
    click.echo(f"  hard criteria passed: {decided.hard_criteria_passed}; "
               f"soft criteria passed: {decided.soft_criteria_passed_count}; "
               f"token cost ${decided.token_cost_usd}")
    for key, value in decided.aggregated_scores.items():
        click.echo(f"    {key:32} {'n/a' if value is None else round(float(value), 4)}")


def run() -> None:
    """Migrate, record the demo brain-eval run, print what the database decided."""
    url = db.database_url()
    click.echo(f"database: {db.describe(url)}")
    applied = migrate(url)
    click.echo(f"migrations: {'applied ' + ', '.join(applied) if applied else 'up to date'}")
    click.echo("")
    click.echo("brain-eval (question scores from the shipped fixture fixtures/brain_eval_demo.json, "
               "not a live brain):")
    print_decision(brain_eval_demo(url))
