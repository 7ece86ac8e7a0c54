"""A replay run left open past the hot tier is closed by the next run of its request (issue 40).

The runner reads replay runs of the hot tier only (24 months of the run's recording time). A run it
left open longer can no longer be read, so it can neither be resumed nor, while it stays open, let
another run of the same request start (one open run per request): the runner was stuck until the
run's purge. Now the admission of a new run of the same request closes it first, unfinished, and
says so in a notice; the database decides it inconclusive, its rationale counting what it recorded
of its plan, the rest counted as unrecorded in the summary, and the ledger's recompute agrees. A
run its caller can read is never closed so: it is resumed, and completed only whole. Every test
ages rows with the database's clock (set_replay_clock) and acts as the runner."""

from __future__ import annotations

import threading

import psycopg
import pytest
from psycopg import errors

from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_replay_ages_with_retention import age
from tests.db.test_replay_drift_computed_by_the_database import file_query
from tests.db.test_one_runner_per_run import wait_until_blocked
from tests.db.test_retention import AUDITOR, RUNNER

PAST_THE_HOT_TIER = "now() - interval '24 months' - interval '1 day'"


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def start(conn, planned: int = 3, file: str = "a") -> int:
    """A replay run of a file (the same request each time: brain v1, the same adapter, request {}),
    of the file whose SHA-256 is 64 times `file`."""
    return conn.execute(
        "INSERT INTO replay_run (brain_version, adapter_kind, adapter, source, request, file_sha256, planned) "
        "VALUES ('v1', 'python', 'brain:answer', 'file', '{}', repeat(%s, 64), %s) RETURNING replay_run_id",
        (file, planned)).fetchone()[0]


def notices(conn) -> list[str]:
    said: list[str] = []
    conn.add_notice_handler(lambda diag: said.append(diag.message_primary))
    return said


def run_row(auditor, run_id: int):
    return auditor.execute("SELECT completed_at IS NOT NULL, decision, rationale, summary FROM evalledger.replay_run "
                           "WHERE replay_run_id = %s", (run_id,)).fetchone()


def test_a_new_run_of_the_request_closes_the_one_left_open_past_the_hot_tier(admin, connect_as):
    runner = connect_as(RUNNER)
    stale = start(runner)
    file_query(runner, stale, 1)
    age(admin, stale, PAST_THE_HOT_TIER)
    assert runner.execute("SELECT count(*) FROM evalledger.replay_run").fetchone()[0] == 0  # cold: unread

    said = notices(runner)
    fresh = start(runner, file="b")
    assert fresh != stale
    # The notice names the run for an auditor, and nothing the runner may not read of it.
    assert said == [f"evalledger: replay run {stale} of this request was left open past the hot tier, where no runner "
                    "can resume it: the database closed it and decided it on what it recorded (an auditor reads the "
                    "decision)"]

    closed, decision, rationale, summary = run_row(connect_as(AUDITOR), stale)
    assert (closed, decision) == (True, "inconclusive")
    assert rationale == ("Inconclusive: closed unfinished, 1 of the 3 captured rows it planned recorded (1 replayed "
                         "in their captured mode): the run was left open past the hot tier, where no runner can "
                         "resume it, and a new run of the same request closed it.")
    assert (summary["unrecorded"], summary["asked"], summary["replayed"]) == (2, 1, 1)
    # The decision is the one the database computes again from the stored rows (the recompute's).
    assert admin.execute("SELECT evalledger.replay_decision_v1(r) = r.summary FROM evalledger.replay_run r "
                         "WHERE replay_run_id = %s", (stale,)).fetchone()[0]
    # The new run is the runner's: open, resumed and completed as any.
    for capture_id in (1, 2, 3):
        file_query(runner, fresh, capture_id)
    assert runner.execute("SELECT replay_complete_v1(%s) ->> 'decision'", (fresh,)).fetchone()[0] == "pass"


