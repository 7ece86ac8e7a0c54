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


# Demo captures: PII of each kind the scrubber knows, as a user might type it into a search box.
DEMO_CAPTURES = [
    {"tool_name": "query", "query": "why did jane.doe@example.com's renewal forecast drop last quarter?",
     "retrieved_slugs": ["renewals/q3", "accounts/jane-doe"], "retrieved_chunk_ids": [101, 102, 102],
     "source_ids": ["crm"], "expand_enabled": True, "detail": "medium", "detail_resolved": "medium",
     "vector_enabled": True, "expansion_applied": True, "latency_ms": 412.5, "remote": True},
    {"tool_name": "search", "query": "refund for card 4111 1111 1111 1111 charged twice",
     "retrieved_slugs": ["billing/refunds"], "retrieved_chunk_ids": [7], "source_ids": ["billing"],
     "vector_enabled": False, "expansion_applied": False, "latency_ms": 38, "remote": False},
    {"tool_name": "query", "query": "API calls fail with Authorization: Bearer sk-live-51HqLyjWDarjtT1zdp7dc",
     "retrieved_slugs": ["runbooks/api-auth"], "retrieved_chunk_ids": [55, 56], "source_ids": ["runbooks"],
     "expand_enabled": False, "detail": "high", "detail_resolved": "high", "vector_enabled": True,
     "expansion_applied": False, "latency_ms": 220, "remote": True, "job_id": 42, "subagent_id": 7},
]


def capture_demo(url: str) -> list[str]:
    """Capture the demo queries through the real writer (scrubbing on), once; return their NDJSON rows."""
    from .capture import CaptureWriter

    keys = [uuid.uuid5(DEMO_NAMESPACE, f"capture:{row['query']}") for row in DEMO_CAPTURES]
    writer = CaptureWriter(url, scrub=True, background=False)
    try:
        writer.write([{**row, "capture_key": key} for row, key in zip(DEMO_CAPTURES, keys)])
    finally:
        writer.close(0)
    with db.transaction("runner", url) as conn:
        lines = conn.execute(
            """SELECT evalledger.eval_candidate_ndjson_v1(c)::text FROM evalledger.eval_candidates c
                WHERE c.capture_key = ANY(%s) ORDER BY c.created_at DESC, c.id DESC""", (keys,)).fetchall()
    click.echo(f"  captured {writer.stats.written} new, {writer.stats.duplicates} already there; "
               f"exported as `evalledger export` prints them:")
    for (line,) in lines:
        click.echo(f"  {line}")
    return [line for (line,) in lines]


DEMO_TAKES = "fixtures/takes_demo.jsonl"
DEMO_TAKES_SEED = 2026  # the seed the shipped recordings were made with


def takes_quality_demo(url: str) -> dict:
    """Load the shipped demo takes (once), run takes-quality on them with the recorded judge
    replies (never live calls in a demo), print the verdict the database computed."""
    from pathlib import Path

    from . import takes, takes_quality

    corpus = takes.read_file(Path(str(resources.files("evalledger") / DEMO_TAKES)))
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
    click.echo("")
    click.echo("takes-quality (12 demo takes from fixtures/takes_demo.jsonl; judge replies recorded with the demo, "
               "not live calls):")
    takes_quality_demo(url)
    click.echo("")
    click.echo("capture (demo queries with an email, a card number and a bearer token, scrubbed before storage):")
    capture_demo(url)
