"""Isolation is checked, not assumed. Every SECURITY DEFINER function that decides
or deletes after waiting on a lock reads under READ COMMITTED only (require_read_committed_v2 or
require_fresh_snapshot_v1): an older snapshot would miss what it waited for. The retention purge
racing a hold is tried with two real sessions (docs/guards.md, section 16)."""

from __future__ import annotations

import pytest
from psycopg import errors

from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.db.insider_logins import LOGINS, in_thread, logins, refused, wait_until_waiting  # noqa: F401 (fixture)
from tests.db.test_retention import age_run

OLD = "timezone('UTC', timezone('UTC', now()) - interval '8 years')"


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def old_run(admin, logins, reviewer_id):
    """A completed run recorded 8 years ago: due for purge."""
    run_id = record_run(logins("runner"), reviewer_id, count=2, registry=admin, review_conn=admin).eval_run_id
    age_run(admin, run_id, OLD)
    return run_id


def run_count(admin, run_id) -> int:
    return admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()[0]


@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_the_purge_refuses_an_isolation_it_cannot_guard(admin, logins, old_run, isolation):
    """As `PGOPTIONS='-c default_transaction_isolation=...' evalledger retention apply` would run it."""
    retention = logins("retention", options=f"-c default_transaction_isolation={isolation.replace(' ', chr(92) + ' ')}")
    assert retention.execute("SHOW transaction_isolation").fetchone()[0] == isolation
    with refused(admin, errors.InvalidTransactionState,
                 f"evalledger: the retention purge runs under READ COMMITTED, not {isolation.upper()}"):
        retention.execute("SELECT * FROM evalledger.retention_purge_v2()")
    assert run_count(admin, old_run) == 1


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_a_purge_racing_a_hold_never_deletes_the_held_run(admin, logins, old_run, isolation):
    """The owner places a hold on the old run and has not committed; the retention login purges.
    Under READ COMMITTED the purge waits for the hold, then sees it and keeps the run; under
    REPEATABLE READ (whose snapshot predates the wait, so it would have deleted the run) it is refused."""
    owner = logins("owner", autocommit=False)
    owner.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'litigation, placed now')",
                  (old_run,))
    retention = logins("retention", autocommit=False)
    retention.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
    retention.execute("SELECT 1")  # the transaction's snapshot, taken before the hold commits
    thread, outcome = in_thread(lambda: retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall())
    if isolation == "read committed":
        wait_until_waiting(admin, LOGINS["retention"][0])
    else:
        thread.join(20)
    owner.commit()
    thread.join(20)
    if isolation == "read committed":
        assert outcome == {"result": []}, outcome
        retention.commit()
    else:
        assert isinstance(outcome.get("error"), errors.InvalidTransactionState), outcome
        retention.rollback()
    assert run_count(admin, old_run) == 1
    assert admin.execute("SELECT count(*) FROM evalledger.retention_purge_log").fetchone()[0] == 0


# Each function that decides or deletes and the check it makes first.
DECIDING = {
    "retention_purge_v2()": "require_read_committed_v2",
    "brain_eval_log_admit_v2()": "require_read_committed_v2",
    "prompt_tuner_admit_v2()": "require_read_committed_v2",
    "brain_prompt_claim_v1(character varying, character varying, text)": "require_read_committed_v2",
    "brain_eval_log_decide_v2()": "require_fresh_snapshot_v1",
    "brain_eval_review_trail_v1()": "require_read_committed_v2",
    "brain_version_admit_v2()": "require_read_committed_v2",
    "takes_quality_run_decide_v2()": "require_fresh_snapshot_v1",
    "work_quality_snapshot_decide_v3()": "require_fresh_snapshot_v1",
}


