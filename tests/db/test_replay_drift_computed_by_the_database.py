"""Replay (issue 40): every drift number and the run's decision are the database's. Hypothesis holds
recall, Jaccard and rank-biased overlap, as the trigger stores them, to a Python reference (exact
fractions) on generated lists, empty ones, duplicated chunk ids and ties included; a replayed row
supplying its own measure, status or (for a ledger window) captured fields is refused; the rows are
append-only for every role; a run is decided only whole, from its rubric; and each role reads only
what it may."""

from __future__ import annotations

import itertools
from datetime import timedelta, timezone
from decimal import Decimal
from fractions import Fraction

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from psycopg import errors
from psycopg.types.json import Jsonb

from tests.conftest import capture_times_since

P = Fraction(9, 10)  # the replay v1.0 rubric's rbo_p


# -- the Python reference (docs/replay.md, "What the database computes") ----------------------------

def recall(captured: list[str], replayed: list[str]) -> Fraction:
    wanted = set(captured)
    if not wanted:
        return Fraction(1)
    return Fraction(len(wanted & set(replayed[:len(wanted)])), len(wanted))


def jaccard(captured: list[str], replayed: list[str]) -> Fraction:
    union = set(captured) | set(replayed)
    return Fraction(1) if not union else Fraction(len(set(captured) & set(replayed)), len(union))


def rbo(captured: list[int], replayed: list[int], p: Fraction = P) -> Fraction:
    s, t = list(dict.fromkeys(captured)), list(dict.fromkeys(replayed))
    depth = max(len(s), len(t))
    if depth == 0:
        return Fraction(1)
    weights = [p ** (d - 1) for d in range(1, depth + 1)]
    overlap = [Fraction(len(set(s[:d]) & set(t[:d])), d) for d in range(1, depth + 1)]
    return sum(w * a for w, a in zip(weights, overlap)) / sum(weights)


def close(stored: Decimal, exact: Fraction) -> bool:
    return abs(Fraction(stored) - exact) < Fraction(1, 10**12)


# -- rows -------------------------------------------------------------------------------------------

def file_run(conn, planned: int = 1000, brain: str = "v1") -> int:
    return conn.execute(
        "INSERT INTO replay_run (brain_version, adapter_kind, adapter, source, request, file_sha256, planned) "
        "VALUES (%s, 'python', 'brain:answer', 'file', '{}', repeat('a', 64), %s) RETURNING replay_run_id",
        (brain, planned)).fetchone()[0]


def file_query(conn, run_id: int, capture_id: int, *, captured=(["a"], [1], ["s"]), replayed=(["a"], [1], ["s"]),
               vector=(True, True), latency=(100.0, 100.0), outcome="answered", **extra):
    values = {"replay_run_id": run_id, "capture_id": capture_id, "tool_name": "query",
              "captured_slugs": list(captured[0]), "captured_chunk_ids": list(captured[1]),
              "captured_source_ids": list(captured[2]), "captured_vector_enabled": vector[0],
              "captured_latency_ms": latency[0], "outcome": outcome}
    if outcome == "answered":
        values.update({"retrieved_slugs": list(replayed[0]), "retrieved_chunk_ids": list(replayed[1]),
                       "source_ids": list(replayed[2]), "vector_enabled": vector[1], "expansion_applied": False,
                       "latency_ms": latency[1]})
    else:
        values["error"] = "declined" if outcome == "declined" else "exit 1: boom"
    values.update(extra)
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO replay_query ({cols}) VALUES ({marks}) RETURNING status, recall, jaccard, rbo, "
                        "sources_gained, sources_lost, latency_ratio", values).fetchone()


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


slugs = st.lists(st.sampled_from("abcdefg"), max_size=8)
distinct_slugs = st.lists(st.sampled_from("abcdefg"), max_size=7, unique=True)
chunks = st.lists(st.integers(1, 9), max_size=12)


