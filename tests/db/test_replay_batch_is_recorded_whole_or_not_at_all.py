"""A batch of replayed answers is recorded whole or not at all (issue 40): run replay sends a batch's
INSERTs in one pipeline on a connection in autocommit, so they are the server's one implicit
transaction, committed at its Sync; one refused INSERT leaves none of the batch recorded (the
answers are asked again by a resumed run), as its explicit transaction did before."""

from __future__ import annotations

import pytest
from psycopg import errors

from evalledger.suites.replay import adapters, captured as capturing, store
from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_replay_drift_computed_by_the_database import file_run
from tests.db.test_retention import RUNNER


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def row(capture_id: int) -> capturing.Captured:
    return capturing.Captured(id=capture_id, created_at=None, tool_name="query", query="q", detail=None,
                              expand_enabled=None, vector_enabled=True,
                              results={"captured_slugs": ["a"], "captured_chunk_ids": [1], "captured_source_ids": ["s"],
                                       "captured_latency_ms": 100.0})


ANSWER = adapters.Reply("answered", fields={"retrieved_slugs": ["a"], "retrieved_chunk_ids": [1], "source_ids": ["s"],
                                            "vector_enabled": True, "expansion_applied": False,
                                            "detail_resolved": None, "latency_ms": 90.0})


def test_one_refused_answer_leaves_none_of_its_batch_recorded(connect_as):
    runner = connect_as(RUNNER)
    run_id = file_run(runner, planned=3)
    refused = adapters.Reply("capture_purged")  # the purge's outcome alone: refused to the runner
    with pytest.raises(errors.InsufficientPrivilege, match="only the retention purge records"):
        store.record_many(runner, run_id, [(row(1), ANSWER), (row(2), ANSWER), (row(3), refused)])
    assert store.replayed_ids(runner, run_id) == set()
    made = store.record_many(runner, run_id, [(row(1), ANSWER), (row(2), ANSWER), (row(1), ANSWER)])
    assert [m and m["status"] for m in made] == ["replayed", "replayed", None]  # the repeat: recorded already
    assert store.replayed_ids(runner, run_id) == {1, 2}
