"""Issue 37, item 2, for takes-quality and work-quality (migration 0114; brain-eval's is
test_one_open_run_and_no_abandoned_run.py): one open run of a subject at a time (a takes-quality
brain, judges' prompt, sample scope and judges: eval_takes_quality_runs_one_open_idx; a work-quality
target and judges: eval_work_quality_snapshots_one_open_idx, each with a trigger naming the open
run); an open run past its rubric's deadline (open_run_days, 14 by default, from its created_at)
reads abandoned to every reader at once (takes_quality_run_state_v1, work_quality_run_state_v1, the
takes-quality trend, the work-quality history) and is closed so by the next run of its subject or
its own completion: a takes-quality run decided fail, a work-quality snapshot a regression, each
with a message that begins "Abandoned:"; the runner cancels with a reason (eval_run_cancel_v1). How a
run was closed is eval_run_closure, which the recompute re-derives from. Tried as the real logins
(docs/guards.md, "No abandoned run without a trace")."""

from __future__ import annotations

import pytest
import psycopg.types.json
from psycopg import errors

from tests.db.insider_logins import (LOGINS, crafted_zones, in_thread, logins, refused,  # noqa: F401 (fixture)
                                     set_zone, wait_until_waiting)
from tests.db.test_takes_quality_db import DIMS as TQ_DIMS, PANEL as TQ_PANEL, start_run as tq_start, verdict as tq_verdict
from tests.db.test_work_quality_db import PANEL as WQ_PANEL, reply as wq_reply, start as wq_start, verdict as wq_verdict
from tests.unguarded import clocks_unguarded

SUITES = ["takes-quality", "work-quality"]
TABLE = {"takes-quality": ("eval_takes_quality_runs", "id", "takes_quality_run_id"),
         "work-quality": ("eval_work_quality_snapshots", "snapshot_id", "snapshot_id")}
INDEX = {"takes-quality": "eval_takes_quality_runs_one_open_idx",
         "work-quality": "eval_work_quality_snapshots_one_open_idx"}
ONE_OPEN = {"takes-quality": (r"evalledger: takes-quality run {run} of no target, this prompt, sample scope and live "
                              r"judges, is open \(recorded \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): complete or cancel "
                              r"it first"),
            "work-quality": (r"evalledger: work-quality run r1 of a \(live judges\), snapshot {run}, is open "
                             r"\(recorded \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): complete or cancel it first")}
READERS = ("runner", "revops", "auditor")


def start(conn, suite, n=1, subject="a", **overrides) -> int:
    """Run n of a subject: another seed (and so sample) of the same scope, or another --run-id of the
    same target."""
    if suite == "takes-quality":
        return tq_start(conn, corpus_sha8=f"{n:08x}", seed=n, slug_prefix=subject, **overrides)
    return wq_start(conn, run_id=f"r{n}", name=subject, **overrides)


def answer_all(conn, suite, run) -> None:
    """Every panel judge answers, so the run is whole."""
    if suite == "takes-quality":
        for model in TQ_PANEL:
            tq_verdict(conn, run, model, {d: 8 for d in TQ_DIMS})
    else:
        for model in WQ_PANEL:
            wq_verdict(conn, run, model, wq_reply(0.7))


def complete(conn, suite, run):
    fn = "takes_quality_complete_v1" if suite == "takes-quality" else "work_quality_complete_v1"
    return conn.execute(f"SELECT evalledger.{fn}(%s)", (run,)).fetchone()[0]


def cancel(conn, suite, run, reason):
    return conn.execute("SELECT evalledger.eval_run_cancel_v1(%s, %s, %s)", (suite, run, reason)).fetchone()[0]


def recorded_ago(admin, suite, run, interval: str) -> None:
    """The run recorded `interval` before now, counted in UTC (the superuser, past the guards)."""
    table, key, _ = TABLE[suite]
    with admin.transaction(), clocks_unguarded(admin, [table]):
        admin.execute(f"UPDATE evalledger.{table} SET created_at = now() - %s::interval WHERE {key} = %s",
                      (interval, run))