@st.composite
def pairs(draw, items):
    """Two lists: unrelated, equal (a tie), or the same items in another order."""
    first = draw(items)
    how = draw(st.sampled_from(["any", "same", "shuffled"]))
    if how == "same":
        return first, list(first)
    if how == "shuffled":
        return first, draw(st.permutations(first))
    return first, draw(items)


def test_the_references_agree_with_worked_cases():
    assert rbo([], []) == 1 and rbo([1], []) == 0 and rbo([1, 2], [1, 2]) == 1
    assert rbo([1, 1, 2], [1, 2]) == 1  # a chunk hit twice counts at its first rank
    assert rbo([1, 2], [2, 1]) == (Fraction(0) + P * 1) / (1 + P)
    assert recall(["a", "b"], ["b", "x", "a"]) == Fraction(1, 2)  # at the captured count: 2
    assert recall([], ["x"]) == 1 and jaccard([], []) == 1 and jaccard(["a"], []) == 0


_ids = itertools.count(1)


@given(slug_pair=pairs(slugs), chunk_pair=pairs(chunks))
@examples(60)
def test_recall_jaccard_and_rbo_are_the_references(runner, slug_pair, chunk_pair):
    run_id = runner.execute("SELECT replay_run_id FROM replay_run WHERE completed_at IS NULL").fetchone()
    run_id = run_id[0] if run_id else file_run(runner)
    (captured, replayed), (captured_chunks, replayed_chunks) = slug_pair, chunk_pair
    status, got_recall, got_jaccard, got_rbo, *_ = file_query(
        runner, run_id, next(_ids), captured=(captured, captured_chunks, []), replayed=(replayed, replayed_chunks, []))
    assert status == "replayed"
    assert close(got_recall, recall(captured, replayed)), (captured, replayed, got_recall)
    assert close(got_jaccard, jaccard(captured, replayed)), (captured, replayed, got_jaccard)
    assert close(got_rbo, rbo(captured_chunks, replayed_chunks)), (captured_chunks, replayed_chunks, got_rbo)


@given(chunk_pair=pairs(chunks), p=st.fractions(Fraction(1, 100), Fraction(1), max_denominator=100))
@examples(40)
def test_rbo_is_the_reference_at_every_p(admin, chunk_pair, p):
    got = admin.execute("SELECT evalledger.replay_rbo_v1(%s::bigint[], %s::bigint[], %s::numeric)",
                        (chunk_pair[0], chunk_pair[1], Decimal(p.numerator) / Decimal(p.denominator))).fetchone()[0]
    assert close(got, rbo(*chunk_pair, p=Fraction(Decimal(p.numerator) / Decimal(p.denominator))))


# replay_rbo_v1 as migration 0131 first wrote it (set-based SQL): 0136 computes it in one pass, and
# every rbo stored before must recompute to the digit (the ledger's recompute compares them).
RBO_0131 = """
CREATE FUNCTION pg_temp.rbo_0131(captured bigint[], replayed bigint[], p numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    WITH s AS (SELECT id, row_number() OVER (ORDER BY min(i)) AS rank
                 FROM unnest(captured) WITH ORDINALITY u(id, i) GROUP BY id),
         t AS (SELECT id, row_number() OVER (ORDER BY min(i)) AS rank
                 FROM unnest(replayed) WITH ORDINALITY u(id, i) GROUP BY id),
         depth AS (SELECT greatest((SELECT count(*) FROM s), (SELECT count(*) FROM t)) AS d),
         common AS (SELECT greatest(s.rank, t.rank) AS at FROM s JOIN t USING (id))
    SELECT CASE WHEN depth.d = 0 THEN 1::numeric
                ELSE (SELECT sum(p ^ (k - 1) * (SELECT count(*) FROM common WHERE common.at <= k)::numeric / k)
                           / sum(p ^ (k - 1))
                        FROM generate_series(1::bigint, depth.d) k) END
      FROM depth
$$"""


