"""A gate decision ages with the run it decided about (issue 36, item 5; docs/database.md "Retention and
legal holds"). eval_gate_decision's tier clock is its own recording time (created_at, the database's);
past the purge horizon (7 years, in UTC on the statement's clock, whatever TimeZone the retention
login sets) it goes with the retention purge, unless a legal hold covers it (a range over its time, or
its takes-quality run's brain) or the takes-quality run it decided about is still kept (inside the
horizon, or held: retention_gate_pinned_v1). A kept decision never pins its run. Only the purge deletes
one, its guard (retention_due_v2) by the same rule; the plan counts them; verify finds the purge's
deletions allowed. Tried as the roles' own logins (docs/guards.md, section 10)."""

from __future__ import annotations

import re

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from tests.db.insider_logins import logins, set_zone, zone_that_moves  # noqa: F401 (fixture)
from tests.db.test_gate_decided_by_the_database import BASE, snapshot
from tests.db.test_retention import purge_as_retention, purge_committed, set_clock
from tests.db.test_takes_quality_db import DIMS, PANEL, start_run, verdict
from tests.ledger_forge import age_unsealed, seal, take_digest, verified

pytestmark = pytest.mark.db

UTC_NOW = "timezone('UTC', now())"
OLD = f"timezone('UTC', {UTC_NOW} - interval '8 years')"
OLDER = f"timezone('UTC', {UTC_NOW} - interval '8 years' - interval '2 days')"


def takes_quality_run(runner, rerun: int, target: str = "AGT-902") -> int:
    """A completed takes-quality run of target's takes, judged by the panel."""
    run = start_run(runner, rerun=rerun, target_id=target)
    for model, score in zip(PANEL, (8, 7, 9)):
        verdict(runner, run, model, {d: score for d in DIMS})
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run,))
    return run


def takes_quality_gate(runner, run: int) -> int:
    """The run gated against its own receipt (significant): a pass, stored by the database."""
    return runner.execute(
        "INSERT INTO evalledger.eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
        "SELECT 'takes-quality', 'significant', 'baseline.json', 'run ' || id, receipt_json, id "
        "FROM evalledger.eval_takes_quality_runs WHERE id = %s RETURNING gate_id", (run,)).fetchone()[0]


def work_quality_gate(runner) -> int:
    return runner.execute(
        "INSERT INTO evalledger.eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc) "
        "VALUES ('work-quality', 'default', 'a', 'b', %s, %s) RETURNING gate_id",
        (Jsonb(snapshot("a", BASE)), Jsonb(snapshot("b", BASE)))).fetchone()[0]


def age(admin, clock: str, run: int | None = None, gates=()) -> None:
    """Within admin's transaction: the run (its verdicts and stored uncertainty) and the gates recorded at clock."""
    if run is not None:
        set_clock(admin, "eval_takes_quality_runs", "created_at", clock, f"id = {int(run)}")
        set_clock(admin, "eval_takes_quality_judge_verdicts", "run_created_at", clock, f"run_id = {int(run)}")
        set_clock(admin, "eval_takes_quality_run_uncertainty", "run_created_at", clock, f"run_id = {int(run)}")
    if gates:
        set_clock(admin, "eval_gate_decision", "created_at", clock,
                  f"gate_id = ANY (ARRAY[{', '.join(str(int(g)) for g in gates)}]::bigint[])")


def aged(admin, clock: str, run: int | None = None, gates=()) -> None:
    with admin.transaction():
        age(admin, clock, run, gates)


def gates_left(admin) -> list[int]:
    return [g for (g,) in admin.execute("SELECT gate_id FROM evalledger.eval_gate_decision ORDER BY 1")]


def runs_left(admin) -> list[int]:
    return [r for (r,) in admin.execute("SELECT id FROM evalledger.eval_takes_quality_runs ORDER BY 1")]


def plan_of(conn) -> tuple:
    return next(r[1:] for r in conn.execute("SELECT * FROM evalledger.retention_plan_v2()")
                if r[0] == "eval_gate_decision")


def test_a_gate_decision_is_purged_past_seven_years_in_utc_whatever_the_logins_zone(admin, logins):
    """Work-quality gates (two documents, no run): one a day past the horizon goes; one inside 7 years by
    UTC, but past them as a crafted zone of the retention login would count them, stays; the plan, read in
    that zone, says the same."""
    runner, retention = logins("runner"), logins("retention")
    zone, hours = zone_that_moves(retention, "7 years", earlier=False)
    assert hours <= -20, "no zone pulls the purge horizon forward by a day today"
    past, inside, young = (work_quality_gate(runner) for _ in range(3))
    with admin.transaction():
        age(admin, f"timezone('UTC', {UTC_NOW} - interval '7 years' - interval '1 day')", gates=[past])
        age(admin, f"timezone('UTC', {UTC_NOW} - interval '7 years') + interval '{-hours / 2} hours'", gates=[inside])
    set_zone(retention, zone)
    inside_at = admin.execute("SELECT created_at FROM evalledger.eval_gate_decision WHERE gate_id = %s",
                              (inside,)).fetchone()[0]
    assert retention.execute("SELECT %s::timestamptz < now() - interval '7 years'", (inside_at,)).fetchone()[0]
    assert plan_of(retention)[:4] == (1, 1, 1, 0)  # young hot, inside cold, past due
    assert retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall() == [
        ("eval_gate_decision", 1, None, None)]
    assert gates_left(admin) == [inside, young]
    assert admin.execute("SELECT purged_by, table_name, row_count FROM evalledger.retention_purge_log").fetchall() == [
        (retention.info.user, "eval_gate_decision", 1)]


