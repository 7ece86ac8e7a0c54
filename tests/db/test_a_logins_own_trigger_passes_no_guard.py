"""Any login may create a temporary table with a trigger of its own, so the depth of triggers says
nothing about who writes or reads. No guard of the ledger takes a depth as authority: a runner's
trigger adds no verdict to an imported snapshot (work_quality_verdict_admit_v2: only the transaction
that recorded the snapshot, and only the file's own entries), and neither a runner nor RevOps reads a
cold takes-quality run's receipt through one (takes_quality_receipt_v3 and _v4 ask caller_reads_v1 at
every depth; the completion's decision builds its receipt through takes_quality_receipt_built_v4,
granted to no role)."""

from __future__ import annotations

import json

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from tests.db.test_gate_decisions_age_with_the_runs_they_decided import aged, takes_quality_run
from tests.db.test_takes_quality_db import runner  # noqa: F401 (fixture)
from tests.db.test_work_quality_db import GO_HISTORY, go_document, import_doc, reply, verdict

COLD = "now() - interval '30 months'"
IMPORTED_ONLY = "come from its file only"


def verdicts_of(admin, snapshot_id: int) -> list[tuple]:
    return admin.execute("SELECT model, response_json FROM evalledger.eval_work_quality_judge_verdicts "
                         "WHERE snapshot_id = %s ORDER BY verdict_id", (snapshot_id,)).fetchall()


def imported(runner) -> tuple[int, dict]:
    doc = go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0])
    (snapshot_id,) = import_doc(runner, doc)
    return snapshot_id, doc


def through_a_temporary_trigger(conn, body: str, argument) -> None:
    """Run body (PL/pgSQL statements over NEW.arg) inside the login's own trigger on a temporary table."""
    conn.execute("CREATE TEMP TABLE probe (arg bigint, out jsonb)")
    conn.execute(f"CREATE FUNCTION pg_temp.probe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body} "
                 "RETURN NEW; END $$")
    conn.execute("CREATE TRIGGER probe BEFORE INSERT ON pg_temp.probe FOR EACH ROW EXECUTE FUNCTION pg_temp.probe()")
    conn.execute("INSERT INTO pg_temp.probe (arg) VALUES (%s)", (argument,))


def test_a_runners_trigger_adds_no_verdict_to_an_imported_snapshot(runner, admin):
    snapshot_id, _ = imported(runner)
    before = verdicts_of(admin, snapshot_id)
    assert len(before) == 2
    forged = json.dumps({"scores": reply(0.01), "narrative": "forged", "confidence": 0.9}).replace("'", "''")
    with pytest.raises(errors.InsufficientPrivilege, match=IMPORTED_ONLY):
        through_a_temporary_trigger(runner, "INSERT INTO evalledger.eval_work_quality_judge_verdicts "
                                            "(snapshot_id, model, recorded, response_json) "
                                            f"VALUES (NEW.arg, 'openai/forged-judge', false, '{forged}'::jsonb);",
                                    snapshot_id)
    assert verdicts_of(admin, snapshot_id) == before
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0


@pytest.mark.parametrize(("isolation", "zone"), [("read committed", "Pacific/Kiritimati"),
                                                  ("repeatable read", "Etc/GMT+12"),
                                                  ("serializable", "Pacific/Chatham")])
def test_even_the_files_own_entry_is_taken_only_in_the_transaction_that_imported_it(runner, admin, isolation,
                                                                                   zone):
    """After its import, not even an entry the file holds is taken again (here under another repeat,
    which the once-constraint alone would let in), whatever the session's isolation and zone: the
    rule compares the snapshot's stored time with the transaction's own, both the database's."""
    snapshot_id, doc = imported(runner)
    entry = doc["aggregate"]["verdicts"][0]
    with pytest.raises(errors.InsufficientPrivilege, match=IMPORTED_ONLY):
        with runner.transaction():
            runner.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
            runner.execute(f"SET LOCAL TimeZone = '{zone}'")
            verdict(runner, snapshot_id, entry["model"], response=entry, repeat_no=2)
    assert len(verdicts_of(admin, snapshot_id)) == 2