def state(conn, suite, run) -> tuple:
    """(state, failed, message): failed is verdict fail or a regression (None while open)."""
    if suite == "takes-quality":
        row = conn.execute("SELECT state, verdict, verdict_message FROM evalledger.takes_quality_run_state_v1 "
                           "WHERE run_id = %s", (run,)).fetchone()
        return row and (row[0], None if row[1] is None else row[1] == "fail", row[2])
    return conn.execute("SELECT state, regression, note FROM evalledger.work_quality_run_state_v1 "
                        "WHERE snapshot_id = %s", (run,)).fetchone()


def stored(admin, suite, run) -> tuple:
    """(completed, failed, message) as stored."""
    if suite == "takes-quality":
        row = admin.execute("SELECT completed_at IS NOT NULL, verdict, receipt_json ->> 'verdictMessage', "
                            "receipt_json ->> 'closure' FROM evalledger.eval_takes_quality_runs WHERE id = %s",
                            (run,)).fetchone()
        return row[0], row[1] == "fail", row[2]
    row = admin.execute("SELECT completed_at IS NOT NULL, regression, note FROM evalledger.work_quality_run_state_v1 "
                        "WHERE snapshot_id = %s", (run,)).fetchone()
    return tuple(row)


def closure(admin, suite, run):
    column = TABLE[suite][2]
    return admin.execute(f"SELECT closure, reason, closed_by FROM evalledger.eval_run_closure WHERE {column} = %s",
                         (run,)).fetchone()


def open_count(admin, suite) -> int:
    return admin.execute(f"SELECT count(*) FROM evalledger.{TABLE[suite][0]} WHERE completed_at IS NULL").fetchone()[0]


# -- one open run of a subject --------------------------------------------------------------------------
@pytest.mark.parametrize("suite", SUITES)
def test_a_second_open_run_of_a_subject_is_refused_naming_the_first(admin, logins, suite):
    """The attempt: start, look, start another (another seed, another --run-id) while the first is open
    (admitted on b6420f8)."""
    runner = logins("runner")
    first = start(runner, suite, 1)
    with refused(admin, errors.UniqueViolation, ONE_OPEN[suite].format(run=first), INDEX[suite]):
        start(runner, suite, 2)
    # Another subject is another run; recorded replies never occupy a live run's place.
    start(runner, suite, 2, subject="b")
    start(runner, suite, 3, judges="recorded")


def test_the_same_takes_quality_eval_again_is_resumed_not_refused(admin, logins):
    """The runner's INSERT ... ON CONFLICT DO NOTHING of the very eval that is open adds nothing, as
    before: the runner then carries on with the open run."""
    runner = logins("runner")
    start(runner, "takes-quality", 1)
    again = runner.execute(
        "INSERT INTO eval_takes_quality_runs (corpus_source, slug_prefix, sample_limit, seed, n_takes, corpus_sha8, "
        "prompt_sha8, models) VALUES ('db', 'a', 10, 1, 3, '00000001', 'bbbbbbbb', %s) "
        "ON CONFLICT ON CONSTRAINT eval_takes_quality_runs_identity_key DO NOTHING", (TQ_PANEL,))
    assert again.rowcount == 0 and open_count(admin, "takes-quality") == 1


def test_the_same_work_quality_run_id_again_is_resumed_not_refused(admin, logins):
    runner = logins("runner")
    start(runner, "work-quality", 1)
    again = runner.execute(
        "INSERT INTO eval_work_quality_snapshots (origin, kind, name, run_id, models, evidence_sha256) "
        "VALUES ('run', 'bot', 'a', 'r1', %s, %s) "
        "ON CONFLICT ON CONSTRAINT eval_work_quality_snapshots_identity_key DO NOTHING", (WQ_PANEL, "a" * 64))
    assert again.rowcount == 0 and open_count(admin, "work-quality") == 1


@pytest.mark.parametrize("suite", SUITES)
def test_a_cancelled_run_frees_its_place_and_reads_abandoned(admin, logins, suite):
    runner = logins("runner")
    first = start(runner, suite, 1)
    assert cancel(runner, suite, first, "wrong sample loaded")
    message = f"Abandoned: cancelled by {LOGINS['runner'][0]}: wrong sample loaded"
    assert stored(admin, suite, first) == (True, True, message)
    assert closure(admin, suite, first) == ("cancelled", "wrong sample loaded", LOGINS["runner"][0])
    for role in READERS:
        assert state(logins(role), suite, first) == ("cancelled", True, message), role
    # Its place is free; a second cancel of the same run does nothing.
    start(runner, suite, 2)
    assert not cancel(runner, suite, first, "again")


