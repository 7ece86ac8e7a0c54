"""Capture against a real PostgreSQL: every failure reason made to happen for real, the spool and
its replay, idempotency, append-only guards on every partition, the purge path, and the export
window (order, ties, chaining, in-flight writers) validated against the shipped JSON Schema."""

from __future__ import annotations

import io
import json
import shutil
import threading
import uuid
from datetime import datetime, timedelta, timezone
from importlib import resources

import jsonschema
import psycopg
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from evalledger.core import db
from evalledger.suites.capture.writer import CaptureWriter
from evalledger.suites.capture.export import Since, run_export
from tests.conftest import capture_times_since, make_capture_partition
from tests.db.test_retention import purge_committed

ROW = {"tool_name": "query", "query": "hello", "retrieved_slugs": ["a", "b"], "retrieved_chunk_ids": [1, 1, 2],
       "source_ids": ["s"], "expand_enabled": True, "detail": "low", "detail_resolved": "medium",
       "vector_enabled": True, "expansion_applied": False, "latency_ms": 12.5, "remote": True,
       "job_id": 3, "subagent_id": 4}
SCHEMA = json.loads((resources.files("evalledger.suites.capture") / "schemas" / "eval_candidate.v1.schema.json").read_text())


def count(admin, table="eval_candidates", where="true"):
    return admin.execute(f"SELECT count(*) FROM evalledger.{table} WHERE {where}").fetchone()[0]


def failures(admin):
    return admin.execute("SELECT reason, sqlstate, tool_name, detail FROM evalledger.eval_capture_failures "
                         "ORDER BY failure_id").fetchall()


def writer_for(dsn, tmp_path, **options):
    return CaptureWriter(dsn, home=tmp_path, background=False, **options)


def export_lines(dsn, since=None, until=None, limit=None, tool=None):
    db.use_database_url(dsn)
    out = io.BytesIO()
    try:
        run_export(since, until, limit, tool, out=out)
    finally:
        db.use_database_url(None)
    return [json.loads(line) for line in out.getvalue().decode().splitlines()]


# -- failure reasons ----------------------------------------------------------------------------


def test_a_query_over_50kb_is_a_check_violation_and_costs_no_other_row(dsn, admin, tmp_path):
    writer = writer_for(dsn, tmp_path)
    writer.write([dict(ROW, query="a" * 51200), dict(ROW, query="b" * 51201), dict(ROW, query="ok")])
    assert count(admin) == 2
    assert count(admin, where="octet_length(query) = 51200") == 1
    assert failures(admin) == [("check_violation", "23514", "query", 'new row for relation "eval_candidates_p'
                                + datetime.now(timezone.utc).strftime("%Y%m")
                                + '" violates check constraint "eval_candidates_query_max_50kb"')]
    assert writer.stats.written == 2 and writer.stats.failed["check_violation"] == 1


def test_multibyte_text_counts_bytes(dsn, admin, tmp_path):
    writer_for(dsn, tmp_path).write([dict(ROW, query="é" * 25601)])  # 51202 bytes
    assert count(admin) == 0
    assert [f[0] for f in failures(admin)] == ["check_violation"]


def test_enum_checks_are_check_violations(dsn, admin, tmp_path):
    writer_for(dsn, tmp_path).write([dict(ROW, tool_name="browse", expand_enabled=None), dict(ROW, detail="max"),
                                     dict(ROW, tool_name="search", expand_enabled=True),
                                     dict(ROW, tool_name="search", expand_enabled=None)])
    assert count(admin) == 1
    details = [f[3] for f in failures(admin)]
    assert [f[0] for f in failures(admin)] == ["check_violation"] * 3
    assert any("eval_candidates_tool_name_known" in d for d in details)
    assert any("eval_candidates_detail_known" in d for d in details)
    assert any("eval_candidates_expand_only_for_query" in d for d in details)


def test_a_role_without_rights_is_an_rls_reject(dsn, admin, tmp_path):
    # Rows written as evalledger_agent (no rights at all); the failures as the runner.
    writer = writer_for(dsn, tmp_path, role="agent")
    writer.write([dict(ROW), dict(ROW, tool_name="search", expand_enabled=None)])
    assert count(admin) == 0
    assert failures(admin) == [("rls_reject", "42501", "query", "permission denied for schema evalledger"),
                               ("rls_reject", "42501", "search", "permission denied for schema evalledger")]


