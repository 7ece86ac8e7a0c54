"""Capture without a database: configuration resolution, row checks, failure reasons, the spool,
and the caller-side contract (never raises, no-op when off)."""

import json
import threading
import uuid

import psycopg
import pytest

from evalledger.suites.capture import api as capture
from evalledger.suites.capture.failures import DatabaseDown, ScrubberFailed, classify
from evalledger.suites.capture.rows import COLUMNS, RowError, normalize
from evalledger.suites.capture.settings import resolve_settings
from evalledger.suites.capture.spool import Spool
from evalledger.suites.capture.writer import CaptureWriter

ROW = {"tool_name": "query", "query": "q", "vector_enabled": True, "latency_ms": 5, "remote": False}


def write_config(home, data):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(data if isinstance(data, str) else json.dumps(data))


# Seed 001's resolution table: config eval.capture true/false wins, then CONTRIBUTOR_MODE=1, else off.
@pytest.mark.parametrize(("config", "env", "expected", "source"), [
    ({"eval": {"capture": True}}, None, True, "config.json eval.capture = true"),
    ({"eval": {"capture": True}}, "1", True, "config.json eval.capture = true"),
    ({"eval": {"capture": True}}, "0", True, "config.json eval.capture = true"),
    ({"eval": {"capture": False}}, "1", False, "config.json eval.capture = false"),
    ({"eval": {"capture": False}}, None, False, "config.json eval.capture = false"),
    (None, "1", True, "EVALLEDGER_CONTRIBUTOR_MODE=1"),
    ({"eval": {}}, "1", True, "EVALLEDGER_CONTRIBUTOR_MODE=1"),
    ({"engine": "postgres"}, "1", True, "EVALLEDGER_CONTRIBUTOR_MODE=1"),
    ({"eval": {"capture": "true"}}, "1", True, "EVALLEDGER_CONTRIBUTOR_MODE=1"),
    ({"eval": {"capture": "true"}}, None, False, 'config.json eval.capture "true" is not a JSON boolean; default (off)'),
    ({"eval": {"capture": None}}, "yes", False, 'config.json eval.capture null is not a JSON boolean; '
                                                'EVALLEDGER_CONTRIBUTOR_MODE="yes" is not exactly 1; default (off)'),
    (None, None, False, "default (off)"),
    (None, "0", False, 'EVALLEDGER_CONTRIBUTOR_MODE="0" is not exactly 1; default (off)'),
    (None, "true", False, 'EVALLEDGER_CONTRIBUTOR_MODE="true" is not exactly 1; default (off)'),
    (None, "yes", False, 'EVALLEDGER_CONTRIBUTOR_MODE="yes" is not exactly 1; default (off)'),
    (None, " 1", False, 'EVALLEDGER_CONTRIBUTOR_MODE=" 1" is not exactly 1; default (off)'),
    (None, "1 ", False, 'EVALLEDGER_CONTRIBUTOR_MODE="1 " is not exactly 1; default (off)'),
    (None, "01", False, 'EVALLEDGER_CONTRIBUTOR_MODE="01" is not exactly 1; default (off)'),
    (None, "", False, 'EVALLEDGER_CONTRIBUTOR_MODE="" is not exactly 1; default (off)'),
    ("{not json", "1", True, "EVALLEDGER_CONTRIBUTOR_MODE=1"),
    ("{not json", None, False, "config.json is not readable JSON; default (off)"),
])
def test_capture_resolution(tmp_path, config, env, expected, source):
    if config is not None:
        write_config(tmp_path, config)
    environ = {} if env is None else {"EVALLEDGER_CONTRIBUTOR_MODE": env}
    settings = resolve_settings(tmp_path, environ)
    assert (settings.capture, settings.source) == (expected, source)