@pytest.mark.parametrize("suite", SUITES)
def test_a_cancellation_names_the_login_that_acted_through_set_role(admin, logins, suite):
    """Every command of the CLI acts through SET ROLE: a cancellation made so named the role
    ("cancelled by evalledger_runner"), and who cancelled was lost. It names the login."""
    runner = logins("runner")
    runner.execute("SET ROLE evalledger_runner")
    first = start(runner, suite, 1)
    assert cancel(runner, suite, first, "wrong sample loaded")
    assert closure(admin, suite, first) == ("cancelled", "wrong sample loaded", LOGINS["runner"][0])
    assert stored(admin, suite, first)[2] == f"Abandoned: cancelled by {LOGINS['runner'][0]}: wrong sample loaded"


@pytest.mark.parametrize("suite", SUITES)
def test_a_run_cancelled_after_some_answers_keeps_what_they_cost(admin, logins, suite):
    runner = logins("runner")
    run = start(runner, suite, 1)
    if suite == "takes-quality":
        tq_verdict(runner, run, TQ_PANEL[0], {d: 9 for d in TQ_DIMS})
    else:
        wq_verdict(runner, run, WQ_PANEL[0], wq_reply(0.9))
    assert cancel(runner, suite, run, "operator error")
    assert stored(admin, suite, run)[1] is True
    # The recompute re-derives what the closure decided: nothing differs.
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("reason", [None, "", "   "])
def test_a_cancellation_needs_a_reason(admin, logins, suite, reason):
    runner = logins("runner")
    run = start(runner, suite)
    with refused(admin, errors.CheckViolation, "evalledger: a cancellation needs a reason", "eval_run_closure_reason_given"):
        cancel(runner, suite, run, reason)


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("role", ["owner", "reviewer", "revops", "auditor", "agent"])
def test_only_the_runner_cancels_and_no_role_writes_a_closure(admin, logins, suite, role):
    run = start(logins("runner"), suite)
    conn = logins(role)
    with refused(admin, errors.InsufficientPrivilege, r"permission denied for (function eval_run_cancel_v1|schema evalledger)"):
        cancel(conn, suite, run, "x")
    column = TABLE[suite][2]
    for statement in (f"INSERT INTO evalledger.eval_run_closure (suite, {column}, closure, reason, closed_by, "
                      f"run_created_at) VALUES ('{suite}', %s, 'cancelled', 'x', 'x', now())",
                      f"SELECT evalledger.eval_run_close_v1('{suite}', %s, 'x')"):
        with refused(admin, errors.InsufficientPrivilege,
                     r"permission denied for ((table|function) eval_run_\w+|schema evalledger)"):
            conn.execute(statement, (run,))
    assert open_count(admin, suite) == 1


def test_a_run_of_the_other_suite_or_of_no_suite_is_not_cancelled(admin, logins):
    runner = logins("runner")
    run = start(runner, "takes-quality")
    assert not cancel(runner, "work-quality", run + 1000, "no such snapshot")
    assert not cancel(runner, "brain-eval", run, "not this function's")
    assert open_count(admin, "takes-quality") == 1


@pytest.mark.parametrize("suite", SUITES)
def test_a_closure_is_append_only_and_journalled(admin, logins, suite):
    runner = logins("runner")
    run = start(runner, suite)
    cancel(runner, suite, run, "operator error")
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = 'eval_run_closure'"
                         ).fetchone()[0] == 1
    for statement in ("UPDATE evalledger.eval_run_closure SET reason = 'other'", "DELETE FROM evalledger.eval_run_closure"):
        with pytest.raises(errors.InsufficientPrivilege):
            admin.execute(statement)


