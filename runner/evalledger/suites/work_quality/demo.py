"""The demo's work-quality step: a small shipped work product judged twice by the recorded panel.

The same bot ("demo-fixer") is asked twice to fix an off-by-one in a pagination helper. The
first run (fixtures/demo-run-1.diff) fixes it with a test that proves it, cheaply; the second
(demo-run-2.diff) rewrites the module into a class, keeps the bug and edits the test to match, at
seven times the price. The judges are the replies recorded with the demo (never live calls),
and the database compares the second snapshot with the first and finds the regression.
Fixed run ids make a repeated demo read both snapshots back instead of judging them again.
"""

from __future__ import annotations

import click

from evalledger.core.paths import package_path

from . import run as wq

DEMO_NAME = "demo-fixer"
DEMO_TASK = "Fix the off-by-one in shop.paginate.paginate() and add a test that proves every item appears once."
DEMO_RUNS = (
    ("demo-run-1", "fixtures/demo-run-1.diff", "fixtures/demo-metrics-1.json", "finished: approved after 2 iterations"),
    ("demo-run-2", "fixtures/demo-run-2.diff", "fixtures/demo-metrics-2.json", "finished: approved after 7 iterations"),
)


def demo_options(run_id: str, work_product: str, metrics: str, outcome: str, store: str | None = None) -> wq.RunOptions:
    """The options of one demo run (also what the recorded replies were made from)."""
    return wq.RunOptions(
        kind="bot", name=DEMO_NAME, persona="Fixie", family="anthropic", task=DEMO_TASK,
        work_product=str(package_path(*work_product.split("/"), package=__package__)),
        metrics=str(package_path(*metrics.split("/"), package=__package__)), outcome=outcome,
        bot_version="1.4.0", run_id=run_id, models=wq.DEFAULT_MODELS, store=store, judges="recorded")


def work_quality_demo(url: str, store: str | None = None) -> wq.Outcome:
    """Judge the demo work product twice; print where each snapshot went and the second one's
    comparison with the first, as the database computed it. Returns the second outcome."""
    outcome = None
    for run_id, work_product, metrics, status in DEMO_RUNS:
        outcome = wq.run(demo_options(run_id, work_product, metrics, status, store), say=lambda line: None,
                         database_url=url)
        snap = outcome.snapshot
        again = " (recorded by an earlier demo; read back)" if outcome.already_recorded else ""
        click.echo(f"  {run_id}  overall {snap.overall():.3f}  value_for_money {snap.value():.3f}  "
                   f"${snap.metrics.cost_usd:.3f}{again}")
        click.echo(f"             {outcome.path}")
    assert outcome is not None
    click.echo(f"  {wq.comparison_line(outcome.snapshot)}")
    for reason in outcome.reasons:
        click.echo(f"  regression: {reason} (tolerance {outcome.tolerance:g}; `--gate` would exit 1)")
    if not outcome.reasons:
        click.echo(f"  no regression (tolerance {outcome.tolerance:g})")
    return outcome
