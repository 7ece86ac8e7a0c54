"""The demo's takes-quality run: the shipped takes, judged by the recorded panel."""

from __future__ import annotations

import click

from evalledger.core import db
from evalledger.core.paths import package_path

from . import corpus as takes, run as takes_quality

DEMO_TAKES = "fixtures/takes_demo.jsonl"
DEMO_TAKES_SEED = 2026  # the seed the shipped recordings were made with


def takes_quality_demo(url: str) -> dict:
    """Load the shipped demo takes (once), run takes-quality on them with the recorded judge
    replies (never live calls in a demo), print the verdict the database computed."""
    corpus = takes.read_file(package_path(*DEMO_TAKES.split("/"), package=__package__))
    with db.transaction("runner", url) as conn:
        added, seen = takes.load(conn, corpus)
    click.echo(f"  corpus    {added} demo takes loaded, {seen} already there")
    outcome = takes_quality.run(
        takes_quality.RunOptions(slug_prefix="demo/", seed=DEMO_TAKES_SEED, cycles=1, judges="recorded"),
        say=lambda line: None)
    receipt = outcome.receipt
    if outcome.already_recorded:
        click.echo(f"  run {receipt.get('run_id')} was recorded by an earlier demo; reading it back")
    click.echo(f"  verdict   {receipt['verdict']}")
    click.echo(f"  message   {receipt['verdictMessage']}")
    click.echo(f"  receipt   {outcome.path}")
    return receipt