# -- racing sessions -------------------------------------------------------------------------------------
@pytest.mark.parametrize("suite", SUITES)
def test_two_sessions_starting_runs_of_a_subject_at_once_start_one(admin, logins, suite):
    """Read committed: neither sees the other's uncommitted run, so the trigger admits both: the
    index makes the second wait for the first and fail once it commits."""
    first, second = logins("runner", autocommit=False), logins("runner", autocommit=False)
    start(first, suite, 1)
    thread, outcome = in_thread(lambda: start(second, suite, 2))
    wait_until_waiting(admin, LOGINS["runner"][0])
    first.commit()
    thread.join(20)
    assert isinstance(outcome.get("error"), errors.UniqueViolation), outcome
    assert outcome["error"].diag.constraint_name == INDEX[suite]
    second.rollback()
    assert open_count(admin, suite) == 1


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_two_sessions_racing_under_an_older_snapshot_start_one(admin, logins, suite, isolation):
    """A session whose snapshot predates the other's commit does not see the first run, so the
    trigger admits it: the index refuses it (unique_violation, or serialization_failure where the
    server reports the conflict so under serializable)."""
    first = logins("runner", autocommit=False)
    start(first, suite, 1)
    second = logins("runner", autocommit=False,
                    options=f"-c default_transaction_isolation={isolation.replace(' ', chr(92) + ' ')}")
    second.execute("SELECT 1")
    first.commit()
    with pytest.raises((errors.UniqueViolation, errors.SerializationFailure)):
        start(second, suite, 2)
    second.rollback()
    assert open_count(admin, suite) == 1


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("isolation", ["read committed", "repeatable read", "serializable"])
def test_two_sessions_of_one_isolation_level_racing_start_one(admin, logins, suite, isolation):
    """Both sessions begin under the same level, each starts a run of the subject before either
    commits: the second waits on the index and is refused once the first commits."""
    options = f"-c default_transaction_isolation={isolation.replace(' ', chr(92) + ' ')}"
    first = logins("runner", autocommit=False, options=options)
    second = logins("runner", autocommit=False, options=options)
    second.execute("SELECT 1")
    start(first, suite, 1)
    thread, outcome = in_thread(lambda: start(second, suite, 2))
    wait_until_waiting(admin, LOGINS["runner"][0])
    first.commit()
    thread.join(20)
    assert isinstance(outcome.get("error"), (errors.UniqueViolation, errors.SerializationFailure)), outcome
    second.rollback()
    assert open_count(admin, suite) == 1


# -- the deadline ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("suite", SUITES)
def test_an_open_run_past_its_deadline_reads_abandoned_to_every_reader(admin, logins, suite):
    runner = logins("runner")
    run = start(runner, suite)
    recorded_ago(admin, suite, run, "14 days - 1 minute")
    assert state(runner, suite, run)[:2] == ("open", None)
    recorded_ago(admin, suite, run, "14 days")
    for role in READERS:
        found = state(logins(role), suite, run)
        assert found[:2] == ("abandoned", True), role
        assert found[2].startswith("Abandoned: open past its deadline, "), found
    assert stored(admin, suite, run)[0] is False  # nothing closed it yet: a reader sees it abandoned anyway


@pytest.mark.parametrize("suite", SUITES)
def test_the_next_run_of_the_subject_closes_a_run_past_its_deadline(admin, logins, suite):
    """The attempt: a run left open for ever, never decided. The next run of its subject (which the
    open run would otherwise refuse) closes it as abandoned."""
    runner = logins("runner")
    old = start(runner, suite, 1)
    recorded_ago(admin, suite, old, "15 days")
    new = start(runner, suite, 2)
    done, failed, message = stored(admin, suite, old)
    assert (done, failed) == (True, True)
    assert message.startswith("Abandoned: open past its deadline, ") and message.endswith("closed by the database")
    assert closure(admin, suite, old)[0] == "abandoned"
    assert state(runner, suite, old)[0] == "abandoned" and state(runner, suite, new)[0] == "open"
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0


@pytest.mark.parametrize("suite", SUITES)
def test_a_whole_run_completed_past_its_deadline_is_abandoned_not_decided(admin, logins, suite):
    """The neighbour: leave a run open, and complete it weeks later only if it looks good."""
    runner = logins("runner")
    run = start(runner, suite)
    answer_all(runner, suite, run)
    recorded_ago(admin, suite, run, "20 days")
    complete(runner, suite, run)
    assert stored(admin, suite, run)[1] is True
    assert stored(admin, suite, run)[2].startswith("Abandoned: open past its deadline")
    assert closure(admin, suite, run)[0] == "abandoned"