@pytest.fixture
def rbo_0131(admin):
    admin.execute(RBO_0131)
    yield
    admin.execute("DROP FUNCTION pg_temp.rbo_0131(bigint[], bigint[], numeric)")


@given(chunk_pair=pairs(chunks), p=st.fractions(Fraction(1, 1000), Fraction(1), max_denominator=1000))
@examples(60)
def test_rbo_is_0131s_to_the_digit(admin, rbo_0131, chunk_pair, p):
    weight = Decimal(p.numerator) / Decimal(p.denominator)
    now, then = admin.execute(
        "SELECT evalledger.replay_rbo_v1(%(a)s::bigint[], %(b)s::bigint[], %(p)s::numeric)::text, "
        "pg_temp.rbo_0131(%(a)s::bigint[], %(b)s::bigint[], %(p)s::numeric)::text",
        {"a": chunk_pair[0], "b": chunk_pair[1], "p": weight}).fetchone()
    assert now == then, (chunk_pair, weight)


def test_sources_gained_and_lost_and_the_latency_ratio(runner):
    run_id = file_run(runner)
    row = file_query(runner, run_id, 1, captured=(["a", "b"], [1, 2], ["wiki", "crm"]),
                     replayed=(["a"], [1], ["crm", "tickets"]), latency=(200.0, 300.0))
    assert row[0] == "replayed"
    assert row[4:] == (["tickets"], ["wiki"], Decimal("1.5"))
    # A captured latency of 0: no ratio.
    assert file_query(runner, run_id, 2, latency=(0.0, 5.0))[6] is None


@pytest.mark.parametrize("column, value", [("recall", 1), ("jaccard", 1), ("rbo", 1), ("status", "replayed"),
                                           ("sources_lost", []), ("latency_ratio", 1)])
def test_a_replayed_row_supplying_its_own_measure_is_refused(runner, admin, column, value):
    """The runner holds no INSERT on a computed column; the superuser, who passes every privilege
    check, meets the admission trigger."""
    run_id = file_run(runner)
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table replay_query"):
        file_query(runner, run_id, 1, captured=(["a"], [1], []), replayed=(["b"], [2], []), **{column: value})
    with pytest.raises(errors.InsufficientPrivilege, match=f"replay_query.{column} computed by the database"):
        file_query(admin, run_id, 1, captured=(["a"], [1], []), replayed=(["b"], [2], []), **{column: value})
    assert admin.execute("SELECT count(*) FROM replay_query").fetchone()[0] == 0


def test_the_captured_mode_decides_what_is_replayed(runner):
    run_id = file_run(runner)
    assert file_query(runner, run_id, 1, vector=(False, False))[0] == "replayed"
    # Answered in another mode: not replayable, no measure, and why.
    row = file_query(runner, run_id, 2, vector=(False, True))
    assert row[0] == "not_replayable" and row[1:4] == (None, None, None)
    assert runner.execute("SELECT error FROM replay_query WHERE capture_id = 2").fetchone()[0] == \
        "answered with vector_enabled true, captured false: another mode, not counted"
    assert file_query(runner, run_id, 3, outcome="declined")[0] == "not_replayable"
    assert file_query(runner, run_id, 4, outcome="adapter_failed")[0] == "adapter_failed"


# -- a ledger window ----------------------------------------------------------------------------------

CAPTURE = ("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,"
           " vector_enabled, expansion_applied, latency_ms, remote, capture_key, created_at)"
           " VALUES ('query', 'q', %s, %s, %s, %s, false, 100, %s, gen_random_uuid(), %s) RETURNING id, created_at")


@pytest.fixture
def window(admin):
    """Three captured rows an hour apart (one of them local) and the window's start."""
    since = capture_times_since(admin, 4)
    rows = [admin.execute(CAPTURE, (["a", "b"], [1, 2], ["wiki"], True, n != 1, since + timedelta(hours=n))).fetchone()
            for n in range(3)]
    return since, rows


