"""A judge batch is written before it is submitted and submitted once (issue 38, item 1): its rows
(the batch, its requests, the provider's events, each request's outcome) are append-only, the
runner writes only its own columns (who wrote a row and when are the database's), a second
'submitted' event of one batch is refused, and an outcome names a request of its batch."""

from __future__ import annotations

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.judges.batch import QUERIES


def batch(runner) -> int:
    batch_id = runner.execute(QUERIES["insert_batch"], {"suite": "takes-quality", "run_key": "7", "provider": "openai",
                                                        "attempt": 1}).fetchone()[0]
    runner.execute(QUERIES["insert_request"], {"batch_id": batch_id, "custom_id": f"b{batch_id}-1",
                                               "item": "cycle 1 openai:gpt-4o", "model": "openai:gpt-4o"})
    return batch_id


def test_a_batch_is_submitted_once_and_its_rows_never_change(connect_as):
    runner = connect_as("evalledger_runner")
    batch_id = batch(runner)
    runner.execute(QUERIES["insert_event"], {"batch_id": batch_id, "status": "submitted",
                                             "provider_batch_id": "batch_abc", "detail": None})
    with pytest.raises(errors.UniqueViolation):
        runner.execute(QUERIES["insert_event"], {"batch_id": batch_id, "status": "submitted",
                                                 "provider_batch_id": "batch_def", "detail": None})
    runner.execute(QUERIES["insert_event"], {"batch_id": batch_id, "status": "completed", "provider_batch_id": None,
                                             "detail": Jsonb({"request_counts": {"total": 1}})})
    runner.execute(QUERIES["insert_result"], {"batch_id": batch_id, "custom_id": f"b{batch_id}-1",
                                              "outcome": "succeeded", "error": None})
    with pytest.raises(errors.UniqueViolation):  # read once
        runner.execute(QUERIES["insert_result"], {"batch_id": batch_id, "custom_id": f"b{batch_id}-1",
                                                  "outcome": "errored", "error": "again"})
    for table in ("judge_batch", "judge_batch_request", "judge_batch_event", "judge_batch_result"):
        with pytest.raises(errors.InsufficientPrivilege):
            runner.execute(f"UPDATE evalledger.{table} SET created_at = now()")
        with pytest.raises(errors.InsufficientPrivilege):
            runner.execute(f"DELETE FROM evalledger.{table}")


def test_the_owner_cannot_rewrite_a_batch_either(connect_as):
    batch_id = batch(connect_as("evalledger_runner"))
    owner = connect_as("evalledger_owner")
    with pytest.raises(errors.DatabaseError):
        owner.execute("UPDATE evalledger.judge_batch SET provider = 'anthropic' WHERE batch_id = %s", (batch_id,))
    with pytest.raises(errors.DatabaseError):
        owner.execute("DELETE FROM evalledger.judge_batch_request WHERE batch_id = %s", (batch_id,))


def test_the_runner_writes_only_its_own_columns_and_known_values(connect_as):
    runner = connect_as("evalledger_runner")
    with pytest.raises(errors.InsufficientPrivilege):
        runner.execute("INSERT INTO evalledger.judge_batch (suite, run_key, provider, attempt, created_at) "
                       "VALUES ('takes-quality', '1', 'openai', 1, now() - interval '1 year')")
    with pytest.raises(errors.CheckViolation):
        runner.execute(QUERIES["insert_batch"], {"suite": "takes-quality", "run_key": "1", "provider": "openai",
                                                 "attempt": 3})
    batch_id = batch(runner)
    with pytest.raises(errors.ForeignKeyViolation):  # an outcome names a request of its batch
        runner.execute(QUERIES["insert_result"], {"batch_id": batch_id, "custom_id": "b999-1", "outcome": "succeeded",
                                                  "error": None})
    with pytest.raises(errors.CheckViolation):  # a failure says why
        runner.execute(QUERIES["insert_result"], {"batch_id": batch_id, "custom_id": f"b{batch_id}-1",
                                                  "outcome": "errored", "error": None})
    with pytest.raises(errors.CheckViolation):  # submitted names the provider's id
        runner.execute(QUERIES["insert_event"], {"batch_id": batch_id, "status": "submitted",
                                                 "provider_batch_id": None, "detail": None})
