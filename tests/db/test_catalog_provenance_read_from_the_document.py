"""A drafted catalog's provenance (issue 40, item 2) on a real PostgreSQL: each question's listed
captures become brain_eval_catalog_provenance rows read from the loaded document and nothing
else, never changed by any role, journalled, and read by the runner, RevOps and auditors, never by
a reviewer."""

from __future__ import annotations

import copy
import json
from datetime import datetime

import pytest
from psycopg import errors

from evalledger.suites.brain_eval import catalog

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
CAPTURES = [[{"id": 41, "created_at": "2026-11-30T23:59:59.123456Z"}, {"id": 7, "created_at": "2026-11-02T08:00:00Z"}],
            [{"id": 42, "created_at": "2026-12-01T00:00:00.000001Z"}]]


def drafted() -> dict:
    """The demo catalog as a filled draft: its first two questions drawn from captured rows."""
    document = copy.deepcopy(DEMO)
    document["version"] = "cap-2026w49"
    for question, captures in zip(document["questions"], CAPTURES):
        question["provenance"] = {"captures": captures, "captured": len(captures) + 3, "tool_name": "query",
                                  "detail": None, "remote": True, "flagged_by_replay": False}
    return document


@pytest.fixture
def owner(connect_as):
    return connect_as("evalledger_owner")


@pytest.fixture
def loaded(owner):
    return catalog.load(owner, drafted(), "draft.json")


def stored(conn) -> list[tuple]:
    return conn.execute("SELECT question_id, position, capture_id, capture_created_at "
                        "FROM evalledger.brain_eval_catalog_provenance ORDER BY question_id, position").fetchall()


def test_loading_reads_each_listed_capture_from_the_document(admin, owner, loaded):
    def at(text: str) -> datetime:
        return datetime.fromisoformat(text)

    assert stored(admin) == [(q["id"], n, c["id"], at(c["created_at"]))
                             for q, captures in zip(drafted()["questions"], CAPTURES)
                             for n, c in enumerate(captures, start=1)]
    assert set(catalog.provenance(owner, "cap-2026w49")) == {"EVAL-Q01", "EVAL-Q02"}
    # A catalog written by hand has none.
    catalog.load(owner, DEMO, None)
    assert catalog.provenance(owner, DEMO["version"]) == {}
    assert len(stored(admin)) == 3


def test_no_capture_joins_a_loaded_question(admin, owner, loaded):
    # The owner holds no INSERT; the superuser meets the trigger: only the document's captures exist.
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table brain_eval_catalog_provenance"):
        owner.execute("INSERT INTO evalledger.brain_eval_catalog_provenance (catalog_version, question_id, position) "
                      "VALUES ('cap-2026w49', 'EVAL-Q02', 2)")
    with pytest.raises(errors.CheckViolation, match="lists no capture .* at position 2"):
        admin.execute("INSERT INTO evalledger.brain_eval_catalog_provenance (catalog_version, question_id, position) "
                      "VALUES ('cap-2026w49', 'EVAL-Q02', 2)")
    with pytest.raises(errors.CheckViolation, match="lists no capture"):
        admin.execute("INSERT INTO evalledger.brain_eval_catalog_provenance (catalog_version, question_id, position) "
                      "VALUES ('cap-2026w49', 'EVAL-Q03', 1)")
    # A capture given whole is still read from the document, so it is the one there, twice.
    with pytest.raises(errors.UniqueViolation):
        admin.execute("INSERT INTO evalledger.brain_eval_catalog_provenance (catalog_version, question_id, position, "
                      "capture_id, capture_created_at) VALUES ('cap-2026w49', 'EVAL-Q01', 1, 999, now())")
    assert len(stored(admin)) == 3


@pytest.mark.parametrize("role", ["evalledger_owner", "evalledger_runner", None])
def test_provenance_never_changes(admin, connect_as, loaded, role):
    conn = connect_as(role) if role else admin
    says = "permission denied for table brain_eval_catalog_provenance" if role else "append-only"
    for statement in ("UPDATE evalledger.brain_eval_catalog_provenance SET capture_id = 1",
                      "DELETE FROM evalledger.brain_eval_catalog_provenance",
                      "TRUNCATE evalledger.brain_eval_catalog_provenance"):
        with pytest.raises(errors.InsufficientPrivilege, match=says):
            conn.execute(statement)
    assert len(stored(admin)) == 3


def test_a_malformed_provenance_loads_nothing(admin, owner):
    document = drafted()
    document["questions"][1]["provenance"]["captures"] = []
    with pytest.raises(errors.CheckViolation, match="provenance.captures is a non-empty array"):
        catalog.load(owner, document, None)
    document["questions"][1]["provenance"]["captures"] = [{"id": "x", "created_at": "2026-12-01T00:00:00Z"}]
    with pytest.raises(errors.CheckViolation, match="lists no capture"):
        catalog.load(owner, document, None)
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_catalog").fetchone()[0] == 0
    assert stored(admin) == []


@pytest.mark.parametrize("role", ["evalledger_runner", "evalledger_revops", "evalledger_auditor"])
def test_readers_follow_a_question_to_its_captures(connect_as, loaded, role):
    assert len(stored(connect_as(role))) == 3


def test_a_reviewer_reads_no_provenance(connect_as, loaded):
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table brain_eval_catalog_provenance"):
        stored(connect_as("evalledger_reviewer"))


def test_the_journal_holds_every_provenance_row(admin, loaded):
    journalled = admin.execute("SELECT count(*) FROM evalledger.ledger_journal "
                               "WHERE table_name = 'brain_eval_catalog_provenance' AND operation = 'INSERT'").fetchone()[0]
    assert journalled == 3
