"""verify takes what it checks from the package, never from the database it checks (issue 35, item 2): the
journalled tables, the exempt list and each table's key come from the current SQL files, and the catalog is
checked against them. A catalog edit (`UPDATE pg_proc SET prosrc`, no DDL) of a function the database once told
verify with changes nothing verify checks."""

from __future__ import annotations

import pytest

from evalledger.ledger import package
from tests.ledger_forge import kinds, seal, take_digest, triggers_lifted, verified


def catalog_edit(admin, function: str, body: str) -> None:
    """The function's body replaced in pg_proc, as a superuser does it without DDL (no event trigger sees it)."""
    admin.execute("UPDATE pg_catalog.pg_proc SET prosrc = %s WHERE oid = %s::regprocedure", (body, function))


def test_the_package_knows_the_ledgers_tables_keys_and_exempt_list(admin):
    """On a ledger just built, the package's tables and keys are the catalog's, and its exempt list the database's."""
    catalog = {t: frozenset(k) for t, k in admin.execute(
        "SELECT c.relname, ARRAY(SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY (i.indkey) WHERE i.indrelid = c.oid AND i.indisprimary) FROM pg_class c "
        "WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition")}
    assert package.tables() == catalog
    exempt = {t for t in catalog if admin.execute("SELECT evalledger.journal_exempt_v1(%s)", (t,)).fetchone()[0]}
    assert exempt == package.EXEMPT
    assert package.journalled() == [r[0] for r in admin.execute("SELECT table_name FROM evalledger.journal_tables_v1()")]


@pytest.mark.parametrize("edited", ["journal_exempt_v1", "journal_tables_v1"])
def test_a_catalog_edit_of_the_table_list_then_a_row_forged_in_an_empty_table_is_caught(admin, edited):
    held = [("held.json", take_digest(admin))]
    if edited == "journal_exempt_v1":  # legal_hold declared exempt
        catalog_edit(admin, "evalledger.journal_exempt_v1(text)",
                     "SELECT table_name IN ('ledger_journal', 'ledger_block', 'ledger_digest', 'ledger_identity', "
                     "'capture_purge_marker', 'retention_purge_marker', 'capture_window', 'legal_hold')")
    else:  # legal_hold left out of the journalled tables
        catalog_edit(admin, "evalledger.journal_tables_v1()",
                     "SELECT c.oid, c.relname::text, c.reltype FROM pg_catalog.pg_class c "
                     "WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') "
                     "AND NOT c.relispartition AND NOT evalledger.journal_exempt_v1(c.relname) "
                     "AND c.relname <> 'legal_hold' ORDER BY c.relname")
    assert admin.execute("SELECT count(*) FROM evalledger.legal_hold").fetchone()[0] == 0
    with triggers_lifted(admin, "legal_hold"):
        hold = admin.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-901', 'forged') "
                             "RETURNING hold_id").fetchone()[0]
    seal(admin)
    report = verified(admin.info.dsn, held)
    # The row is caught whatever the catalog says of the tables; the digest's code fingerprint names the edit.
    assert kinds(report) == [("code_changed", None, None, ()),
                             ("row_unjournalled", "legal_hold", f'{{"hold_id":{hold}}}', ())]
    assert report.findings[0].line().startswith(f"code_changed: function evalledger.{edited}(")


def test_a_journal_trigger_disabled_in_the_catalog_is_named(admin):
    admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'D' WHERE tgname = 'take_90_journal'")
    found = [f.line() for f in verified(admin.info.dsn).findings]
    assert found == ["journal_trigger: take: has its journal trigger take_90_journal not ENABLE ALWAYS (tgenabled 'D')"]


@pytest.mark.parametrize("blanked", ["evalledger.ledger_recompute_v3()",
                                     "evalledger.ledger_recompute_brain_eval_v2(evalledger.brain_eval_log)"])
def test_recompute_runs_the_packages_code_whatever_the_catalog_holds(admin, connect_as, reviewer_id, blanked):
    """A consistent rewrite of a decision, every hash rebuilt and no digest kept, then the recompute (or the decision
    it calls) blanked in pg_proc: --recompute re-derives it with the package's own functions, installed in pg_temp."""
    from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
    from tests.ledger_forge import rejournal, reseal, rewrite

    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, count=3,
                         bend=lambda n, row: row.update(hallucinations_detected=1))
    assert decided.decision == "fail"
    key = f'{{"eval_run_id":"{decided.eval_run_id}"}}'
    seal(admin)
    rewrite(admin, "brain_eval_log", "decision = 'pass'", "decision = 'fail'")
    rejournal(admin, admin.info.dsn, "brain_eval_log", key)
    reseal(admin, admin.info.dsn, 1)
    if blanked.endswith("()"):
        catalog_edit(admin, blanked, "SELECT NULL::text, NULL::text, NULL::text, NULL::text, NULL::text WHERE false")
    else:  # brain-eval's entry point: whatever the run says, it decides that
        catalog_edit(admin, blanked, "SELECT to_jsonb(run)")
    # Fooled: the run's rewritten decision is not named. (With the decision blanked, the run's trend row, a copy
    # of what the run's completion decided, still differs from the rewritten run: the copy is named, not the run.)
    assert "brain_eval_log" not in {t for t, in admin.execute("SELECT table_name FROM evalledger.ledger_recompute_v3()")}
    report = verified(admin.info.dsn, recompute=True)
    assert kinds(report) == [("recomputed", "brain_eval_log", key, ("decision",))]
