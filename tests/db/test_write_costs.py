"""Write costs independent of history (issue 20, folded into the baseline): the reviewer's score entry finds
what its policy needs on the question row itself, whatever the number of runs before it.

The figures are bench/ledger_writes.py's; these tests assert the plan and the behaviour that make
them hold: no scan of the reviewer's runs in a score's UPDATE, a question row that carries its
run's reviewer (stamped by the database, never the caller's, never changed), and a policy that
admits exactly the rows it admitted before.
"""

from __future__ import annotations

import pytest
from psycopg import errors

from tests.builders import record_run
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE

RUNNER = "evalledger_runner"


def plan_of(conn, statement: str, params=()) -> str:
    """The EXPLAIN ANALYZE plan of statement, rolled back (it changes nothing)."""
    with conn.transaction(force_rollback=True):
        return "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement, params))


@pytest.fixture
def history(admin, reviewers, shared_rows):
    """Twelve completed runs of the first reviewer and one open run; (open run id, its question ids)."""
    return shared_rows("history", lambda: _history(admin, reviewers))


def _history(admin, reviewers):
    reviewer = reviewers[REVIEWER_ROLE]
    for _ in range(12):
        record_run(admin, reviewer, review_conn=admin)
    run_id = record_run(admin, reviewer, review=False, complete=False)
    questions = [q for q, in admin.execute("SELECT question_id FROM evalledger.brain_eval_question_score "
                                           "WHERE eval_run_id = %s ORDER BY question_id", (run_id,))]
    return run_id, questions


@pytest.mark.shared_db
def test_a_score_entry_reads_no_run_of_the_reviewers_history(connect_as, history):
    """The reviewer's UPDATE of one score is one index probe of the question row; its policy reads
    no other table (no InitPlan over brain_eval_log, no sequential scan of anything)."""
    run_id, questions = history
    reviewer = connect_as(REVIEWER_ROLE)
    plan = plan_of(reviewer, "UPDATE evalledger.brain_eval_question_score SET total_claims = 2, "
                             "hallucinations_detected = 0 WHERE eval_run_id = %s AND question_id = %s",
                   (run_id, questions[0]))
    assert "brain_eval_log" not in plan, plan
    assert "Seq Scan" not in plan, plan
    assert "SubPlan" not in plan, plan
    # One index probe by the run's key (the planner may pick the run's index or the (run, question) key).
    assert "Index Scan using brain_eval_question_score_" in plan, plan
    assert f"Index Cond: ((eval_run_id = '{run_id}'::uuid)" in plan or f"Index Cond: (eval_run_id = '{run_id}'::uuid)" in plan, plan


@pytest.mark.shared_db
def test_a_question_row_carries_its_runs_reviewer(admin, reviewers, history):
    run_id, _ = history
    rows = admin.execute("SELECT DISTINCT q.run_reviewer_user_id = l.reviewer_user_id "
                         "FROM evalledger.brain_eval_question_score q JOIN evalledger.brain_eval_log l USING (eval_run_id)"
                         ).fetchall()
    assert rows == [(True,)]
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s",
                         (run_id,)).fetchone()[0] == 30


def test_a_supplied_reviewer_is_not_taken(admin, reviewers):
    """run_reviewer_user_id is the database's to stamp: a runner that names the other reviewer gets the run's."""
    other = reviewers[OTHER_REVIEWER_ROLE]
    run_id = record_run(admin, reviewers[REVIEWER_ROLE], review=False, complete=False, count=2,
                        bend=lambda number, row: row.update(run_reviewer_user_id=other))
    stamped = admin.execute("SELECT DISTINCT run_reviewer_user_id FROM evalledger.brain_eval_question_score "
                            "WHERE eval_run_id = %s", (run_id,)).fetchall()
    assert stamped == [(reviewers[REVIEWER_ROLE],)]


@pytest.mark.shared_db
def test_the_reviewer_cannot_change_the_rows_reviewer(connect_as, history, reviewers):
    run_id, questions = history
    reviewer = connect_as(REVIEWER_ROLE)
    with pytest.raises(errors.InsufficientPrivilege):
        reviewer.execute("UPDATE evalledger.brain_eval_question_score SET run_reviewer_user_id = %s "
                         "WHERE eval_run_id = %s AND question_id = %s",
                         (reviewers[OTHER_REVIEWER_ROLE], run_id, questions[0]))


def test_the_policy_admits_what_it_admitted(admin, connect_as, reviewers, history):
    """Each reviewer reads and scores its own runs' question rows only, as when the policy read its runs."""
    run_id, questions = history
    mine = connect_as(REVIEWER_ROLE)
    other = connect_as(OTHER_REVIEWER_ROLE)
    assert mine.execute("SELECT count(*) FROM evalledger.brain_eval_question_score").fetchone()[0] == 13 * 30
    assert other.execute("SELECT count(*) FROM evalledger.brain_eval_question_score").fetchone()[0] == 0
    updated = other.execute("UPDATE evalledger.brain_eval_question_score SET total_claims = 2, "
                            "hallucinations_detected = 0 WHERE eval_run_id = %s AND question_id = %s",
                            (run_id, questions[0])).rowcount
    assert updated == 0
    assert mine.execute("UPDATE evalledger.brain_eval_question_score SET total_claims = 2, "
                        "hallucinations_detected = 0 WHERE eval_run_id = %s AND question_id = %s",
                        (run_id, questions[0])).rowcount == 1