def ledger_run(conn, since, until, **extra) -> tuple[int, int]:
    values = {"brain_version": "v1", "adapter_kind": "command", "adapter": "brain", "source": "ledger",
              "request": Jsonb({}), "since_at": since, "until_at": until, **extra}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO replay_run ({cols}) VALUES ({marks}) RETURNING replay_run_id, planned",
                        values).fetchone()


def test_a_ledger_window_is_planned_and_its_captured_fields_copied_by_the_database(runner, admin, window):
    since, rows = window
    run_id, planned = ledger_run(runner, since, since + timedelta(hours=2, minutes=30))
    assert planned == 3
    assert ledger_run(runner, since, since + timedelta(hours=2, minutes=30), remote=True, brain_version="v2")[1] == 2
    capture_id, created_at = rows[0]
    runner.execute("INSERT INTO replay_query (replay_run_id, capture_id, capture_created_at, outcome, retrieved_slugs, "
                   "retrieved_chunk_ids, source_ids, vector_enabled, expansion_applied, latency_ms) "
                   "VALUES (%s, %s, %s, 'answered', '{a}', '{1}', '{}', true, false, 50)", (run_id, capture_id, created_at))
    assert runner.execute("SELECT captured_slugs, captured_source_ids, recall, sources_lost, latency_ratio "
                          "FROM replay_query").fetchone() == (["a", "b"], ["wiki"], Decimal("0.5"), ["wiki"],
                                                             Decimal("0.5"))
    # Supplied captured fields are refused: a ledger window's are the ledger's.
    with pytest.raises(errors.InsufficientPrivilege, match="replay_query.captured_slugs computed by the database"):
        runner.execute("INSERT INTO replay_query (replay_run_id, capture_id, capture_created_at, captured_slugs, "
                       "outcome, error) VALUES (%s, %s, %s, '{x}', 'declined', 'no')", (run_id, *rows[1]))
    # A captured row outside the window is no row of the run.
    later = admin.execute(CAPTURE, ([], [], [], True, True, since + timedelta(hours=3))).fetchone()
    with pytest.raises(errors.ForeignKeyViolation, match="is not one of replay run"):
        runner.execute("INSERT INTO replay_query (replay_run_id, capture_id, capture_created_at, outcome, error) "
                       "VALUES (%s, %s, %s, 'declined', 'no')", (run_id, *later))


REPLAYED = ("INSERT INTO replay_query (replay_run_id, capture_id, capture_created_at, outcome, retrieved_slugs, "
            "retrieved_chunk_ids, source_ids, vector_enabled, expansion_applied, latency_ms) "
            "VALUES (%s, %s, %s, 'answered', %s, '{1}', '{wiki}', true, false, 50)")


