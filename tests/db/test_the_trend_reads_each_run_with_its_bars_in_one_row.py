"""The trend panel reads each run and its error bars in one row (issue 36; migration 0164): each
completed brain-eval run's trend row (brain_eval_trend) is stored in its completion's transaction,
derived by the database from the run's row and its stored uncertainty (brain_eval_trend_of_v1),
never supplied or altered by any role; brain_trend_rows_v2 gives exactly brain_trend_rows_v1's rows
(an open run past its deadline as abandoned, decided fail, included) with each run's bars as
brain_eval_intervals_v1 gives them, for every reader under its own row-level security and with every
filter; and the ledger's recompute names a rewritten trend row where it was rewritten, and a rewritten
run or interval where that was, not in the copy that still holds the truth. Tried as the real logins
(docs/guards.md, section 43)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from psycopg import errors
from psycopg.rows import dict_row

from evalledger.suites.brain_eval import store as brain_eval
from tests.builders import BRAIN_PROMPTS, load_catalog, record_run, register_prompt
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE
from tests.db.insider_logins import LOGINS, in_thread, logins, refused, wait_until_waiting  # noqa: F401 (fixture)
from tests.db.test_one_open_run_and_no_abandoned_run import recorded_ago, start
from tests.db.test_trend_error_bars_are_each_runs_uncertainty import varied
from tests.ledger_forge import kinds, triggers_lifted, verified

pytestmark = pytest.mark.db

NOW = datetime.now(timezone.utc)
AGGREGATES = ("citation_rate", "hallucination_rate", "staleness_recognition_rate", "diagnosis_accuracy_mean",
              "lever_mapping_correctness", "confidence_calibration_in_band", "narrative_coherence_mean")
BARS = ("ci95_lo", "ci95_hi")
TREND = "SELECT * FROM evalledger.{}(%s::text, %s::date, %s::date, %s::text, %s) ORDER BY brain_under_test, recency_rank"
DERIVED = ("SELECT to_jsonb(t) - 'created_at' FROM evalledger.brain_eval_log l "
           "LEFT JOIN evalledger.brain_eval_run_uncertainty u ON u.eval_run_id = l.eval_run_id "
           "CROSS JOIN LATERAL evalledger.brain_eval_trend_of_v1(l, u.uncertainty) t WHERE l.eval_run_id = %s")


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def trend_row(admin, run) -> dict | None:
    found = admin.execute("SELECT to_jsonb(t) - 'created_at' FROM evalledger.brain_eval_trend t "
                          "WHERE eval_run_id = %s", (run,)).fetchone()
    return found[0] if found else None


def rows_of(conn, function: str, filters: tuple) -> list[dict]:
    return conn.cursor(row_factory=dict_row).execute(TREND.format(function), filters).fetchall()


def intervals(conn) -> dict:
    """brain_eval_intervals_v1 as conn's reader: {(run, aggregate): (lo, hi)}."""
    return {(run, aggregate): (lo, hi) for run, aggregate, lo, hi in conn.execute(
        "SELECT eval_run_id, aggregate, ci95_lo, ci95_hi FROM evalledger.brain_eval_intervals_v1")}


@pytest.fixture
def ledger(admin, connect_as, reviewers):
    """Completed runs of two triggers over five months for both brains, another reviewer's run, a
    cancelled run, an open run past its deadline (abandoned before anything closes it) and an open run
    within it: {name: run id}."""
    mine, theirs = reviewers[REVIEWER_ROLE], reviewers[OTHER_REVIEWER_ROLE]
    load_catalog(admin)  # the standard catalog, which an open run's start asks
    runner = connect_as("evalledger_runner")
    runs = {}
    for k in range(1, 6):
        for brain in ("AGT-901", "AGT-902"):
            for trigger in ("quarterly", "on_demand"):
                runs[f"{brain} {trigger} {k}"] = record_run(
                    runner, mine, brain=brain, bend=varied(k + (trigger == "on_demand")), run_trigger=trigger,
                    started_at=NOW - timedelta(days=40 * (6 - k) + (trigger == "on_demand"))).eval_run_id
    runs["theirs"] = record_run(runner, theirs, brain="AGT-902", bend=varied(9),
                                started_at=NOW - timedelta(days=3)).eval_run_id
    runs["cancelled"] = record_run(runner, mine, brain="AGT-901", count=2, complete=False, review=False)
    brain_eval.cancel_run(runner, runs["cancelled"], "operator error")
    runs["abandoned"] = start(runner, mine)
    recorded_ago(admin, runs["abandoned"], "15 days")
    runs["open"] = record_run(runner, mine, brain="AGT-902", bend=varied(7), complete=False)
    return runs