@pytest.mark.parametrize("suite", SUITES)
def test_the_deadline_is_counted_in_utc_whatever_the_session_time_zone(admin, logins, suite):
    """14 days counted as 14 x 24 hours: in no crafted TimeZone (a daylight-saving shift of days) is
    a run 1 minute short of it abandoned, or one 1 minute past it open."""
    runner = logins("runner")
    run = start(runner, suite)
    for ago, expected in (("14 days - 1 minute", "open"), ("14 days 1 minute", "abandoned")):
        recorded_ago(admin, suite, run, ago)
        for zone in crafted_zones(runner)[::37]:
            set_zone(runner, zone)
            assert state(runner, suite, run)[0] == expected, (zone, ago)
    runner.execute("RESET TimeZone")


@pytest.mark.parametrize("suite", SUITES)
def test_the_rubric_sets_the_deadline(admin, logins, suite):
    """A rubric's open_run_days is every suite's deadline; one that is not a number of days is refused."""
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE suite = %s "
                               "ORDER BY rubric_id DESC LIMIT 1", (suite,)).fetchone()[0]
    rubric = admin.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES (%s, 'v-deadline-2', %s) "
                           "RETURNING rubric_id", (suite, psycopg.types.json.Jsonb({**definition, "open_run_days": 2}))
                           ).fetchone()[0]
    assert admin.execute("SELECT evalledger.brain_eval_run_deadline_v1(now(), %s) - now()", (rubric,)
                         ).fetchone()[0].total_seconds() == 2 * 86400
    with pytest.raises(errors.CheckViolation, match="open_run_days must be a number of days from 1 to 366"):
        logins("owner").execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES (%s, 'v-bad', %s)",
                                (suite, psycopg.types.json.Jsonb({**definition, "open_run_days": 0})))


# -- every pass rate -------------------------------------------------------------------------------------
def test_an_abandoned_takes_quality_run_is_a_fail_in_the_trend(admin, logins):
    """The takes-quality trend (the dashboards' panel and the BI view) counts an open run past its
    deadline, and a cancelled one, as fail: none is left out of a pass rate."""
    runner = logins("runner")
    passed = start(runner, "takes-quality", 1, subject="p")
    answer_all(runner, "takes-quality", passed)
    complete(runner, "takes-quality", passed)
    overdue = start(runner, "takes-quality", 2, subject="o")
    recorded_ago(admin, "takes-quality", overdue, "15 days")
    cancelled = start(runner, "takes-quality", 3, subject="c")
    cancel(runner, "takes-quality", cancelled, "superseded")
    start(runner, "takes-quality", 4, subject="n")  # open within its deadline: not in a pass rate yet
    for role in ("revops", "auditor"):
        verdicts = dict(logins(role).execute("SELECT run_id, verdict FROM evalledger.takes_quality_trend_v1").fetchall())
        assert verdicts == {passed: "pass", overdue: "fail", cancelled: "fail"}, role


def test_an_abandoned_snapshot_is_a_regression_in_the_history_and_no_baseline(admin, logins):
    runner = logins("runner")
    first = start(runner, "work-quality", 1)
    answer_all(runner, "work-quality", first)
    complete(runner, "work-quality", first)
    second = start(runner, "work-quality", 2)
    cancel(runner, "work-quality", second, "superseded")
    overdue = start(runner, "work-quality", 3)
    recorded_ago(admin, "work-quality", overdue, "15 days")
    for role in ("revops", "auditor"):
        rows = {r[0]: r[1:] for r in logins(role).execute(
            "SELECT run_id, regression, regression_reasons FROM evalledger.work_quality_history_v1").fetchall()}
        assert rows["r1"] == (False, [])
        assert rows["r2"][0] is True and rows["r2"][1][0].startswith("Abandoned: cancelled by ")
        assert rows["r3"][0] is True and rows["r3"][1][0].startswith("Abandoned: open past its deadline")
    # The next run closes the overdue one and compares with the last snapshot its judges completed.
    fourth = start(runner, "work-quality", 4)
    assert admin.execute("SELECT prev_run_id FROM evalledger.eval_work_quality_snapshots WHERE snapshot_id = %s",
                         (fourth,)).fetchone() == ("r1",)
    assert closure(admin, "work-quality", overdue)[0] == "abandoned"