def test_a_ledger_window_is_decided_on_the_rows_its_plan_counted_and_no_others(runner, admin):
    """The plan (the newest `planned` rows of the window) is the database's count, and so are the rows
    the run is decided on: once any captured row of the window was admitted, so a run planned on the
    newest three (which the brain now fails) passed on three older ones the runner chose instead, and
    a run planned on one was decided on five."""
    since = capture_times_since(admin, 8)
    rows = [admin.execute(CAPTURE, (["a"], [1], ["wiki"], True, True, since + timedelta(hours=n))).fetchone()
            for n in range(1, 7)]
    older, newest = rows[:3], rows[3:]
    run_id, planned = ledger_run(runner, since, since + timedelta(hours=7), max_rows=3)
    assert planned == 3
    for capture_id, created_at in older:
        with pytest.raises(errors.CheckViolation) as refused:
            runner.execute(REPLAYED, (run_id, capture_id, created_at, ["a"]))
        assert refused.value.diag.message_primary == (
            f"evalledger: captured row {capture_id} (at {runner.execute('SELECT %s::timestamptz::text', (created_at,)).fetchone()[0]}) "
            f"is not one replay run {run_id} planned: it replays the newest 3 of its window")
        assert refused.value.diag.constraint_name == "replay_query_planned"
    # Not around it from a session of its own zone and isolation, nor by naming the row's time otherwise.
    runner.execute("SET TimeZone = 'Pacific/Kiritimati'")
    runner.execute("SET default_transaction_isolation = 'serializable'")
    capture_id, created_at = older[-1]
    with pytest.raises(errors.CheckViolation, match=f"is not one replay run {run_id} planned"):
        runner.execute(REPLAYED, (run_id, capture_id, created_at.astimezone(timezone(timedelta(hours=-11))), ["a"]))
    with pytest.raises(errors.ForeignKeyViolation, match="is not one of replay run"):
        runner.execute(REPLAYED, (run_id, capture_id, newest[-1][1], ["a"]))  # another row's time: no such row
    runner.execute("RESET TimeZone")
    runner.execute("RESET default_transaction_isolation")
    for capture_id, created_at in newest:  # the brain lost every slug of these
        runner.execute(REPLAYED, (run_id, capture_id, created_at, ["zzz"]))
    summary = runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert summary["decision"] == "fail"
    assert runner.execute("SELECT array_agg(capture_id ORDER BY capture_id) FROM replay_query "
                          "WHERE replay_run_id = %s", (run_id,)).fetchone()[0] == [r[0] for r in newest]
    # A plan of one row takes the newest alone, whichever row the runner names first.
    one, planned = ledger_run(runner, since, since + timedelta(hours=7), max_rows=1, brain_version="v2")
    assert planned == 1
    with pytest.raises(errors.CheckViolation, match=f"is not one replay run {one} planned: it replays the newest 1 "):
        runner.execute(REPLAYED, (one, *rows[-2], ["a"]))
    runner.execute(REPLAYED, (one, *rows[-1], ["a"]))
    # Without max_rows the plan is every row of the window the runner reads.
    whole, planned = ledger_run(runner, since, since + timedelta(hours=7), brain_version="v3")
    assert planned == 6
    for row in rows:
        runner.execute(REPLAYED, (whole, *row, ["a"]))


def test_a_window_ending_after_now_or_a_supplied_plan_is_refused(runner, admin, window):
    since, _ = window
    with pytest.raises(errors.CheckViolation, match="a replay window ends no later than now"):
        ledger_run(runner, since, since + timedelta(days=400))
    with pytest.raises(errors.InsufficientPrivilege, match="replay_run.planned computed by the database"):
        ledger_run(runner, since, since + timedelta(hours=1), planned=1)
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table replay_run"):
        ledger_run(runner, since, since + timedelta(hours=1), decision="pass")
    with pytest.raises(errors.InsufficientPrivilege, match="replay_run.decision computed by the database"):
        ledger_run(admin, since, since + timedelta(hours=1), decision="pass")


# -- completion and the decision ----------------------------------------------------------------------

def test_a_run_is_decided_whole_from_its_rubric(runner, admin):
    run_id = file_run(runner, planned=4)
    for n in range(3):
        file_query(runner, run_id, n + 1)
    with pytest.raises(errors.CheckViolation, match="is not whole: 3 of 4 captured rows replayed"):
        runner.execute("SELECT replay_complete_v1(%s)", (run_id,))
    file_query(runner, run_id, 4, captured=(["a", "b"], [1], []), replayed=(["x"], [9], []))
    summary = runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert summary["decision"] == "fail"
    assert summary["rationale"] == ("Fail: mean recall 0.750 below 0.9; 1 query below 0.5: capture 4 (recall "
                                    "0.000).")
    assert Decimal(str(summary["mean_recall"])) == Decimal("0.75")
    # Complete: nothing more is admitted, and the decision is the database's for good.
    with pytest.raises(errors.InsufficientPrivilege, match="no open replay run"):
        file_query(runner, run_id, 5)
    assert runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0] is None
    with pytest.raises(errors.InsufficientPrivilege, match="replay run .* is complete"):
        admin.execute("UPDATE replay_run SET decision = 'pass'")