def test_a_run_the_caller_reads_is_not_closed_but_stays_the_open_one(admin, connect_as):
    """Inside the hot tier the open run is resumed, not closed: a second open run of the request is
    refused, as before, and nothing is completed."""
    runner = connect_as(RUNNER)
    open_run = start(runner)
    file_query(runner, open_run, 1)
    age(admin, open_run, "now() - interval '24 months' + interval '1 day'")
    said = notices(runner)
    with pytest.raises(errors.UniqueViolation, match="replay_run_one_open_idx"):
        start(runner, file="b")
    assert said == []
    assert run_row(connect_as(AUDITOR), open_run)[:2] == (False, None)


def test_a_reader_of_every_tier_resumes_a_cold_run_and_completes_it_only_whole(admin, connect_as):
    """A login that reads the cold tier is never stuck on it: it resumes the run (its new run of the
    request is refused as the open one's), and its completion of a run not whole is refused."""
    runner = connect_as(RUNNER)
    stale = start(runner)
    file_query(runner, stale, 1)
    age(admin, stale, PAST_THE_HOT_TIER)
    with pytest.raises(errors.UniqueViolation, match="replay_run_one_open_idx"):
        start(admin, file="b")
    with pytest.raises(errors.CheckViolation, match="is not whole: 1 of 3 captured rows replayed"):
        admin.execute("SELECT evalledger.replay_complete_v1(%s)", (stale,))
    assert run_row(connect_as(AUDITOR), stale)[:2] == (False, None)


def test_the_runner_cannot_complete_a_run_not_whole_itself(admin, connect_as):
    """Completing unfinished is the closing admission's alone: the runner's own completion of its
    hot run still needs every planned row, and one of a cold run finds no run it may complete."""
    runner = connect_as(RUNNER)
    hot = start(runner)
    file_query(runner, hot, 1)
    with pytest.raises(errors.CheckViolation, match="is not whole"):
        runner.execute("SELECT replay_complete_v1(%s)", (hot,))
    age(admin, hot, PAST_THE_HOT_TIER)
    assert runner.execute("SELECT replay_complete_v1(%s)", (hot,)).fetchone()[0] is None
    assert run_row(connect_as(AUDITOR), hot)[:2] == (False, None)


def test_a_stale_run_closed_in_a_rolled_back_start_stays_open(admin, connect_as):
    """The close is part of the new run's admission: a start rolled back leaves the stale run open
    (and the next start closes it)."""
    runner = connect_as(RUNNER)
    stale = start(runner)
    age(admin, stale, PAST_THE_HOT_TIER)
    with runner.transaction():
        start(runner, file="b")
        raise psycopg.Rollback()
    assert run_row(connect_as(AUDITOR), stale)[:2] == (False, None)
    start(runner, file="c")
    assert run_row(connect_as(AUDITOR), stale)[:2] == (True, "inconclusive")


def start_waiting(admin, runner) -> tuple[threading.Thread, list]:
    """runner starts a new run of the request (file c) in a thread, and this returns once that start
    waits on a lock: (the thread, what the start returned or raised, once the thread is joined)."""
    pid = runner.execute("SELECT pg_backend_pid()").fetchone()[0]
    outcome: list = []

    def start_it():
        try:
            with runner.transaction():
                outcome.append(start(runner, file="c"))
        except psycopg.Error as exc:
            outcome.append(exc)

    thread = threading.Thread(target=start_it, daemon=True)
    thread.start()
    wait_until_blocked(admin, pid)
    return thread, outcome