STORED = {"takes-quality": ("eval_takes_quality_run_uncertainty", "run_id"),
          "work-quality": ("eval_work_quality_snapshot_uncertainty", "snapshot_id")}


@pytest.mark.parametrize("suite", SUITES)
def test_a_closure_ages_and_is_purged_with_its_run(admin, logins, suite):
    """A cancelled run past the purge horizon goes whole: its closure first (it references the run)."""
    from tests.db.test_retention import purge_as_retention, set_clock
    runner = logins("runner")
    run = start(runner, suite)
    cancel(runner, suite, run, "superseded")
    table, key, column = TABLE[suite]
    with admin.transaction():
        set_clock(admin, table, "created_at", "now() - interval '8 years'", f"{key} = {int(run)}")
        set_clock(admin, "eval_run_closure", "run_created_at", "now() - interval '8 years'", f"{column} = {int(run)}")
        # The uncertainty its completion stored (migration 0153): nothing measured, a row all the same.
        stored, stored_key = STORED[suite]
        set_clock(admin, stored, "run_created_at", "now() - interval '8 years'", f"{stored_key} = {int(run)}")
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert {t for t, n, *_ in purged} >= {"eval_run_closure", table, stored}
    assert admin.execute("SELECT count(*) FROM evalledger.eval_run_closure").fetchone()[0] == 0


# -- a ledger that already holds several open runs of a subject ------------------------------------------
@pytest.fixture
def empty_dsn(admin, dsn):
    """A database with nothing in it, on the same server."""
    from psycopg.conninfo import make_conninfo
    name = "evalledger_migrate_0114"
    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {name}")
    yield make_conninfo(dsn, dbname=name)
    admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_the_migration_closes_all_but_the_latest_open_run_of_a_subject(empty_dsn, tmp_path):
    """Before 0114 a ledger could hold several open runs of one subject: the migration closes all but
    the latest recorded as abandoned, naming the one that stays open, before the index is built."""
    import psycopg as pg

    from evalledger.core.migrate import expand_includes, migrate
    from evalledger.core.paths import migrations_dir

    for path in sorted(migrations_dir().glob("0*.sql")):
        if path.name < "0114":
            (tmp_path / path.name).write_text(expand_includes(path))
    migrate(empty_dsn, tmp_path)
    with pg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("SET ROLE evalledger_runner")
        conn.execute("SET search_path = evalledger, public")
        tq_runs = [start(conn, "takes-quality", n) for n in (1, 2, 3)]
        wq_runs = [start(conn, "work-quality", n) for n in (1, 2)]
    (tmp_path / "0114.abandoned-quality-runs.sql").write_text(
        (migrations_dir() / "0114.abandoned-quality-runs.sql").read_text())
    assert migrate(empty_dsn, tmp_path) == ["0114.abandoned-quality-runs"]
    with pg.connect(empty_dsn, autocommit=True) as conn:
        closed = conn.execute("SELECT coalesce(takes_quality_run_id, snapshot_id), closure, reason "
                              "FROM evalledger.eval_run_closure ORDER BY closure_id").fetchall()
        assert [(k, c) for k, c, _ in closed] == [(tq_runs[0], "abandoned"), (tq_runs[1], "abandoned"),
                                                   (wq_runs[0], "abandoned")]
        assert closed[0][2].startswith(f"run {tq_runs[2]} of the same brain, prompt, sample scope and judges was open")
        assert closed[2][2].startswith("run r2 of the same target and judges was open")
        assert conn.execute("SELECT id, verdict FROM evalledger.eval_takes_quality_runs ORDER BY id").fetchall() == [
            (tq_runs[0], "fail"), (tq_runs[1], "fail"), (tq_runs[2], None)]
        assert conn.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0