def test_a_time_supplied_with_the_import_is_refused(runner, admin):
    """The snapshot's recording time is the database's alone (its admission stamps now(), and the
    runner holds no INSERT on created_at): no one can date an import into another transaction's
    now(), and nothing is stored."""
    doc = go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0])
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table eval_work_quality_snapshots"):
        runner.execute("INSERT INTO eval_work_quality_snapshots (origin, snapshot_json, source_file, models, created_at) "
                       "VALUES ('import', %s, 'f.json', '{}', '2020-01-01T00:00:00Z')", (Jsonb(doc),))
    assert admin.execute("SELECT count(*) FROM evalledger.eval_work_quality_snapshots").fetchone()[0] == 0


def test_another_session_adds_nothing_to_an_import_not_yet_committed(runner, admin, connect_as):
    """Two sessions racing: a second runner session's verdict on an import still open in the first
    finds no snapshot it may add to (the row is not yet visible to it), and the import commits
    exactly its file's verdicts."""
    doc = go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0])
    entry = doc["aggregate"]["verdicts"][0]
    other = connect_as("evalledger_runner")
    with runner.transaction():
        (snapshot_id,) = import_doc(runner, doc)
        with pytest.raises(errors.InsufficientPrivilege, match=IMPORTED_ONLY):
            verdict(other, snapshot_id, entry["model"], response=entry, repeat_no=2)
    assert [(m, r) for m, r in verdicts_of(admin, snapshot_id)] == [
        (v["model"], v) for v in doc["aggregate"]["verdicts"]]


def test_an_import_takes_only_its_files_entries_in_its_own_transaction(runner, admin):
    """Within the importing transaction too, a verdict the file does not hold, one of its entries
    under another model, or one of its entries a second time (as another repeat) is refused: the
    import's verdict rows are exactly the file's, each once."""
    doc = go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0])
    entry = doc["aggregate"]["verdicts"][0]
    with runner.transaction():
        (snapshot_id,) = import_doc(runner, doc)
        for model, response, repeat in ((entry["model"], reply(0.01), 1), ("openai/gpt-4o", entry, 1),
                                        (entry["model"], entry, 5)):
            with pytest.raises(errors.InsufficientPrivilege, match=IMPORTED_ONLY):
                with runner.transaction():
                    verdict(runner, snapshot_id, model, response=response, repeat_no=repeat)
    assert [(m, r) for m, r in verdicts_of(admin, snapshot_id)] == [
        (v["model"], v) for v in doc["aggregate"]["verdicts"]]


@pytest.mark.parametrize("role", ["evalledger_runner", "evalledger_revops"])
@pytest.mark.parametrize("receipt", ["takes_quality_receipt_v3", "takes_quality_receipt_v4"])
def test_no_cold_receipt_is_read_through_a_logins_own_trigger(admin, connect_as, runner, role, receipt):
    run = takes_quality_run(runner, rerun=0)
    aged(admin, COLD, run)
    conn = connect_as(role)
    conn.execute("SET TimeZone = 'Pacific/Kiritimati'")  # the tier's edge is the database's, in UTC
    with pytest.raises(errors.NoDataFound, match=f"no takes-quality run {run}"):  # asked directly
        conn.execute(f"SELECT evalledger.{receipt}(%s)", (run,))
    with pytest.raises(errors.NoDataFound, match=f"no takes-quality run {run}"):  # nor from a trigger of its own
        through_a_temporary_trigger(conn, f"NEW.out := evalledger.{receipt}(NEW.arg);", run)
    # The auditor reads it, as before.
    auditor = connect_as("evalledger_auditor")
    assert auditor.execute(f"SELECT evalledger.{receipt}(%s) ->> 'run_id'", (run,)).fetchone()[0] == str(run)


@pytest.mark.parametrize("role", ["evalledger_runner", "evalledger_revops", "evalledger_auditor"])
def test_the_receipts_builders_are_granted_to_no_role(connect_as, runner, role):
    run = takes_quality_run(runner, rerun=0)
    conn = connect_as(role)
    for builder in ("takes_quality_receipt_built_v3", "takes_quality_receipt_built_v4"):
        with pytest.raises(errors.InsufficientPrivilege, match=f"permission denied for function {builder}"):
            with conn.transaction():
                conn.execute(f"SELECT evalledger.{builder}(%s)", (run,))


def test_the_runners_hot_receipt_reads_as_before(runner):
    run = takes_quality_run(runner, rerun=0)
    receipt = runner.execute("SELECT evalledger.takes_quality_receipt_v4(%s)", (run,)).fetchone()[0]
    assert receipt["run_id"] == run and receipt == runner.execute(
        "SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE id = %s", (run,)).fetchone()[0]