def test_too_few_replayable_queries_is_inconclusive(runner):
    run_id = file_run(runner, planned=3)
    file_query(runner, run_id, 1)
    file_query(runner, run_id, 2, outcome="declined")
    file_query(runner, run_id, 3, vector=(True, False))
    summary = runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert (summary["decision"], summary["rationale"]) == (
        "inconclusive", "Inconclusive: 1 of 3 queries replayed in their captured mode, at least 3 needed "
                        "(2 not replayable, 0 adapter failures).")


def test_a_brain_that_declines_most_queries_does_not_pass_on_the_rest(runner):
    """Three replayed queries with perfect recall, five declined: fewer than half of those asked
    were measured, so the run is not a pass."""
    run_id = file_run(runner, planned=8)
    for n in range(3):
        file_query(runner, run_id, n + 1)
    for n in range(3, 8):
        file_query(runner, run_id, n + 1, outcome="declined")
    summary = runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert (summary["decision"], summary["rationale"]) == (
        "inconclusive", "Inconclusive: 3 of 8 queries replayed in their captured mode, at least 4 needed "
                        "(5 not replayable, 0 adapter failures).")


def test_a_brain_whose_adapter_fails_fails(runner):
    run_id = file_run(runner, planned=4)
    for n in range(4):
        file_query(runner, run_id, n + 1, outcome="adapter_failed")
    summary = runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert (summary["decision"], summary["rationale"]) == (
        "fail", "Fail: 4 of 4 queries failed in the adapter, above a share of 0.1. 0 not replayable, "
                "4 adapter failures.")


def test_the_p95_latency_is_compared_with_the_captured(runner):
    run_id = file_run(runner, planned=3)
    for n in range(3):
        file_query(runner, run_id, n + 1, latency=(100.0, 130.0))
    summary = runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert summary["rationale"] == "Fail: p95 latency 1.300x the captured, above 1.25x."


# -- append-only, and who reads ------------------------------------------------------------------------

@pytest.mark.parametrize("statement", ["UPDATE evalledger.replay_query SET recall = 0",
                                       "DELETE FROM evalledger.replay_query",
                                       "TRUNCATE evalledger.replay_query CASCADE",
                                       "DELETE FROM evalledger.replay_run",
                                       "TRUNCATE evalledger.replay_run CASCADE",
                                       "UPDATE evalledger.replay_run SET brain_version = 'v9'"])
def test_replay_rows_are_append_only_for_every_role(runner, admin, connect_as, statement):
    run_id = file_run(runner, planned=1)
    file_query(runner, run_id, 1)
    for conn in (runner, connect_as("evalledger_owner"), admin):
        with pytest.raises((errors.InsufficientPrivilege, errors.RaiseException)):
            conn.execute(statement)
    assert admin.execute("SELECT count(*), min(recall) FROM evalledger.replay_query").fetchone() == (1, 1)
    assert admin.execute("SELECT brain_version FROM evalledger.replay_run").fetchone() == ("v1",)


def test_readers_read_replays_and_agents_nothing(runner, connect_as):
    file_query(runner, file_run(runner, planned=1), 1)
    for role in ("evalledger_revops", "evalledger_auditor"):
        conn = connect_as(role)
        assert conn.execute("SELECT count(*) FROM replay_query").fetchone()[0] == 1
        with pytest.raises(errors.InsufficientPrivilege):
            file_run(conn)
    with pytest.raises(errors.InsufficientPrivilege):
        connect_as("evalledger_agent").execute("SELECT count(*) FROM evalledger.replay_run")


