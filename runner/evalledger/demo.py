"""`make demo`: the main job end to end on whatever database the user points at."""

from __future__ import annotations

import click

from .core import db
from .core.migrate import migrate


def run() -> None:
    """Migrate, then run each suite's demo and print what the database decided."""
    from .suites.brain_eval.cli import print_decision
    from .suites.brain_eval.demo import brain_eval_demo, your_run
    from .suites.capture.demo import capture_demo
    from .suites.takes_quality.demo import takes_quality_demo
    from .suites.work_quality.demo import work_quality_demo

    url = db.database_url()
    click.echo(f"database: {db.describe(url)}")
    applied = migrate(url)
    click.echo(f"migrations: {'applied ' + ', '.join(applied) if applied else 'up to date'}")
    click.echo("")
    click.echo("brain-eval (a 30-question harness run of AGT-902: brain answers and judge drafts recorded with the "
               "demo, not live calls; a scripted demo reviewer enters the reviewer's numbers):")
    print_decision(brain_eval_demo(url, echo=click.echo))
    your_run(url, echo=click.echo)
    click.echo("")
    click.echo("takes-quality (12 demo takes from fixtures/takes_demo.jsonl; judge replies recorded with the demo, "
               "not live calls):")
    takes_quality_demo(url)
    click.echo("")
    click.echo("work-quality (a shipped work product judged twice; judge replies recorded with the demo, "
               "not live calls):")
    work_quality_demo(url)
    click.echo("")
    click.echo("capture (demo queries with an email, a card number and a bearer token, scrubbed before storage):")
    capture_demo(url)
    # What the demo completed is sealed into a block before it returns (`evalledger ledger verify`).
    from .ledger.cli import seal_after

    seal_after("owner")