HOLDS = {
    "brain": ("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-902', 'matter') RETURNING hold_id",
              "brain AGT-902"),
    "range over its run": (f"INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES ({OLDER} - "
                           f"interval '1 hour', {OLDER} + interval '1 hour', 'matter') RETURNING hold_id", "range"),
    "range over the decision": (f"INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES ({OLD} - "
                                f"interval '1 hour', {OLD} + interval '1 hour', 'matter') RETURNING hold_id", "range"),
}


@pytest.mark.parametrize("scope", [None, *HOLDS, "run inside the horizon"])
def test_a_gate_decision_stays_while_a_hold_or_its_run_keeps_it(admin, logins, scope):
    """A takes-quality run recorded 8 years and 2 days ago and its gate 8 years ago. No hold: both go. A
    hold of the run's brain keeps both; a range over the run's time keeps the run, and the run keeps its
    decision; a range over the decision's time keeps the decision alone (it pins no run); a run inside the
    horizon keeps a decision past it. Released, the hold lets them go."""
    runner, owner, auditor = logins("runner"), logins("owner"), logins("auditor")
    run = takes_quality_run(runner, rerun=0)
    gate = takes_quality_gate(runner, run)
    other = work_quality_gate(runner)  # hot, unheld: stays throughout
    with admin.transaction():
        if scope != "run inside the horizon":
            age(admin, OLDER, run=run)
        age(admin, OLD, gates=[gate])
    hold = owner.execute(HOLDS[scope][0]).fetchone()[0] if scope in HOLDS else None

    hot, cold, due, held, held_by = plan_of(auditor)
    run_kept = scope in ("brain", "range over its run", "run inside the horizon")
    gate_kept = scope is not None
    assert (hot, cold, due, held) == (1, 0, 0 if gate_kept else 1, 1 if gate_kept else 0)
    if scope == "brain":
        assert held_by == f"hold {hold} (brain AGT-902): 1; 1 decided about kept runs"
    elif scope == "range over its run" or scope == "run inside the horizon":
        assert held_by == "1 decided about kept runs"
    elif scope == "range over the decision":
        assert re.fullmatch(rf"hold {hold} \(range .*\): 1", held_by), held_by
    else:
        assert held_by is None

    purged = purge_committed(admin)
    assert (("eval_gate_decision", 1, None, None) in purged) is not gate_kept
    assert gates_left(admin) == ([gate, other] if gate_kept else [other])
    assert runs_left(admin) == ([run] if run_kept else [])

    if hold is not None:
        owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold,))
        purge_committed(admin)
        assert gates_left(admin) == [other] and runs_left(admin) == []


def test_only_the_purge_deletes_a_gate_decision_and_only_one_it_finds_due(admin, logins):
    """The superuser is refused outside the purge; inside its marker the guard lets through an old
    work-quality decision and refuses a young one and an old one whose run a hold keeps."""
    runner, owner = logins("runner"), logins("owner")
    run = takes_quality_run(runner, rerun=0)
    pinned, old, young = takes_quality_gate(runner, run), work_quality_gate(runner), work_quality_gate(runner)
    with admin.transaction():
        age(admin, OLDER, run=run)
        age(admin, OLD, gates=[pinned, old])
    owner.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-902', 'matter')")
    with pytest.raises(errors.InsufficientPrivilege, match="eval_gate_decision is append-only: DELETE refused"):
        admin.execute("DELETE FROM evalledger.eval_gate_decision WHERE gate_id = %s", (old,))
    with admin.transaction():
        admin.execute("INSERT INTO evalledger.retention_purge_marker VALUES (txid_current())")
        for gate in (young, pinned):
            with pytest.raises(errors.InsufficientPrivilege, match="append-only: DELETE refused"):
                with admin.transaction():
                    admin.execute("DELETE FROM evalledger.eval_gate_decision WHERE gate_id = %s", (gate,))
        assert admin.execute("DELETE FROM evalledger.eval_gate_decision WHERE gate_id = %s", (old,)).rowcount == 1
        raise psycopg.Rollback()
    assert gates_left(admin) == [pinned, old, young]
    with pytest.raises(errors.InsufficientPrivilege, match="eval_gate_decision is append-only: UPDATE refused"):
        admin.execute("UPDATE evalledger.eval_gate_decision SET decision = 'fail' WHERE gate_id = %s", (old,))


def test_a_purge_of_gate_decisions_verifies_clean_and_recomputes_what_stays(admin, logins):
    """Old runs and gates (journalled as written 8 years ago) purged, young ones kept: verify against a digest
    taken before and one after finds every deletion allowed, and re-derives the gates that stay."""
    runner = logins("runner")
    young_run = takes_quality_run(runner, rerun=0)
    young = [takes_quality_gate(runner, young_run), work_quality_gate(runner)]
    seal(admin)
    old_run = takes_quality_run(runner, rerun=1)
    old = [takes_quality_gate(runner, old_run), work_quality_gate(runner)]
    aged(admin, OLDER, run=old_run)
    aged(admin, OLD, gates=old)
    age_unsealed(admin, "8 years 2 days")
    held = [("held.json", take_digest(admin))]
    purged = purge_committed(admin)
    assert ("eval_gate_decision", 2, None, None) in purged and ("eval_takes_quality_runs", 1, None, None) in purged
    assert gates_left(admin) == young
    seal(admin)
    report = verified(admin.info.dsn, held + [("after.json", take_digest(admin))], recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]