def test_a_reader_role_is_refused_by_privileges_too(dsn, admin, tmp_path):
    writer_for(dsn, tmp_path, role="revops").write([dict(ROW)])
    assert failures(admin) == [("rls_reject", "42501", "query", "permission denied for table eval_candidates")]


def test_a_scrubber_exception_stores_nothing_of_the_query(dsn, admin, tmp_path):
    def broken(text):
        if "secret" in text:
            raise RuntimeError(f"cannot scrub {text}")
        return text.upper()

    writer = writer_for(dsn, tmp_path, scrubber=broken)
    writer.write([dict(ROW, query="my secret 4111 1111 1111 1111"), dict(ROW, query="fine")])
    assert admin.execute("SELECT query FROM eval_candidates").fetchall() == [("FINE",)]
    assert failures(admin) == [("scrubber_exception", None, "query", "RuntimeError in the scrubber")]
    assert "secret" not in (tmp_path / "x").as_posix()  # nothing spooled either
    assert not (tmp_path / "capture" / "spool.ndjson").exists()


def test_queries_are_scrubbed_unless_scrub_pii_is_off(dsn, admin, tmp_path):
    raw = "mail jane@example.com, card 4111 1111 1111 1111, Authorization: Bearer abc123.def_ghi"
    writer_for(dsn, tmp_path).write([dict(ROW, query=raw)])
    writer_for(dsn, tmp_path, scrub=False).write([dict(ROW, query=raw)])
    assert sorted(r[0] for r in admin.execute("SELECT query FROM eval_candidates")) == [
        "mail [REDACTED], card [REDACTED], Authorization: Bearer [REDACTED]", raw]


# -- db_down, the spool, exactly once -------------------------------------------------------------


def test_rows_spooled_while_the_database_is_unreachable_land_once(dsn, admin, tmp_path):
    down = writer_for(f"postgresql://nobody@/nodb?host={tmp_path}", tmp_path)
    down.write([dict(ROW, query=f"q{i} jane@example.com") for i in range(5)])
    down.write([dict(ROW, query="too long " + "x" * 51200)])
    assert down.stats.spooled == 6
    spooled = (tmp_path / "capture" / "spool.ndjson").read_text()
    assert "jane@example.com" not in spooled and "[REDACTED]" in spooled
    assert count(admin) == 0

    live = writer_for(dsn, tmp_path)
    assert live.replay_spool() == 7  # six rows and the outage's db_down failure
    assert count(admin) == 5
    assert sorted(f[0] for f in failures(admin)) == ["check_violation", "db_down"]
    assert (tmp_path / "capture" / "spool.ndjson").read_text() == ""
    live.replay_spool()
    assert count(admin) == 5


def test_a_crash_between_insert_and_spool_truncation_writes_nothing_twice(dsn, admin, tmp_path):
    down = writer_for(f"postgresql://nobody@/nodb?host={tmp_path}", tmp_path)
    down.write([dict(ROW, query=f"q{i}") for i in range(3)] + [dict(ROW, query="x" * 51201)])
    saved = (tmp_path / "capture" / "spool.ndjson").read_bytes()
    writer_for(dsn, tmp_path).replay_spool()
    # As if the process died after COMMIT and before the spool was emptied.
    (tmp_path / "capture" / "spool.ndjson").write_bytes(saved)
    again = writer_for(dsn, tmp_path)
    again.replay_spool()
    assert count(admin) == 3
    assert again.stats.duplicates == 3
    assert count(admin, "eval_capture_failures") == 2  # one db_down, one check_violation: each once


def test_the_same_capture_key_is_written_once(dsn, admin, tmp_path):
    key = uuid.uuid4()
    writer = writer_for(dsn, tmp_path)
    writer.write([dict(ROW, capture_key=key), dict(ROW, capture_key=key)])
    writer.write([dict(ROW, capture_key=str(key))])
    assert count(admin) == 1
    assert (writer.stats.written, writer.stats.duplicates) == (1, 2)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.sampled_from(["a", "b", "A", "", " a", "a ", "é", "e\u0301", "ß", "ss", "doc/1"])
                      | st.text(max_size=6), max_size=70))