def test_two_new_runs_racing_close_the_stale_run_once_and_one_of_them_starts(admin, connect_as):
    """Two runners start a new run of the request at once, the second while the first's admission
    has closed the stale run and not committed: the second waits for it, and is then refused (the
    request has its open run). The stale run is closed once, by the first, with one notice and one
    decision; a rolled-back first leaves the close to the second (next test)."""
    first, second = connect_as(RUNNER), connect_as(RUNNER)
    stale = start(first)
    file_query(first, stale, 1)
    age(admin, stale, PAST_THE_HOT_TIER)
    told_second = notices(second)
    with first.transaction():
        told_first = notices(first)
        fresh = start(first, file="b")
        thread, outcome = start_waiting(admin, second)
    thread.join(30)

    assert len(outcome) == 1 and isinstance(outcome[0], errors.UniqueViolation), outcome
    assert len(told_first) == 1 and told_second == []
    auditor = connect_as(AUDITOR)
    assert run_row(auditor, stale)[:2] == (True, "inconclusive")
    assert [r[0] for r in auditor.execute("SELECT replay_run_id FROM evalledger.replay_run WHERE completed_at IS NULL")
            ] == [fresh]
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3() WHERE table_name = 'replay_run'"
                         ).fetchone()[0] == 0


def test_a_racing_start_whose_rival_rolls_back_closes_the_stale_run_itself(admin, connect_as):
    first, second = connect_as(RUNNER), connect_as(RUNNER)
    stale = start(first)
    age(admin, stale, PAST_THE_HOT_TIER)
    told_second = notices(second)
    with first.transaction():
        start(first, file="b")
        thread, outcome = start_waiting(admin, second)
        raise psycopg.Rollback()
    thread.join(30)

    assert len(outcome) == 1 and isinstance(outcome[0], int), outcome
    assert len(told_second) == 1 and told_second[0].startswith(f"evalledger: replay run {stale} of this request")
    auditor = connect_as(AUDITOR)
    assert run_row(auditor, stale)[:2] == (True, "inconclusive")
    assert [r[0] for r in auditor.execute("SELECT replay_run_id FROM evalledger.replay_run WHERE completed_at IS NULL")
            ] == [outcome[0]]


@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_a_start_that_would_close_a_stale_run_under_snapshot_isolation_is_refused_and_closes_nothing(
        admin, connect_as, isolation):
    """Closing decides the stale run, and a decision is taken under READ COMMITTED only (what the
    decision reads must be what is committed when it is stored): a start under a snapshot is refused
    for its isolation, in words about starting, and the stale run stays open for the next start. A
    session whose default is a snapshot (a role's setting, PGOPTIONS) is refused the same way; with
    no stale run to close, the start under a snapshot is admitted as before."""
    runner = connect_as(RUNNER)
    stale = start(runner)
    age(admin, stale, PAST_THE_HOT_TIER)
    says = (f"a run of this replay request was left open past the hot tier, and a new run closes it first, "
            f"a decision taken under READ COMMITTED, not {isolation.upper()}")
    with pytest.raises(errors.InvalidTransactionState, match=says) as refused:
        with runner.transaction():
            runner.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
            start(runner, file="b")
    assert refused.value.diag.message_hint == "start the run in a READ COMMITTED transaction, as the runner does"
    runner.execute(f"SET default_transaction_isolation = '{isolation}'")
    with pytest.raises(errors.InvalidTransactionState, match=says):
        start(runner, file="b")
    runner.execute("RESET default_transaction_isolation")
    assert run_row(connect_as(AUDITOR), stale)[:2] == (False, None)
    fresh = start(runner, file="c")
    assert run_row(connect_as(AUDITOR), stale)[:2] == (True, "inconclusive")
    with runner.transaction():
        runner.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
        other = runner.execute(  # another request (brain v2): nothing to close, admitted
            "INSERT INTO replay_run (brain_version, adapter_kind, adapter, source, request, file_sha256, planned) "
            "VALUES ('v2', 'python', 'brain:answer', 'file', '{}', repeat('d', 64), 2) RETURNING replay_run_id"
        ).fetchone()[0]
        assert other > fresh
        raise psycopg.Rollback()