@pytest.mark.parametrize("change, says", [
    ({"rbo_p": 0}, "rbo_p must be a number above 0 and at most 1"),
    ({"min_replayable": 0}, "min_replayable must be a whole number of queries, at least 1"),
    ({"min_replayable_share": 2}, "min_replayable_share must be a number from 0 to 1"),
    ({"pass_rule": {"mean_recall_at_least": 2, "every_recall_at_least": 0.5, "p95_latency_ratio_at_most": 1.25,
                    "adapter_failed_share_at_most": 0.1}}, "pass_rule.mean_recall_at_least must be a number from 0 to 1"),
])
def test_a_replay_rubric_is_checked_as_policy(admin, connect_as, change, says):
    definition = admin.execute("SELECT definition FROM rubric WHERE suite = 'replay'").fetchone()[0]
    with pytest.raises(errors.CheckViolation, match=says):
        connect_as("evalledger_owner").execute(
            "INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('replay', 'v9', %s)",
            (Jsonb({**definition, "version": "v9", **change}),))


def test_a_completion_outside_read_committed_is_refused(dsn, runner):
    run_id = file_run(runner, planned=1)
    file_query(runner, run_id, 1)
    with psycopg.connect(dsn) as conn:
        conn.execute("SET ROLE evalledger_runner")
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with pytest.raises(errors.InvalidTransactionState, match="completed under READ COMMITTED"):
            conn.execute("SELECT evalledger.replay_complete_v1(%s)", (run_id,))


def test_the_ledger_s_recompute_re_derives_a_replay_and_names_a_rewrite(runner, admin):
    """A superuser rewrites a failed replay to pass and a query's recall to 1, past the triggers: the
    recompute (`ledger verify --recompute`) re-derives both from the stored inputs and names them."""
    from tests.ledger_forge import triggers_lifted

    run_id = file_run(runner, planned=3)
    for n in range(3):
        file_query(runner, run_id, n + 1, captured=(["a", "b"], [1, 2], []), replayed=(["a"], [1], []))
    assert runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]["decision"] == "fail"
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    with triggers_lifted(admin, "replay_run", "replay_query"):
        admin.execute("UPDATE evalledger.replay_run SET decision = 'pass'")
        admin.execute("UPDATE evalledger.replay_query SET recall = 1 WHERE capture_id = 2")
    found = admin.execute("SELECT table_name, column_name, stored, recomputed "
                          "FROM evalledger.ledger_recompute_v3()").fetchall()
    named = {(table, column): (stored, recomputed) for table, column, stored, recomputed in found}
    assert named[("replay_query", "recall")] == ("1", "0.50000000000000000000")
    assert named[("replay_run", "decision")] == ('"pass"', '"fail"')
    # The decision is re-derived from the stored measures, the rewritten one included: its rationale
    # and summary differ too, and the rewritten recall is named above.
    assert set(named) == {("replay_query", "recall"), ("replay_run", "decision"), ("replay_run", "rationale"),
                          ("replay_run", "summary")}