@pytest.mark.parametrize("reader", ["evalledger_auditor", "evalledger_revops", REVIEWER_ROLE])
def test_the_trend_is_v1s_rows_each_with_its_runs_intervals(connect_as, ledger, reader):
    conn = connect_as(reader)
    months = (NOW - timedelta(days=130)).date().replace(day=1), (NOW - timedelta(days=50)).date().replace(day=1)
    filters = [(None, None, None, None, 8), ("AGT-902", None, None, None, 8), (None, None, None, "on_demand", 8),
               (None, *months, None, 3), ("AGT-901", None, None, None, 2), (None, None, None, "prompt_change", 8)]
    wanted = intervals(conn)
    seen = set()
    for f in filters:
        before, after = rows_of(conn, "brain_trend_rows_v1", f), rows_of(conn, "brain_trend_rows_v2", f)
        assert [{k: v for k, v in r.items() if k not in BARS} for r in after] == before, f
        for r in after:
            seen.add(r["eval_run_id"])
            if r["completed_at"] is None:  # abandoned: decided fail, no scores, no bars
                assert (r["decision"], r["ci95_lo"], r["ci95_hi"]) == ("fail", None, None)
                continue
            bars = [(lo, hi) for lo, hi in zip(r["ci95_lo"], r["ci95_hi"])]
            assert bars == [wanted.get((r["eval_run_id"], a), (None, None)) for a in AGGREGATES], (f, r["eval_run_id"])
    # Every kind of run was shown to the readers that may read it, and no other.
    assert ledger["abandoned"] in seen and ledger["open"] not in seen
    assert (ledger["theirs"] in seen) == (reader != REVIEWER_ROLE)
    # The reader's ten completed quarterly runs each drew a citation bar around its value.
    drawn = [r for r in rows_of(conn, "brain_trend_rows_v2", filters[0]) if r["ci95_lo"] and r["ci95_lo"][0] is not None]
    assert len(drawn) >= 10 and all(r["ci95_lo"][0] <= r["citation_rate"] <= r["ci95_hi"][0] for r in drawn)
    # A trigger that is no trigger is refused as v1 refuses it, not read as none.
    with pytest.raises(errors.InvalidTextRepresentation):
        conn.execute(TREND.format("brain_trend_rows_v2"), (None, None, None, "weekly", 8))
    conn.rollback()