def test_capture_all_distinct_says_whether_no_element_is_there_twice(admin, items):
    """Equal as text's = is equal (bytes, under the database's deterministic collation): as Python's
    str; arrays longer than 32 take the counting path. Asked as the runner, who writes captures."""
    assume("\x00" not in "".join(items))
    admin.execute("SET ROLE evalledger_runner")
    try:
        said = admin.execute("SELECT evalledger.capture_all_distinct_v1(%s::text[])", (items,)).fetchone()[0]
    finally:
        admin.execute("RESET ROLE")
    assert said == (len(set(items)) == len(items))


@pytest.mark.parametrize("column", ["retrieved_slugs", "source_ids"])
def test_a_captured_row_names_each_slug_and_source_once(connect_as, admin, column):
    runner = connect_as("evalledger_runner")
    insert = ("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
              f"latency_ms, remote, capture_key, {column}) VALUES ('query', 'q', true, false, 1, false, "
              "gen_random_uuid(), %s)")
    constraint = {"retrieved_slugs": "eval_candidates_slugs_distinct", "source_ids": "eval_candidates_source_ids_distinct"}
    for refused in (["a", "b", "a"], ["a", None], [f"s{i % 33}" for i in range(40)]):
        with pytest.raises(psycopg.errors.CheckViolation, match=constraint[column]):
            runner.execute(insert, (refused,))
    for stored in ([], ["a"], ["a", "A", "a "], [f"s{i}" for i in range(40)]):
        runner.execute(insert, (stored,))
    assert count(admin) == 4


INSERT_ONE = ("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
              "latency_ms, remote, capture_key) VALUES ('query', %s, true, false, 1, false, %s)")


def test_the_database_stores_a_capture_key_once_whoever_writes(dsn, admin, connect_as, tmp_path):
    """Not the writer's courtesy: a statement storing a key twice, or one stored before, is refused whole."""
    runner = connect_as("evalledger_runner")
    key, other = uuid.uuid4(), uuid.uuid4()
    with pytest.raises(psycopg.errors.UniqueViolation, match="eval_candidate_keys_pkey"):
        runner.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                       "latency_ms, remote, capture_key) VALUES ('query', 'a', true, false, 1, false, %s), "
                       "('query', 'b', true, false, 1, false, %s), ('query', 'c', true, false, 1, false, %s)",
                       (other, key, key))
    assert count(admin) == 0 and count(admin, "eval_candidate_keys") == 0
    # A rolled-back transaction takes its keys with it: the key is free again.
    with runner.transaction():
        runner.execute(INSERT_ONE, ("rolled back", key))
        assert count(runner, "eval_candidates", f"capture_key = '{key}'") == 1
        raise psycopg.Rollback()
    assert count(admin, "eval_candidate_keys") == 0
    runner.execute(INSERT_ONE, ("first", key))
    for conn in (runner, admin):
        with pytest.raises(psycopg.errors.UniqueViolation, match="eval_candidate_keys_pkey"):
            conn.execute(INSERT_ONE, ("again", key))
    # Every stored row has its key, stamped with the row's own created_at (the purge reads it there).
    writer_for(dsn, tmp_path).write([dict(ROW, query=f"w{i}") for i in range(5)])
    assert admin.execute("SELECT count(*) FROM evalledger.eval_candidates c FULL JOIN evalledger.eval_candidate_keys k "
                         "USING (capture_key) WHERE c.created_at IS DISTINCT FROM k.created_at").fetchone()[0] == 0
    assert (count(admin), count(admin, "eval_candidate_keys")) == (6, 6)
    assert [r[0] for r in admin.execute("SELECT query FROM evalledger.eval_candidates WHERE capture_key = %s",
                                        (key,))] == ["first"]


def test_a_batch_is_stored_in_its_order_with_the_stored_keys_left_out(dsn, admin, tmp_path):
    """The ids (and created_at) follow the batch, whatever plan leaves out the keys stored already."""
    rows = [dict(ROW, query=f"q{i:02}", capture_key=uuid.uuid4()) for i in range(60)]
    writer = writer_for(dsn, tmp_path)
    writer.write(rows[::7])
    writer.write(rows)
    assert (writer.stats.written, writer.stats.duplicates) == (60, 9)
    assert [r[0] for r in admin.execute("SELECT query FROM evalledger.eval_candidates ORDER BY id")] == (
        [r["query"] for r in rows[::7]] + [r["query"] for i, r in enumerate(rows) if i % 7])
    assert admin.execute("SELECT bool_and(ordered) FROM (SELECT created_at >= lag(created_at, 1, created_at) "
                         "OVER (ORDER BY id) AS ordered FROM evalledger.eval_candidates) o").fetchone()[0]