def test_a_query_whose_status_was_rewritten_away_from_replayed_is_named_by_both_recomputes(runner, admin, connect_as):
    """The recompute compared a query's recall, Jaccard and rbo where its stored status said replayed,
    and nothing else: a failing query rewritten to not_replayable (its measures nulled, its inputs
    left saying an answer in the captured mode) and its run rewritten to the pass the rest decide,
    journal and blocks remade to match, verified clean, with and without --recompute. The status and
    every measure are now recomputed for every query of a completed run, by the database's recompute
    and by the package's own in pg_temp (`ledger verify --recompute`)."""
    import json

    from tests.ledger_forge import rejournal, reseal, rewrite, seal, verified

    run_id = file_run(runner, planned=4)
    for n in range(3):
        file_query(runner, run_id, n + 1, captured=(["a"], [1], ["wiki"]), replayed=(["a"], [1], ["wiki"]))
    file_query(runner, run_id, 4, captured=(["a"], [1], ["wiki"]), replayed=(["z"], [9], []))  # recall 0
    assert runner.execute("SELECT replay_complete_v1(%s)", (run_id,)).fetchone()[0]["decision"] == "fail"
    assert verified(admin.info.dsn, recompute=True).findings == []
    seal(admin)
    query_id = admin.execute("SELECT replay_query_id FROM evalledger.replay_query WHERE capture_id = 4").fetchone()[0]
    rewrite(admin, "replay_query", "status = 'not_replayable', recall = NULL, jaccard = NULL, rbo = NULL, "
            "sources_gained = NULL, sources_lost = NULL, latency_ratio = NULL", "replay_query_id = %s", (query_id,))
    decided = admin.execute("SELECT evalledger.replay_decision_v1(r) FROM evalledger.replay_run r "
                            "WHERE replay_run_id = %s", (run_id,)).fetchone()[0]
    assert decided["decision"] == "pass"
    rewrite(admin, "replay_run", "decision = %s, rationale = %s, summary = %s::jsonb", "replay_run_id = %s",
            (decided["decision"], decided["rationale"], json.dumps(decided), run_id))
    rejournal(admin, admin.info.dsn, "replay_query", f'{{"replay_query_id":{query_id}}}')
    rejournal(admin, admin.info.dsn, "replay_run", f'{{"replay_run_id":{run_id}}}')
    reseal(admin, admin.info.dsn, 1)

    assert verified(admin.info.dsn).findings == []  # the journal was remade to match: only the recompute can tell
    in_database = connect_as("evalledger_auditor").execute(
        "SELECT table_name, column_name, stored, recomputed FROM evalledger.ledger_recompute_v3() "
        "WHERE table_name = 'replay_query'").fetchall()
    zero, one = "0.00000000000000000000", "1.00000000000000000000"
    assert sorted(in_database) == [
        ("replay_query", "jaccard", "null", zero), ("replay_query", "latency_ratio", "null", one),
        ("replay_query", "rbo", "null", zero), ("replay_query", "recall", "null", zero),
        ("replay_query", "sources_gained", "null", "[]"), ("replay_query", "sources_lost", "null", '["wiki"]'),
        ("replay_query", "status", '"not_replayable"', '"replayed"')]
    report = verified(admin.info.dsn, recompute=True)
    assert [f.line() for f in report.findings if f.kind == "recomputed" and "status" in f.columns] == [
        f'recomputed: replay_query {{"replay_query_id":{query_id}}}: status is "not_replayable", but its inputs '
        'decide "replayed"']
    assert {f.table for f in report.findings} == {"replay_query"}


def test_the_drift_views_show_each_run_and_its_worst_queries_to_their_readers(runner, connect_as):
    run_id = file_run(runner, planned=3)
    file_query(runner, run_id, 1)
    file_query(runner, run_id, 2, captured=(["a", "b"], [1, 2], ["wiki"]), replayed=(["a"], [1], []))
    file_query(runner, run_id, 3, captured=(["a", "b"], [1, 2], []), replayed=(["x"], [9], []))
    runner.execute("SELECT replay_complete_v1(%s)", (run_id,))
    for role in ("evalledger_revops", "evalledger_auditor"):
        conn = connect_as(role)
        assert conn.execute("SELECT brain_version, decision, queries_asked, queries_replayed, mean_recall, min_recall, "
                            "queries_losing_a_source FROM replay_drift_v1").fetchall() == [
            ("v1", "fail", 3, 3, Decimal("0.5"), Decimal("0"), 1)]
        assert conn.execute("SELECT rank_in_run, capture_id, recall, sources_lost FROM replay_lost_most_v1 "
                            "WHERE rank_in_run <= 2").fetchall() == [(1, 3, Decimal("0"), []),
                                                                    (2, 2, Decimal("0.5"), ["wiki"])]
    with pytest.raises(errors.InsufficientPrivilege):
        runner.execute("SELECT * FROM replay_drift_v1")