def test_a_runs_trend_row_is_stored_at_its_completion_from_its_row_and_its_uncertainty(admin, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    run = record_run(runner, reviewer_id, bend=varied(4), complete=False)
    assert trend_row(admin, run) is None  # nothing before completion
    with runner.transaction():  # stored in the completion's own transaction
        brain_eval.complete_run(runner, run)
        assert runner.execute("SELECT count(*) FROM evalledger.brain_eval_trend WHERE eval_run_id = %s",
                              (run,)).fetchone()[0] == 1
    row = trend_row(admin, run)
    assert row == admin.execute(DERIVED, (run,)).fetchone()[0]
    # Its columns are the run's, its bars the run's stored intervals, to the last bit.
    log, uncertainty = admin.execute(
        "SELECT to_jsonb(l), u.uncertainty FROM evalledger.brain_eval_log l "
        "JOIN evalledger.brain_eval_run_uncertainty u USING (eval_run_id) WHERE l.eval_run_id = %s", (run,)).fetchone()
    for column in ("brain_under_test", "run_trigger", "started_at", "completed_at", "model_id", "system_prompt_hash",
                   "question_catalog_version", "decision", "reviewer_user_id"):
        assert row[column] == log[column], column
    assert row["run_created_at"] == log["created_at"]
    for aggregate in AGGREGATES:
        assert row[aggregate] == log["aggregated_scores"].get(aggregate), aggregate
        ci95 = (uncertainty.get(aggregate) or {}).get("ci95") or [None, None]
        assert [row.get(f"{aggregate}_ci95_lo"), row.get(f"{aggregate}_ci95_hi")] == ci95, aggregate
    assert row["decision"] is not None and row["citation_rate_ci95_lo"] < row["citation_rate"] < row["citation_rate_ci95_hi"]
    # A run closed unfinished has one too: decided fail, with what its few rows measure.
    cancelled = record_run(runner, reviewer_id, count=2, complete=False, review=False)
    brain_eval.cancel_run(runner, cancelled, "operator error")
    assert trend_row(admin, cancelled)["decision"] == "fail"
    assert trend_row(admin, cancelled) == admin.execute(DERIVED, (cancelled,)).fetchone()[0]


@pytest.mark.parametrize("role", ["runner", "reviewer", "revops", "auditor", "owner", "agent", "retention"])
def test_no_role_supplies_or_alters_a_trend_row(admin, connect_as, logins, reviewer_id, role):
    run = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied(1)).eval_run_id
    other = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied(2), complete=False)
    before = trend_row(admin, run)
    conn = logins(role)
    for statement, params in (
            ("INSERT INTO evalledger.brain_eval_trend (eval_run_id, brain_under_test, run_trigger, started_at, "
             "completed_at, model_id, system_prompt_hash, question_catalog_version, decision, citation_rate, "
             "reviewer_user_id, run_created_at) SELECT eval_run_id, brain_under_test, run_trigger::text, started_at, "
             "now(), model_id, system_prompt_hash, question_catalog_version, 'pass', 1, reviewer_user_id, created_at "
             "FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (other,)),
            ("UPDATE evalledger.brain_eval_trend SET decision = 'pass', citation_rate_ci95_lo = 0.99 "
             "WHERE eval_run_id = %s", (run,)),
            ("DELETE FROM evalledger.brain_eval_trend WHERE eval_run_id = %s", (run,))):
        with refused(admin, errors.InsufficientPrivilege,
                     r"permission denied for (table brain_eval_trend|table brain_eval_log|schema evalledger)"):
            conn.execute(statement, params)
    assert trend_row(admin, run) == before


def test_the_superuser_neither_rewrites_nor_deletes_one(admin, connect_as, reviewer_id):
    run = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied(1)).eval_run_id
    for statement, says in (
            ("UPDATE evalledger.brain_eval_trend SET decision = 'pass' WHERE eval_run_id = %s",
             r"evalledger: brain_eval_trend is append-only: UPDATE refused"),
            ("DELETE FROM evalledger.brain_eval_trend WHERE eval_run_id = %s",
             r"evalledger: brain_eval_trend is append-only: DELETE refused")):
        with refused(admin, errors.InsufficientPrivilege, says):
            admin.execute(statement, (run,))
    with refused(admin, errors.UniqueViolation, r"duplicate key value violates unique constraint .*",
                 "brain_eval_trend_pkey"):
        admin.execute("INSERT INTO evalledger.brain_eval_trend SELECT * FROM evalledger.brain_eval_trend "
                      "WHERE eval_run_id = %s", (run,))
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = 'brain_eval_trend' "
                         "AND strpos(row_key, %s) > 0", (str(run),)).fetchone()[0] == 1


def recomputed(admin) -> list[tuple]:
    return admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall()