@pytest.mark.parametrize(("config", "scrub"), [
    (None, True),
    ({"eval": {"capture": True}}, True),
    ({"eval": {"capture": False}}, True),
    ({"eval": {"scrub_pii": False}}, False),
    ({"eval": {"capture": True, "scrub_pii": False}}, False),
    ({"eval": {"scrub_pii": True}}, True),
    ({"eval": {"scrub_pii": "false"}}, True),
    ({"eval": {"scrub_pii": 0}}, True),
])
def test_scrub_pii_defaults_to_true_on_its_own(tmp_path, config, scrub):
    if config is not None:
        write_config(tmp_path, config)
    assert resolve_settings(tmp_path, {"EVALLEDGER_CONTRIBUTOR_MODE": "1"}).scrub_pii is scrub
    assert resolve_settings(tmp_path, {}).scrub_pii is scrub


def test_normalize_fills_defaults_and_deduplicates_in_order():
    row = normalize({**ROW, "retrieved_slugs": ["b", "a", "b"], "source_ids": ("s2", "s1", "s2"),
                     "retrieved_chunk_ids": [3, 3, 1]})
    assert row["retrieved_slugs"] == ["b", "a"]
    assert row["source_ids"] == ["s2", "s1"]
    assert row["retrieved_chunk_ids"] == [3, 3, 1]
    assert (row["expand_enabled"], row["detail"], row["detail_resolved"], row["job_id"], row["subagent_id"]) == (
        None, None, None, None, None)
    assert row["expansion_applied"] is False
    assert row["latency_ms"] == 5.0 and isinstance(row["latency_ms"], float)
    assert isinstance(row["capture_key"], uuid.UUID)


@pytest.mark.parametrize(("change", "field"), [
    ({"tool_name": None}, "tool_name"),
    ({"query": 5}, "query"),
    ({"retrieved_slugs": "a"}, "retrieved_slugs"),
    ({"retrieved_slugs": [1]}, "retrieved_slugs"),
    ({"retrieved_chunk_ids": [1, True]}, "retrieved_chunk_ids"),
    ({"retrieved_chunk_ids": [1.5]}, "retrieved_chunk_ids"),
    ({"source_ids": [None]}, "source_ids"),
    ({"vector_enabled": 1}, "vector_enabled"),
    ({"remote": "false"}, "remote"),
    ({"expand_enabled": "yes"}, "expand_enabled"),
    ({"detail": 3}, "detail"),
    ({"latency_ms": "5"}, "latency_ms"),
    ({"latency_ms": True}, "latency_ms"),
    ({"latency_ms": float("nan")}, "latency_ms"),
    ({"job_id": 1.0}, "job_id"),
    ({"capture_key": "nope"}, "capture_key"),
])
def test_normalize_names_the_bad_field(change, field):
    with pytest.raises(RowError) as raised:
        normalize({**ROW, **change})
    assert raised.value.field == field


@pytest.mark.parametrize("missing", ["tool_name", "query", "vector_enabled", "latency_ms", "remote"])
def test_normalize_requires_the_seed_fields_without_default(missing):
    row = dict(ROW)
    del row[missing]
    with pytest.raises(RowError, match=f"field {missing}: missing"):
        normalize(row)


@pytest.mark.parametrize(("exc", "reason"), [
    (psycopg.errors.CheckViolation("x"), "check_violation"),
    (psycopg.errors.InsufficientPrivilege("x"), "rls_reject"),
    (psycopg.errors.AdminShutdown("x"), "db_down"),
    (psycopg.errors.ConnectionFailure("x"), "db_down"),
    (psycopg.errors.TooManyConnections("x"), "db_down"),
    (psycopg.OperationalError("connection refused"), "db_down"),
    (psycopg.errors.NotNullViolation("x"), "other"),
    (psycopg.errors.NumericValueOutOfRange("x"), "other"),
    (ScrubberFailed("x"), "scrubber_exception"),
    (ValueError("x"), "other"),
])
def test_classify_by_sqlstate(exc, reason):
    assert classify(exc)[0] == reason


def test_spool_appends_durably_and_replays_once(tmp_path):
    spool = Spool(tmp_path / "capture" / "spool.ndjson")
    assert spool.append([{"n": 1}, {"n": 2}]) == 2
    spool.append([{"n": 3}])
    assert oct(spool.path.stat().st_mode & 0o777) == "0o600"
    assert oct(spool.path.parent.stat().st_mode & 0o777) == "0o700"
    seen = []
    assert spool.replay(seen.extend) == 3
    assert seen == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert spool.pending() == 0
    assert spool.replay(seen.extend) == 0