def test_a_replayed_batch_is_one_statement_that_stores_nothing(dsn, admin, tmp_path):
    """The stored keys are left out by the INSERT itself, not found by a refusal and rows retried
    one by one (each its own savepoint): a spool replayed after a crash costs what one batch costs."""
    rows = [dict(ROW, query=f"q{i}", capture_key=uuid.uuid4()) for i in range(50)]
    writer = writer_for(dsn, tmp_path)
    writer.write(rows)
    statements = []
    real = writer._insert
    writer._insert = lambda conn, batch: statements.append(len(batch)) or real(conn, batch)
    writer.write(rows[:20] + [dict(ROW, query="new", capture_key=uuid.uuid4())])
    assert statements == [21]
    assert (writer.stats.written, writer.stats.duplicates, count(admin), failures(admin)) == (51, 20, 51, [])


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read", "serializable"])
def test_two_writers_racing_with_one_key_store_it_once(dsn, admin, connect_as, tmp_path, isolation):
    """The second writer waits on the first's uncommitted key, is refused once it commits, and
    stores its batch row by row without that key: the rest is written, nothing twice, no failure;
    whatever isolation level the database gives its sessions by default."""
    admin.execute(psycopg.sql.SQL("ALTER DATABASE {} SET default_transaction_isolation = {}").format(
        psycopg.sql.Identifier(admin.info.dbname), psycopg.sql.Literal(isolation)))
    key = uuid.uuid4()
    first = psycopg.connect(dsn)
    first.execute("SET ROLE evalledger_runner")
    first.execute(INSERT_ONE, ("first writer", key))
    second = writer_for(dsn, tmp_path)
    done = threading.Thread(target=second.write, args=([dict(ROW, query="raced", capture_key=key),
                                                        dict(ROW, query="only the second's")],))
    done.start()
    for _ in range(500):
        waiting = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                "AND wait_event_type = 'Lock' AND query LIKE '%%INSERT INTO evalledger.eval_candidates%%'"
                                ).fetchone()[0]
        if waiting:
            break
        threading.Event().wait(0.01)
    assert waiting == 1, "the second writer never waited on the first's key"
    first.commit()
    first.close()
    done.join(30)
    assert sorted(r[0] for r in admin.execute("SELECT query FROM evalledger.eval_candidates")) == [
        "first writer", "only the second's"]
    assert (second.stats.written, second.stats.duplicates, failures(admin)) == (1, 1, [])


@pytest.fixture
def ledger_at_release(admin, dsn, tmp_path):
    """A database migrated to the release only: capture_dedupe_v1, no capture_keys_stored_v1."""
    from psycopg.conninfo import make_conninfo

    from evalledger.core.migrate import migrate
    from tests.released import migrations_of_the_release

    name = f"{admin.info.dbname}_capture_at_release"
    admin.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    at_release = make_conninfo(dsn, dbname=name)
    migrate(at_release, migrations_of_the_release(tmp_path / "release"))
    yield at_release
    admin.execute(psycopg.sql.SQL("DROP DATABASE {} WITH (FORCE)").format(psycopg.sql.Identifier(name)))


@pytest.mark.long  # a ledger migrated from the release, not a clone of the template
def test_a_writer_newer_than_its_ledger_captures_into_it_until_it_is_migrated(ledger_at_release, tmp_path):
    """Before migration 0103 the ledger's row trigger skips a key stored before: the writer sends it
    the release's INSERT, and the new one from its first connection to the migrated ledger."""
    from evalledger.core.migrate import migrate

    key = uuid.uuid4()
    writer = writer_for(ledger_at_release, tmp_path)
    writer.write([dict(ROW, query="before", capture_key=key), dict(ROW, query="before 2")])
    writer.write([dict(ROW, query="again", capture_key=key)])
    assert (writer.stats.written, writer.stats.duplicates, writer.stats.spooled) == (2, 1, 0)
    writer.close(0)
    migrate(ledger_at_release)
    after = writer_for(ledger_at_release, tmp_path)
    after.write([dict(ROW, query="after", capture_key=key), dict(ROW, query="after 2")])
    assert (after.stats.written, after.stats.duplicates, after.stats.spooled) == (1, 1, 0)
    with psycopg.connect(ledger_at_release) as conn:
        assert sorted(r[0] for r in conn.execute("SELECT query FROM evalledger.eval_candidates")) == [
            "after 2", "before", "before 2"]
        assert conn.execute("SELECT count(*) FROM evalledger.eval_capture_failures").fetchone()[0] == 0


