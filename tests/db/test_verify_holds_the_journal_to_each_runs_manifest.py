"""verify holds the journal to every completed run's manifest, both ways (issue 35, item 3): a row of
a completed run that the manifest its completion journalled does not name (journalled after the run
completed, or written with the journal off) is named with its table and key; so is a row the manifest
names that has no journal entry before it, even where the blocks were rebuilt and no digest kept."""

from __future__ import annotations

import pytest

from evalledger.ledger import check, manifests, proof
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.ledger_forge import kinds, reseal, seal, set_triggers, take_digest, triggers_lifted, verified

# A review entry of a completed run's question, forged as the reviewer's trail would have written it.
FORGE_ENTRY = """INSERT INTO evalledger.brain_eval_review_entry (eval_run_id, question_id, field, value, reviewer_user_id,
    acting_role, entered_by, entered_at, suggestions_shown, run_created_at)
SELECT eval_run_id, question_id, field, '"9"'::jsonb, reviewer_user_id, acting_role, entered_by, entered_at,
       suggestions_shown, run_created_at
  FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s ORDER BY entry_id LIMIT 1
RETURNING entry_id"""


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def completed_run(connect_as, reviewer_id, admin) -> str:
    """A completed run of three questions (its manifest journalled by its completion), sealed."""
    run_id = str(record_run(connect_as("evalledger_runner"), reviewer_id, count=3).eval_run_id)
    seal(admin)
    return run_id


def test_the_manifest_tables_are_the_proofs_and_a_healthy_ledger_verifies(admin, dsn, completed_run):
    assert set(manifests.RUN_TABLES) == {t for t, _ in proof.RUN_TABLES} - {"legal_hold"}
    report = verified(dsn, [("held", take_digest(admin))])
    assert report.verified, [f.line() for f in report.findings]


@pytest.mark.parametrize("journal", [True, False], ids=["journal left on", "journal off"])
def test_a_row_added_to_a_completed_run_is_one_its_manifest_does_not_name(admin, dsn, completed_run, journal):
    held = take_digest(admin)
    set_triggers(admin, ["brain_eval_review_entry"], "D", but="%\\_90\\_journal%" if journal else "")
    try:
        forged = admin.execute(FORGE_ENTRY, (completed_run,)).fetchone()[0]
    finally:
        set_triggers(admin, ["brain_eval_review_entry"], "A")
    seal(admin)
    key = check.canonical_json({"entry_id": forged})
    report = verified(dsn, [("held", held)])
    assert ("manifest_unnamed", "brain_eval_review_entry", key, ()) in kinds(report)
    line = next(f.line() for f in report.findings if f.kind == "manifest_unnamed")
    assert line.startswith(f"manifest_unnamed: brain_eval_review_entry {key}: is a row of run {completed_run}, which ")
    assert ("after the run completed" in line) if journal else ("with no journal entry" in line)


def test_a_row_and_its_journal_entries_removed_and_the_blocks_rebuilt_are_named_by_the_manifest(admin, dsn,
                                                                                                completed_run):
    """No digest kept: the rows, the journal and every block agree with each other after the rewrite, but the run's
    manifest, which the superuser left as it was, still names the row."""
    entry_id, question = admin.execute("SELECT entry_id, question_id FROM evalledger.brain_eval_review_entry "
                                       "WHERE eval_run_id = %s ORDER BY entry_id DESC LIMIT 1",
                                       (completed_run,)).fetchone()
    key = check.canonical_json({"entry_id": entry_id})
    with triggers_lifted(admin, "brain_eval_review_entry"), triggers_lifted(admin, "ledger_journal"):
        admin.execute("SET session_replication_role = replica")
        admin.execute("DELETE FROM evalledger.brain_eval_review_entry WHERE entry_id = %s", (entry_id,))
        admin.execute("RESET session_replication_role")
        admin.execute("DELETE FROM evalledger.ledger_journal WHERE table_name = 'brain_eval_review_entry' "
                      "AND row_key = %s", (key,))
    reseal(admin, dsn, 1)
    report = verified(dsn)
    assert kinds(report) == [("manifest_unjournalled", "brain_eval_review_entry", key, ())], \
        [f.line() for f in report.findings]
    assert f"is named by run {completed_run}'s manifest" in report.findings[0].line()


def test_a_completed_run_whose_manifest_was_removed_is_named(admin, dsn, completed_run):
    run_key = check.canonical_json({"eval_run_id": completed_run})
    with triggers_lifted(admin, "ledger_journal"):
        admin.execute("DELETE FROM evalledger.ledger_journal WHERE operation = 'MANIFEST' AND row_key LIKE %s",
                      (f'%{run_key}%',))
    reseal(admin, dsn, 1)
    assert kinds(verified(dsn)) == [("manifest_missing", "brain_eval_log", run_key, ())]