def test_a_failed_replay_keeps_the_spool(tmp_path):
    spool = Spool(tmp_path / "spool.ndjson")
    spool.append([{"n": 1}])

    def refuse(records):
        raise DatabaseDown("gone")

    with pytest.raises(DatabaseDown):
        spool.replay(refuse)
    assert spool.pending() == 1


def test_a_torn_last_line_is_skipped(tmp_path):
    spool = Spool(tmp_path / "spool.ndjson")
    spool.append([{"n": 1}])
    with open(spool.path, "ab") as handle:
        handle.write(b'{"n": 2, "tr')
    seen = []
    spool.replay(seen.extend)
    assert seen == [{"n": 1}]


def test_concurrent_appends_lose_nothing(tmp_path):
    spool = Spool(tmp_path / "spool.ndjson")
    threads = [threading.Thread(target=lambda i=i: [spool.append([{"t": i, "n": n}]) for n in range(50)])
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen = []
    spool.replay(seen.extend)
    assert sorted((r["t"], r["n"]) for r in seen) == [(t, n) for t in range(4) for n in range(50)]


def test_capture_is_a_no_op_when_off(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALLEDGER_HOME", str(tmp_path))
    monkeypatch.delenv("EVALLEDGER_CONTRIBUTOR_MODE", raising=False)
    assert capture.configure() is None
    capture.capture_candidate("query", "hello", vector_enabled=True, latency_ms=1, remote=False)
    assert not (tmp_path / "capture").exists()
    capture.close()


def test_capture_never_raises_into_the_caller(tmp_path):
    # An unreachable server and nonsense arguments: the caller sees nothing; the row is spooled or
    # recorded as a failure by the writer, never raised.
    writer = capture.configure(enabled=True, dsn=f"postgresql://nobody@/nodb?host={tmp_path}", home=tmp_path,
                               flush_interval=0.01)
    try:
        capture.capture_candidate("query", "hello", vector_enabled=True, latency_ms=1, remote=False)
        capture.capture_candidate(object(), None, retrieved_slugs=5, latency_ms="x")
        capture.capture_candidate()
        assert capture.flush(10)
    finally:
        assert capture.close(10)
    assert writer.stats.spooled == 1
    records = [json.loads(line) for line in (tmp_path / "capture" / "spool.ndjson").read_text().splitlines()]
    reasons = sorted(r["failure"]["reason"] for r in records if r["kind"] == "failure")
    assert reasons == ["db_down", "other", "other"]


def test_a_closed_writer_spools_what_it_could_not_write(tmp_path):
    writer = CaptureWriter(f"postgresql://nobody@/nodb?host={tmp_path}", home=tmp_path, background=False)
    writer.submit(dict(ROW, query="call me at 555-123-4567"))
    assert writer.close(1)
    rows = [json.loads(line) for line in writer.spool.path.read_text().splitlines()]
    candidates = [r["row"] for r in rows if r["kind"] == "candidate"]
    assert [c["query"] for c in candidates] == ["call me at [REDACTED]"]


def test_a_queued_capture_leaves_nothing_for_the_garbage_collector_to_scan(tmp_path, monkeypatch):
    """A backlog of queued rows made every full collection, a pause in the caller's thread, scan
    each of them (and their lists). capture_candidate queues a row of tuples, which the collector
    stops tracking once it has seen them; the row still holds the caller's values as they were at the
    call, and the writer stores them as arrays."""
    import gc

    writer = capture.configure(enabled=True, dsn=f"postgresql://nobody@/nodb?host={tmp_path}", home=tmp_path,
                               background=False)
    queued = []
    monkeypatch.setattr(writer, "submit", queued.append)
    slugs, chunks = ["doc/a", "doc/b", "doc/a"], [7, 8]
    try:
        capture.capture_candidate("query", "q", retrieved_slugs=slugs, retrieved_chunk_ids=chunks, source_ids=["s"],
                                  vector_enabled=True, latency_ms=5, remote=False)
    finally:
        capture.close(1)
    slugs.append("doc/c")  # the caller's list, changed after the call, changes nothing queued
    gc.collect()
    gc.collect()  # the row's own tuples may be seen after it in the first: it is untracked by the second
    assert len(queued) == 1 and not gc.is_tracked(queued[0])
    row = normalize(dict(zip(COLUMNS, queued[0])))  # as the writer reads a queued row
    assert (row["retrieved_slugs"], row["retrieved_chunk_ids"], row["source_ids"]) == (["doc/a", "doc/b"], [7, 8], ["s"])


def test_a_quota_outage_ends_only_when_a_write_as_large_as_the_largest_refused_is_taken(tmp_path, monkeypatch,
                                                                                       caplog):
    """A quota (EDQUOT) does not show in statvfs: a home on a half-empty disk says nothing of it, so
    small rows taken under the quota do not end the outage; a write as large as the one refused does."""
    import errno
    import logging
    import os

    writer = CaptureWriter(f"postgresql://nobody@/nodb?host={tmp_path}", home=tmp_path, background=False)
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    quota = [1000]  # bytes the quota lets one append take
    taken = writer.spool.append_lines

    def append_lines(lines):
        if sum(map(len, lines)) > quota[0]:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        return taken(lines)

    monkeypatch.setattr(writer.spool, "append_lines", append_lines)
    writer.write([dict(ROW, query="first")])  # the db_down failure and this row: taken
    writer.write([dict(ROW, query="y" * 2000)])
    assert writer.stats.dropped == 1
    for i in range(3):
        writer.write([dict(ROW, query=f"small {i}")])
    assert writer.stats.spooled == 4
    assert [r.getMessage() for r in caplog.records if "kept again" in r.getMessage()] == []
    quota[0] = 1 << 20
    writer.write([dict(ROW, query="z" * 2000)])
    [again] = [r.getMessage() for r in caplog.records if "kept again" in r.getMessage()]
    assert "(the spool takes them); 1 were dropped while the spool" in again
    writer.close(0)


def test_a_quota_outage_whose_refused_row_no_write_could_match_ends_after_a_quiet_minute(tmp_path, monkeypatch,
                                                                                         caplog):
    """A row longer than anything the quota takes was refused; every row after it is small and taken.
    No taken write is ever as large as the refused one, so only the quiet ends the outage: nothing
    refused for OUTAGE_QUIET_S, measured from the latest refusal. A refusal after that is a new
    outage, logged once."""
    import errno
    import logging
    import os
    import types

    from evalledger.suites.capture import writer as writer_module

    clock = [1000.0]
    monkeypatch.setattr(writer_module, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    writer = CaptureWriter(f"postgresql://nobody@/nodb?host={tmp_path}", home=tmp_path, background=False)
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    taken = writer.spool.append_lines

    def append_lines(lines):
        if sum(map(len, lines)) > 1000:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        return taken(lines)

    def logged(part: str) -> int:
        return sum(part in r.getMessage() for r in caplog.records)

    monkeypatch.setattr(writer.spool, "append_lines", append_lines)
    writer.write([dict(ROW, query="first")])
    writer.write([dict(ROW, query="y" * 2000)])
    clock[0] += writer_module.OUTAGE_QUIET_S - 1
    writer.write([dict(ROW, query="y" * 3000)])  # refused again: the quiet starts over
    clock[0] += writer_module.OUTAGE_QUIET_S - 1
    writer.write([dict(ROW, query="small, within the quiet")])
    assert (writer.stats.dropped, writer.stats.spooled) == (2, 2)
    assert (logged("refuses writes"), logged("kept again")) == (1, 0)
    clock[0] += 1
    writer.write([dict(ROW, query="small, after a quiet minute")])
    assert (logged("refuses writes"), logged("kept again")) == (1, 1)
    [again] = [r.getMessage() for r in caplog.records if "kept again" in r.getMessage()]
    assert "(the spool takes them); 2 were dropped while the spool" in again
    writer.write([dict(ROW, query="z" * 2000)])
    writer.write([dict(ROW, query="small again")])
    assert (writer.stats.dropped, writer.stats.spooled) == (3, 4)
    assert (logged("refuses writes"), logged("kept again")) == (2, 1)
    writer.close(0)