@pytest.mark.slow
def test_the_database_stopped_mid_capture(tmp_path):
    """A throwaway embedded server: capture, stop it, keep capturing, start it: every row once."""
    from evalledger.core.embedded import EmbeddedServer
    from evalledger.core.migrate import migrate

    server = EmbeddedServer(tmp_path / "home")
    try:
        url = server.start()
        migrate(url)
        writer = CaptureWriter(url, home=tmp_path, flush_interval=0.01)
        for i in range(20):
            writer.submit(dict(ROW, query=f"before {i}"))
        assert writer.flush(30)
        server.stop()
        for i in range(30):
            writer.submit(dict(ROW, query=f"during {i}"))
        assert writer.flush(30)
        assert writer.stats.spooled == 30
        server.start()
        for i in range(10):
            writer.submit(dict(ROW, query=f"after {i}"))
        assert writer.close(60)
        with psycopg.connect(url) as conn:
            queries = [r[0] for r in conn.execute("SELECT query FROM evalledger.eval_candidates")]
            reasons = [r[0] for r in conn.execute("SELECT reason FROM evalledger.eval_capture_failures")]
        assert sorted(queries) == sorted([f"before {i}" for i in range(20)] + [f"during {i}" for i in range(30)]
                                         + [f"after {i}" for i in range(10)])
        assert reasons == ["db_down"]
        assert (tmp_path / "capture" / "spool.ndjson").read_text() == ""
    finally:
        server.stop()
        if server.as_root:
            shutil.rmtree(server.base, ignore_errors=True)


# -- guards -------------------------------------------------------------------------------------


def test_capture_rows_are_append_only_for_every_role(dsn, admin, connect_as, tmp_path):
    writer_for(dsn, tmp_path).write([dict(ROW), dict(ROW, query="b" * 51201)])
    month = datetime.now(timezone.utc).strftime("%Y%m")
    owner = connect_as("evalledger_owner")
    for conn in (admin, owner):
        for statement in ("UPDATE eval_candidates SET query = 'x'", "DELETE FROM eval_candidates",
                          "TRUNCATE eval_candidates", f"TRUNCATE eval_candidates_p{month}",
                          "UPDATE eval_capture_failures SET detail = 'x'", "DELETE FROM eval_capture_failures",
                          "TRUNCATE eval_capture_failures", "DELETE FROM eval_candidate_keys",
                          "TRUNCATE eval_candidate_keys", f"DROP TABLE eval_candidates_p{month}"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
    admin.execute("SET session_replication_role = replica")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        admin.execute("DELETE FROM eval_candidates")
    admin.execute("RESET session_replication_role")
    assert count(admin) == 1 and count(admin, "eval_capture_failures") == 1


def test_every_partition_is_guarded(admin, connect_as):
    # The dedupe key and the journal are the parent's statement triggers, which an INSERT naming a
    # partition would not fire: no role but the code role may name one.
    parent = dict(admin.execute("SELECT tgname, tgenabled FROM pg_trigger "
                                "WHERE tgrelid = 'evalledger.eval_candidates'::regclass AND NOT tgisinternal"))
    assert {name: parent.get(name) for name in ("eval_candidates_10_keys", "eval_candidates_90_journal_insert")} == {
        "eval_candidates_10_keys": "A", "eval_candidates_90_journal_insert": "A"}
    month = datetime.now(timezone.utc).strftime("%Y%m")
    for role in ("evalledger_runner", "evalledger_owner"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            connect_as(role).execute(INSERT_ONE.replace("eval_candidates ", f"eval_candidates_p{month} "),
                                     ("by name", uuid.uuid4()))
    parts = [r[0] for r in admin.execute(
        "SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = 'evalledger.eval_candidates'::regclass")]
    assert len(parts) >= 4
    for part in parts:
        name = part.split(".")[-1]
        triggers = dict(admin.execute(
            "SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal", (part,)))
        assert triggers == {"eval_candidates_00_append_only": "A", f"{name}_00_no_truncate": "A",
                            f"{name}_05_window_lock": "A"}
        assert admin.execute("SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = %s::regclass",
                             (part,)).fetchone()[0]


def test_the_runner_cannot_choose_id_or_created_at(connect_as):
    runner = connect_as("evalledger_runner")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        runner.execute("INSERT INTO eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                       "latency_ms, remote, capture_key, created_at) VALUES ('query', 'q', true, false, 1, "
                       "false, gen_random_uuid(), '2001-01-01')")
    agent = connect_as("evalledger_agent")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        agent.execute("SELECT 1 FROM evalledger.eval_candidates")


def make_old_partition(admin, month: str) -> None:
    """A partition as the database makes them, for a month long past, with one row."""
    start = datetime.strptime(month, "%Y%m").date()
    make_capture_partition(admin, start)
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                  "latency_ms, remote, capture_key, created_at) VALUES ('query', 'old', true, false, 1, false, "
                  "gen_random_uuid(), %s)", (f"{start} 00:00:00+00",))


def test_the_purge_drops_only_partitions_past_seven_years(dsn, admin, tmp_path):
    writer_for(dsn, tmp_path).write([dict(ROW)])
    make_old_partition(admin, "201501")
    make_old_partition(admin, f"{datetime.now(timezone.utc).year - 3}01")
    purged = purge_committed(admin)  # the retention purge (evalledger retention apply)
    assert purged == [("eval_candidates", 1, None, "eval_candidates_p201501"), ("eval_candidate_keys", 1, None, None)]
    assert count(admin) == 2
    assert admin.execute("SELECT to_regclass('evalledger.eval_candidates_p201501')").fetchone()[0] is None
    assert count(admin, "capture_purge_marker") == 0
    assert count(admin, "retention_purge_marker") == 0


def test_inside_a_purge_the_drop_guard_still_refuses_young_partitions(admin):
    month = datetime.now(timezone.utc).strftime("%Y%m")
    with admin.transaction():
        admin.execute("INSERT INTO evalledger.capture_purge_marker VALUES (txid_current())")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="DROP refused"):
            admin.execute(f"DROP TABLE evalledger.eval_candidates_p{month}")