def test_the_recompute_names_a_rewritten_trend_row_and_no_copy_of_a_rewritten_run(admin, dsn, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    run = record_run(runner, reviewer_id, bend=varied(1)).eval_run_id
    record_run(runner, reviewer_id, brain="AGT-902", bend=varied(2))
    key = json.dumps({"eval_run_id": str(run)}, separators=(",", ":"))
    assert recomputed(admin) == []
    original = admin.execute("SELECT decision::text, citation_rate_ci95_lo FROM evalledger.brain_eval_trend "
                             "WHERE eval_run_id = %s", (run,)).fetchone()
    flipped = "pass" if original[0] != "pass" else "fail"
    # The superuser rewrites the trend row past the guards (the journal lifted too): another decision, a
    # narrower bar. The recompute names those two columns of that row, and nothing else.
    with admin.transaction(), triggers_lifted(admin, "brain_eval_trend"):
        admin.execute("UPDATE evalledger.brain_eval_trend SET decision = %s, citation_rate_ci95_lo = 0.875 "
                      "WHERE eval_run_id = %s", (flipped, run))
    assert recomputed(admin) == [("brain_eval_trend", key, "citation_rate_ci95_lo"),
                                 ("brain_eval_trend", key, "decision")]
    report = verified(dsn, recompute=True)  # the package's code, not the database's
    assert ("recomputed", "brain_eval_trend", key, ("decision",)) in kinds(report)
    with admin.transaction(), triggers_lifted(admin, "brain_eval_trend"):
        admin.execute("UPDATE evalledger.brain_eval_trend SET decision = %s, citation_rate_ci95_lo = %s "
                      "WHERE eval_run_id = %s", (*original, run))
    assert recomputed(admin) == []
    # The run's own decision rewritten, and its stored interval: each is named where it was rewritten,
    # and the trend row, which still holds what the run's inputs decide, is not.
    with admin.transaction(), triggers_lifted(admin, "brain_eval_log", "brain_eval_run_uncertainty"):
        admin.execute("UPDATE evalledger.brain_eval_log SET decision = %s WHERE eval_run_id = %s", (flipped, run))
        admin.execute("UPDATE evalledger.brain_eval_run_uncertainty SET uncertainty = jsonb_set(uncertainty, "
                      "'{citation_rate,ci95}', '[0.8, 0.81]') WHERE eval_run_id = %s", (run,))
    assert recomputed(admin) == [("brain_eval_log", key, "decision"), ("brain_eval_run_uncertainty", key, "uncertainty")]


def test_the_recompute_names_a_missing_trend_row_or_uncertainty_and_leaves_what_is_copied_to_the_journal(
        admin, dsn, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    run = record_run(runner, reviewer_id, bend=varied(1)).eval_run_id
    bare = record_run(runner, reviewer_id, brain="AGT-902", bend=varied(2), complete=False)
    key = json.dumps({"eval_run_id": str(run)}, separators=(",", ":"))
    bare_key = json.dumps({"eval_run_id": str(bare)}, separators=(",", ":"))
    # A run completed with the trend's trigger lifted (the superuser): the panel would leave it out, and
    # the recompute names the row that is not there, by its run's key.
    with admin.transaction(), triggers_lifted(admin, "brain_eval_log", only="brain_eval_log_45_trend"):
        admin.execute("SELECT evalledger.brain_eval_complete_v1(%s, NULL)", (bare,))
    assert trend_row(admin, bare) is None
    assert recomputed(admin) == [("brain_eval_trend", bare_key, "eval_run_id")]
    found = [f for f in verified(dsn, recompute=True).findings if f.kind == "recomputed"]
    assert [(f.table, f.key, f.line()) for f in found] == [
        ("brain_eval_trend", bare_key,
         f"recomputed: brain_eval_trend {bare_key}: no row, where its completed run's inputs derive one")]
    # A run's stored uncertainty deleted past the guards: named there, and its trend row, whose bars the run's
    # rows still derive, is not.
    with admin.transaction(), triggers_lifted(admin, "brain_eval_run_uncertainty"):
        admin.execute("DELETE FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s", (run,))
    assert recomputed(admin) == [("brain_eval_run_uncertainty", key, "eval_run_id"),
                                 ("brain_eval_trend", bare_key, "eval_run_id")]
    # What the trend row copies as it is (the run's model, its start) rewritten in the run: the journal names the
    # run, and the recompute, which derives none of it, names neither the run nor its trend row.
    with admin.transaction(), triggers_lifted(admin, "brain_eval_log"):
        admin.execute("UPDATE evalledger.brain_eval_log SET started_at = started_at - interval '1 hour', "
                      "model_id = 'forged-model' WHERE eval_run_id = %s", (run,))
    assert recomputed(admin) == [("brain_eval_run_uncertainty", key, "eval_run_id"),
                                 ("brain_eval_trend", bare_key, "eval_run_id")]
    assert ("row_changed", "brain_eval_log", key, ("model_id", "started_at")) in kinds(verified(dsn))


class _Undo(Exception):
    pass


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read", "serializable"])
def test_a_completion_as_the_runner_stores_its_trend_row_whatever_its_session_says(admin, logins, reviewer_id,
                                                                                  isolation):
    """The runner, in a zone 14 hours ahead: a completion time it supplies is refused; under REPEATABLE READ
    or SERIALIZABLE its completion is refused (no trend row); a completion rolled back leaves no row; the
    committed one leaves exactly the row the database derives, its times the database's."""
    runner = logins("runner")
    runner.autocommit = True
    runner.execute("SELECT set_config('TimeZone', 'Pacific/Kiritimati', false)")
    run = record_run(runner, reviewer_id, bend=varied(3), complete=False, registry=admin, review_conn=admin)
    runner.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {isolation}")
    with pytest.raises(errors.InsufficientPrivilege):
        runner.execute("UPDATE evalledger.brain_eval_log SET completed_at = '2020-01-01' WHERE eval_run_id = %s", (run,))
    if isolation != "read committed":  # an older snapshot completes nothing, and writes no trend row
        with pytest.raises(errors.InvalidTransactionState, match="a run is completed under READ COMMITTED"):
            with runner.transaction():
                brain_eval.complete_run(runner, run)
        assert trend_row(admin, run) is None
        runner.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED")
    with pytest.raises(_Undo):
        with runner.transaction():
            brain_eval.complete_run(runner, run)
            assert runner.execute("SELECT count(*) FROM evalledger.brain_eval_trend WHERE eval_run_id = %s",
                                  (run,)).fetchone()[0] == 1
            raise _Undo  # the completion undone: its trend row with it
    assert trend_row(admin, run) is None
    with runner.transaction():
        brain_eval.complete_run(runner, run)
    row = trend_row(admin, run)
    assert row == admin.execute(DERIVED, (run,)).fetchone()[0]
    stored = admin.execute("SELECT to_jsonb(l) FROM evalledger.brain_eval_log l WHERE eval_run_id = %s",
                           (run,)).fetchone()[0]
    assert (row["completed_at"], row["run_created_at"]) == (stored["completed_at"], stored["created_at"])


def test_two_sessions_racing_a_completion_leave_one_trend_row(admin, logins, reviewer_id):
    first, second = logins("runner"), logins("runner")
    first.autocommit = second.autocommit = True
    run = record_run(first, reviewer_id, bend=varied(5), complete=False, registry=admin, review_conn=admin)
    with first.transaction():
        brain_eval.complete_run(first, run)  # open: holds the run's row
        thread, outcome = in_thread(lambda: brain_eval.complete_run(second, run))
        wait_until_waiting(admin, LOGINS["runner"][0])
    thread.join(30)
    assert "error" in outcome, outcome  # the second finds it complete, and completes nothing
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_trend WHERE eval_run_id = %s",
                         (run,)).fetchone()[0] == 1
    assert trend_row(admin, run) == admin.execute(DERIVED, (run,)).fetchone()[0]