def start_as_the_runner_does(conn, file: str = "a", planned: int = 3):
    """The runner's own start (store.start_run: ON CONFLICT DO NOTHING, no row when the run's identity
    is held), of the same request as start()."""
    from evalledger.suites.replay import store

    return conn.execute(store.QUERIES["start_run"], {
        "brain_version": "v1", "adapter_kind": "python", "adapter": "brain:answer", "source": "file",
        "request": "{}", "since_at": None, "until_at": None, "tool": None, "remote": None, "max_rows": None,
        "file_sha256": file * 64, "planned": planned}).fetchone()


def test_the_same_file_replayed_again_after_its_run_was_closed_unfinished_starts_anew(admin, connect_as):
    """A replay of the same file resolves to the same identity (brain version, adapter, scope, rubric)
    as the run it closes: a run closed unfinished gives that identity up, so the runner's own start
    (which does nothing on a held identity) starts the new run instead of closing the old one and
    starting nothing."""
    runner = connect_as(RUNNER)
    stale = start(runner)
    file_query(runner, stale, 1)
    age(admin, stale, PAST_THE_HOT_TIER)
    said = notices(runner)
    row = start_as_the_runner_does(runner)
    assert row is not None and row[0] != stale and row[-1] is None  # open
    assert len(said) == 1 and said[0].endswith("an auditor reads the decision)")
    auditor = connect_as(AUDITOR)
    assert auditor.execute("SELECT count(DISTINCT scope_sha8), count(*) FROM evalledger.replay_run").fetchone() == (1, 2)
    assert run_row(auditor, stale)[:2] == (True, "inconclusive")
    # The new run holds the identity: the same file once more finds it (nothing started), whole or not.
    assert start_as_the_runner_does(runner) is None
    for capture_id in (1, 2, 3):
        file_query(runner, row[0], capture_id)
    assert runner.execute("SELECT replay_complete_v1(%s) ->> 'decision'", (row[0],)).fetchone()[0] == "pass"
    assert start_as_the_runner_does(runner) is None
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3() WHERE table_name = 'replay_run'"
                         ).fetchone()[0] == 0


def test_a_stale_run_that_recorded_its_whole_plan_is_closed_and_decided_on_its_evidence(admin, connect_as):
    """A run left open past the hot tier after recording every row it planned is closed whole: decided
    on its rows as any completion, it keeps its identity, so the same file is not replayed again (the
    runner says the window's run cannot be read back here), and the notice names it."""
    runner = connect_as(RUNNER)
    stale = start(runner, planned=1)
    file_query(runner, stale, 1)
    age(admin, stale, PAST_THE_HOT_TIER)
    said = notices(runner)
    assert start_as_the_runner_does(runner, planned=1) is None
    assert len(said) == 1 and said[0].endswith("an auditor reads the decision)")
    closed, decision, rationale, summary = run_row(connect_as(AUDITOR), stale)
    assert (closed, decision, "unrecorded" in summary) == (True, "inconclusive", False)
    assert rationale.startswith("Inconclusive: 1 of 1 queries replayed in their captured mode, at least ")


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Etc/GMT+12", "Pacific/Chatham"])
def test_the_runners_time_zone_moves_no_run_across_the_hot_tiers_edge(admin, connect_as, zone):
    """Whether a run is past the hot tier is the database's clock in UTC, not the caller's zone (+14,
    -12, +12:45): a run a second inside the edge stays the open one whatever the runner's zone, one a
    second past it is closed."""
    runner = connect_as(RUNNER)
    runner.execute(f"SET TimeZone = '{zone}'")
    stale = start(runner)
    age(admin, stale, "evalledger.hot_tier_start_v1() + interval '1 second'")
    with pytest.raises(errors.UniqueViolation, match="replay_run_one_open_idx"):
        start(runner, file="b")
    assert run_row(connect_as(AUDITOR), stale)[:2] == (False, None)
    age(admin, stale, "evalledger.hot_tier_start_v1() - interval '1 second'")
    start(runner, file="b")
    assert run_row(connect_as(AUDITOR), stale)[:2] == (True, "inconclusive")