def test_the_owner_cannot_mark_a_purge(connect_as):
    owner = connect_as("evalledger_owner")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        owner.execute("INSERT INTO evalledger.capture_purge_marker VALUES (txid_current())")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        owner.execute("SELECT * FROM evalledger.retention_purge_v2()")


# -- export -------------------------------------------------------------------------------------


def insert_at(admin, created_at, n, tool="query"):
    """n rows with the same created_at (as only a superuser can: the runner cannot choose it)."""
    for _ in range(n):
        admin.execute(
            "INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, latency_ms,"
            " remote, capture_key, created_at) VALUES (%s, 'q', true, false, 1, false, gen_random_uuid(), %s)",
            (tool, created_at))


def test_export_rows_match_the_seed_schema_exactly(dsn, tmp_path):
    writer_for(dsn, tmp_path).write([dict(ROW), dict(ROW, tool_name="search", expand_enabled=None, detail=None,
                                                     detail_resolved=None, job_id=None, subagent_id=None,
                                                     retrieved_slugs=[], retrieved_chunk_ids=[], source_ids=[],
                                                     latency_ms=7)])
    lines = export_lines(dsn)
    assert len(lines) == 2
    for line in lines:
        jsonschema.validate(line, SCHEMA, format_checker=jsonschema.FormatChecker())
        assert next(iter(line)) == "schema_version"
    search, query = lines
    assert search["retrieved_slugs"] == [] and search["expand_enabled"] is None and search["latency_ms"] == 7
    assert {k: query[k] for k in ROW} == ROW