@pytest.mark.parametrize("suite", SUITES)
def test_a_run_left_open_past_the_hot_tier_is_closed_by_the_next_run_too(admin, logins, suite):
    """A subject nobody ran for years: its open run, older than the runner may read (the 24-month hot
    tier), is closed by the next run all the same (the receipt of the run a trigger decides asks no
    reader's tier), and nothing of it is shown to the runner."""
    runner = logins("runner")
    old = start(runner, suite, 1)
    if suite == "takes-quality":
        tq_verdict(runner, old, TQ_PANEL[0], {d: 9 for d in TQ_DIMS})
    recorded_ago(admin, suite, old, "800 days")
    start(runner, suite, 2)
    assert closure(admin, suite, old)[0] == "abandoned" and stored(admin, suite, old)[:2] == (True, True)
    assert state(runner, suite, old) is None and state(logins("auditor"), suite, old)[0] == "abandoned"
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0


def test_an_abandoned_brain_eval_run_is_a_fail_in_the_trends_and_every_unfinished_run_is_on_the_dashboard(
        admin, logins, reviewer_id):
    """The brain-eval trends (the dashboards' per-brain trend, seed 002's quarterly view) count an open
    run past its deadline as fail before anything closes it, and the dashboards' failed panel lists
    every run not completed whole of the suites the login reads, with its state."""
    from evalledger.bi import panels
    from evalledger.bi.filters import Filters
    from tests.db.test_one_open_run_and_no_abandoned_run import recorded_ago as brain_recorded_ago, start as brain_start
    from tests.builders import BRAIN_PROMPTS, register_prompt

    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    runner = logins("runner")
    brain_run = brain_start(runner, reviewer_id)
    brain_recorded_ago(admin, brain_run, "15 days")
    tq_open = start(runner, "takes-quality", 1)
    wq_cancelled = start(runner, "work-quality", 1)
    cancel(runner, "work-quality", wq_cancelled, "superseded")
    for role in ("revops", "auditor"):
        conn = logins(role)
        trend = conn.execute("SELECT decision FROM evalledger.brain_quarterly_trend_v1 WHERE eval_run_id = %s",
                             (brain_run,)).fetchall()
        assert trend == [("fail",)], role
        rows = conn.execute("SELECT decision FROM evalledger.brain_trend_rows_v2(NULL, NULL, NULL, NULL, 8) "
                            "WHERE eval_run_id = %s", (brain_run,)).fetchall()
        assert rows == [("fail",)], role
        with conn.transaction():
            board = panels.load(conn, Filters())
        failed = next(p for p in board.panels if p.key == "failed")
        unfinished = {(r["suite"], r["run"], r["state"]) for r in failed.tables[1].rows}
        assert unfinished == {("brain-eval", str(brain_run), "abandoned"), ("takes-quality", str(tq_open), "open"),
                              ("work-quality", str(wq_cancelled), "cancelled")}, role


def test_regress_against_an_abandoned_or_cancelled_takes_quality_run_is_a_regression(admin, logins):
    """takes-quality's gate (takes_quality_regression_v1, as the runner that made the run): a run that
    is open past its deadline, or cancelled, regresses whatever its scores."""
    runner = logins("runner")
    passed = start(runner, "takes-quality", 1, subject="p")
    answer_all(runner, "takes-quality", passed)
    baseline = complete(runner, "takes-quality", passed)
    overdue = start(runner, "takes-quality", 2, subject="o")
    answer_all(runner, "takes-quality", overdue)
    recorded_ago(admin, "takes-quality", overdue, "15 days")
    cancelled = start(runner, "takes-quality", 3, subject="c")
    answer_all(runner, "takes-quality", cancelled)
    cancel(runner, "takes-quality", cancelled, "superseded")
    regress = "SELECT evalledger.takes_quality_regression_v1(%s, %s)"
    assert runner.execute(regress, (psycopg.types.json.Jsonb(baseline), passed)).fetchone()[0]["outcome"] == "ok"
    for run, kind in ((overdue, "abandoned"), (cancelled, "cancelled")):
        compared = runner.execute(regress, (psycopg.types.json.Jsonb(baseline), run)).fetchone()[0]
        assert compared["outcome"] == "regression" and compared["regressed"] == [], kind
        assert compared["warnings"][0].startswith(f"run {run} is {kind}: Abandoned: "), compared["warnings"]
