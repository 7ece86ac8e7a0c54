"""The demo's captures: PII-laden queries through the real writer, exported scrubbed."""

from __future__ import annotations

import uuid

import click

from evalledger.core import db

from .export import QUERIES

# A fixed namespace: the same demo input always yields the same ids, so a second demo finds what
# the first recorded instead of writing it again.
DEMO_NAMESPACE = uuid.UUID("6c1e0f3a-8d52-4a43-9f0e-3b7d2a1c5e90")


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
    from .writer import CaptureWriter

    keys = [uuid.uuid5(DEMO_NAMESPACE, f"capture:{row['query']}") for row in DEMO_CAPTURES]
    writer = CaptureWriter(url, scrub=True, background=False)
    try:
        writer.write([{**row, "capture_key": key} for row, key in zip(DEMO_CAPTURES, keys)])
    finally:
        writer.close(0)
    with db.transaction("runner", url) as conn:
        lines = conn.execute(QUERIES["ndjson_by_capture_key"], {"keys": keys}).fetchall()
    click.echo(f"  captured {writer.stats.own_written} new, {writer.stats.own_duplicates} already there; "
               f"exported as `evalledger export` prints them:")
    for (line,) in lines:
        click.echo(f"  {line}")
    return [line for (line,) in lines]