def test_the_schema_rejects_what_the_seed_does_not_allow():
    good = {"schema_version": 1, "id": 1, "tool_name": "query", "query": "q", "retrieved_slugs": [],
            "retrieved_chunk_ids": [], "source_ids": [], "expand_enabled": None, "detail": None,
            "detail_resolved": None, "vector_enabled": True, "expansion_applied": False, "latency_ms": 1,
            "remote": False, "job_id": None, "subagent_id": None, "created_at": "2026-01-02T03:04:05.000006Z"}
    jsonschema.validate(good, SCHEMA)
    for bad in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "job_id"},
                {**good, "schema_version": 2}, {**good, "tool_name": "browse"}, {**good, "id": "1"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


def test_export_order_and_ties_on_created_at(dsn, admin):
    t = capture_times_since(admin, 1)
    insert_at(admin, t, 3)
    insert_at(admin, t + timedelta(microseconds=1), 2)
    insert_at(admin, t, 2, tool="search")
    lines = export_lines(dsn)
    keys = [(line["created_at"], line["id"]) for line in lines]
    assert keys == sorted(keys, reverse=True)
    assert [line["id"] for line in lines] == [5, 4, 7, 6, 3, 2, 1]
    assert [line["id"] for line in export_lines(dsn, tool="search")] == [7, 6]
    assert [line["id"] for line in export_lines(dsn, limit=3)] == [5, 4, 7]


def test_windows_chain_with_nothing_missed_or_repeated(dsn, admin, tmp_path):
    t = capture_times_since(admin, 3) + timedelta(hours=1)
    insert_at(admin, t - timedelta(hours=1), 2)
    insert_at(admin, t, 4)  # the boundary itself: all four in the later window, none in the earlier
    first = export_lines(dsn, until=t)
    second = export_lines(dsn, since=Since(at=t), until=t + timedelta(minutes=1))
    assert [line["id"] for line in first] == [2, 1]
    assert [line["id"] for line in second] == [6, 5, 4, 3]


def test_chained_exports_while_writers_run_miss_nothing_and_repeat_nothing(dsn, admin):
    """Exports chained on each one's printed bound, with a writer committing all the while."""
    stop = threading.Event()

    def write_continuously():
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET ROLE evalledger_runner")
            while not stop.is_set():
                with conn.transaction():
                    for _ in range(5):
                        conn.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, "
                                     "expansion_applied, latency_ms, remote, capture_key) VALUES ('query', 'live', "
                                     "true, false, 1, false, gen_random_uuid())")

    writer = threading.Thread(target=write_continuously)
    writer.start()
    seen = []
    since = None
    try:
        for _ in range(8):
            out = io.BytesIO()
            db.use_database_url(dsn)
            try:
                done = run_export(since, None, None, None, out=out)
            finally:
                db.use_database_url(None)
            seen += [json.loads(line)["id"] for line in out.getvalue().decode().splitlines()]
            since = Since(at=done.until)
    finally:
        stop.set()
        writer.join()
    seen += [line["id"] for line in export_lines(dsn, since=since)]
    total = count(admin)
    assert total > 0
    assert sorted(seen) == sorted(r[0] for r in admin.execute("SELECT id FROM evalledger.eval_candidates"))
    assert len(set(seen)) == len(seen) == total


def test_export_waits_for_a_writer_in_flight_and_includes_its_rows(dsn, connect_as):
    runner = connect_as("evalledger_runner")
    runner.execute("BEGIN")
    runner.execute("INSERT INTO eval_candidates (tool_name, query, vector_enabled, expansion_applied, latency_ms, "
                   "remote, capture_key) VALUES ('query', 'in flight', true, false, 1, false, gen_random_uuid())")
    result = {}
    exporter = threading.Thread(target=lambda: result.setdefault("lines", export_lines(dsn)))
    exporter.start()
    exporter.join(1.0)
    assert exporter.is_alive()  # held at the window lock, not racing past the uncommitted row
    runner.execute("COMMIT")
    exporter.join(30)
    assert [line["query"] for line in result["lines"]] == ["in flight"]


def test_new_partitions_belong_to_the_code_role_and_are_guarded(admin):
    made = admin.execute("SELECT evalledger.capture_ensure_partitions_v2(6)").fetchone()[0]
    assert made >= 1
    rows = admin.execute(
        "SELECT c.relname, pg_get_userbyid(c.relowner), c.relrowsecurity AND c.relforcerowsecurity, "
        "bool_and(t.tgenabled = 'A') FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "JOIN pg_trigger t ON t.tgrelid = c.oid AND NOT t.tgisinternal "
        "WHERE i.inhparent = 'evalledger.eval_candidates'::regclass GROUP BY 1, 2, 3").fetchall()
    assert len(rows) >= 7
    assert [r for r in rows if r[1:] != ("evalledger_code", True, True)] == []


def test_a_partition_month_is_the_first_day_of_a_month(admin):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="the first day of a month, not 2020-01-15"):
        admin.execute("SELECT evalledger.capture_make_partition_v2('2020-01-15')")
    assert admin.execute("SELECT evalledger.capture_make_partition_v2('2020-01-01')").fetchone()[0] is True
    assert admin.execute("SELECT evalledger.capture_make_partition_v2('2020-01-01')").fetchone()[0] is False