def test_every_definer_function_that_decides_or_deletes_checks_its_isolation(admin):
    signature = "p.proname || '(' || oidvectortypes(p.proargtypes) || ')'"
    sources = dict(admin.execute(f"SELECT {signature}, p.prosrc FROM pg_proc p "
                                 "WHERE p.pronamespace = 'evalledger'::regnamespace").fetchall())
    missing = [f for f, check in DECIDING.items() if f"evalledger.{check}(" not in sources[f]]
    assert missing == []
    # And the tables' triggers run these versions, not the ones before them.
    running = {r[0] for r in admin.execute(f"SELECT DISTINCT {signature} FROM pg_trigger t "
                                           "JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_class c ON c.oid = t.tgrelid "
                                           "WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT t.tgisinternal")}
    assert {f for f in DECIDING if f.endswith("()") and "purge" not in f} <= running


def test_a_brain_takes_on_no_prompt_under_an_old_snapshot(admin, logins):
    """A brain version of a new prompt decides, after a lock, that no open run of the prompt is
    another brain's: under SERIALIZABLE that read would not see a run committed while it waited.
    (Its registration now asks first, for the spellings of its prompt another brain registered
    while it waited: issue 37, item 1.)"""
    owner = logins("owner", autocommit=False)
    owner.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
    with refused(admin, errors.InvalidTransactionState,
                 "evalledger: a brain version's registration \\(one prompt per spelling\\) runs under READ COMMITTED, "
                 "not SERIALIZABLE"):
        owner.execute("INSERT INTO evalledger.brain_version (target_id, provider, model_id, system_prompt) "
                      "VALUES ('AGT-902', 'anthropic', 'm', 'A prompt no brain showed before.')")
    owner.rollback()


def work_quality_run(runner, name="bot-a"):
    return runner.execute("INSERT INTO evalledger.eval_work_quality_snapshots (origin, kind, name, run_id, models) "
                          "VALUES ('run', 'bot', %s, 'r1', '{openai:gpt-4o,anthropic:claude-opus-4-7}') "
                          "RETURNING snapshot_id", (name,)).fetchone()[0]


def verdict(conn, snapshot_id, model):
    reply = {"efficacy": 0.8, "completeness": 0.8, "output_quality": 0.8, "restraint": 0.8, "reliability": 0.8,
             "value_for_money": 0.8, "overall": 0.8, "narrative": "fine", "confidence": 0.9}
    from psycopg.types.json import Jsonb
    conn.execute("INSERT INTO evalledger.eval_work_quality_judge_verdicts (snapshot_id, model, recorded, response_json) "
                 "VALUES (%s, %s, false, %s)", (snapshot_id, model, Jsonb(reply)))


def test_a_work_quality_completion_waits_for_a_verdict_and_counts_it(admin, logins):
    """A verdict locks its snapshot FOR SHARE; a completion racing it waits, then (READ COMMITTED,
    checked) reads it: before, a verdict could land after the aggregate was written."""
    runner = logins("runner")
    snapshot = work_quality_run(runner)
    verdict(runner, snapshot, "openai:gpt-4o")
    late = logins("runner", autocommit=False)
    verdict(late, snapshot, "anthropic:claude-opus-4-7")  # not committed yet
    completer = logins("runner")
    thread, outcome = in_thread(lambda: completer.execute(
        "SELECT evalledger.work_quality_complete_v1(%s) -> 'aggregate' -> 'verdicts'", (snapshot,)).fetchone())
    wait_until_waiting(admin, LOGINS["runner"][0])
    late.commit()
    thread.join(20)
    assert "error" not in outcome, outcome
    assert len(outcome["result"][0]) == 2  # both verdicts in the aggregate
    # Under REPEATABLE READ the completion is refused outright.
    again = work_quality_run(runner, "bot-b")
    for model in ("openai:gpt-4o", "anthropic:claude-opus-4-7"):
        verdict(runner, again, model)
    old = logins("runner", autocommit=False)
    old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    with refused(admin, errors.InvalidTransactionState,
                 "evalledger: a work-quality snapshot is completed under READ COMMITTED, not REPEATABLE READ"):
        old.execute("SELECT evalledger.work_quality_complete_v1(%s)",
                    (again,))
    old.rollback()
