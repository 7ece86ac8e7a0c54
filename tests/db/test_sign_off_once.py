"""A sign-off made once (issue 39, item 3), tried as the reviewer's own login: refused while a
question still needs the reviewer's numbers, naming them; the same values again store nothing, even
from two sessions at once; other values are a correction, a new row the next completion copies."""

from __future__ import annotations

import json
import re
import threading
import time
from decimal import Decimal

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import catalog, store
from tests.builders import open_harness_run, record_run
from tests.db.insider_logins import logins, refused  # noqa: F401 (fixture)

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
SIGN_OFF = "INSERT INTO brain_eval_run_review (eval_run_id, reviewer_hours_spent, calibration_notes) VALUES (%s, %s, %s)"


def sign_offs(admin, run_id) -> list[tuple]:
    return admin.execute("SELECT reviewer_hours_spent, calibration_notes FROM brain_eval_run_review "
                         "WHERE eval_run_id = %s ORDER BY review_id", (run_id,)).fetchall()


def scored_run(admin, reviewer_id, count=3):
    """An open run of `count` questions, every reviewer's field entered by its reviewer, not signed off."""
    return record_run(admin, reviewer_id, count=count, complete=False, review=True, hours=None)


def test_a_sign_off_before_the_questions_are_scored_is_refused_naming_what_is_missing(admin, logins, reviewer_id):
    reviewer = logins("reviewer")
    unscored = record_run(admin, reviewer_id, count=2, complete=False, review=False)
    with refused(admin, errors.CheckViolation, re.escape(
            f"evalledger: run {unscored} cannot be signed off before its questions are scored: EVAL-Q01: "
            "hallucinations_detected, total_claims, staleness_correctly_recognized, diagnosis_accuracy_score, "
            "narrative_coherence_rating; EVAL-Q02: hallucinations_detected, total_claims, "
            "staleness_correctly_recognized, diagnosis_accuracy_score, narrative_coherence_rating")) as caught:
        reviewer.execute(SIGN_OFF, (unscored, "1.00", None))
    assert caught.value.diag.message_hint == f"enter them first (evalledger review {unscored}), then sign off"

    # One field left of one question: that is what it names.
    reviewer.execute("UPDATE brain_eval_question_score SET hallucinations_detected = 0, total_claims = 3, "
                     "staleness_correctly_recognized = true, diagnosis_accuracy_score = 1, "
                     "narrative_coherence_rating = 4 WHERE eval_run_id = %s AND question_id = 'EVAL-Q01'", (unscored,))
    reviewer.execute("UPDATE brain_eval_question_score SET hallucinations_detected = 0, total_claims = 3, "
                     "staleness_correctly_recognized = true, diagnosis_accuracy_score = 1 "
                     "WHERE eval_run_id = %s AND question_id = 'EVAL-Q02'", (unscored,))
    with refused(admin, errors.CheckViolation, re.escape(
            f"evalledger: run {unscored} cannot be signed off before its questions are scored: "
            "EVAL-Q02: narrative_coherence_rating")):
        reviewer.execute(SIGN_OFF, (unscored, "1.00", None))
    reviewer.execute("UPDATE brain_eval_question_score SET narrative_coherence_rating = 5 "
                     "WHERE eval_run_id = %s AND question_id = 'EVAL-Q02'", (unscored,))
    assert reviewer.execute(SIGN_OFF, (unscored, "1.00", None)).rowcount == 1


def test_a_harness_question_without_an_answer_is_named(admin, logins, reviewer_id):
    owner, runner, reviewer = logins("owner"), logins("runner"), logins("reviewer")
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    run_id, _ = open_harness_run(owner, runner, reviewer_id, ["EVAL-Q02", "EVAL-Q01"])
    with refused(admin, errors.CheckViolation, re.escape(
            f"evalledger: run {run_id} cannot be signed off before its questions are scored: "
            "EVAL-Q02: no answer yet; EVAL-Q01: no answer yet")):
        reviewer.execute(SIGN_OFF, (run_id, "1.00", None))


def test_the_same_sign_off_again_stores_nothing_and_other_values_are_a_correction(admin, logins, reviewer_id):
    reviewer = logins("reviewer")
    run_id = scored_run(admin, reviewer_id)
    notes = {"citation_rate": "cite the as-of date", "hallucination_rate": "every claim traced"}
    assert store.sign_off_run(reviewer, run_id, "3.5", notes) is not None
    # The same values (3.50 is 3.5; the notes' keys in any order): the sign-off it repeats, no row.
    again = reviewer.execute(SIGN_OFF, (run_id, "3.50", Jsonb(dict(reversed(list(notes.items()))))))
    assert again.rowcount == 0
    assert store.sign_off_run(reviewer, run_id, Decimal("3.5"), notes) is None
    assert sign_offs(admin, run_id) == [(Decimal("3.50"), notes)]
    # Other values: a correction, recorded beside it; back to the first values is one more.
    assert store.sign_off_run(reviewer, run_id, "4", notes) is not None
    assert store.sign_off_run(reviewer, run_id, "4", None) is not None
    assert store.sign_off_run(reviewer, run_id, "4", None) is None
    assert store.sign_off_run(reviewer, run_id, "3.5", notes) is not None
    assert sign_offs(admin, run_id) == [(Decimal("3.50"), notes), (Decimal("4.00"), notes), (Decimal("4.00"), None),
                                        (Decimal("3.50"), notes)]
    # Completion copies the latest.
    runner = logins("runner")
    store.complete_run(runner, run_id)
    assert admin.execute("SELECT reviewer_hours_spent, calibration_notes FROM brain_eval_log WHERE eval_run_id = %s",
                         (run_id,)).fetchone() == (Decimal("3.50"), notes)
    # And once complete, even the same values are refused: its review is final.
    with refused(admin, errors.InsufficientPrivilege,
                 re.escape(f"evalledger: run {run_id} is complete: its review is final")):
        reviewer.execute(SIGN_OFF, (run_id, "3.50", Jsonb(notes)))


def test_two_identical_sign_offs_at_once_store_one(admin, logins, reviewer_id):
    """A double submit, or a rerun while the first still commits: the second waits for the first
    and then finds the sign-off it repeats."""
    first, second = logins("reviewer", autocommit=False), logins("reviewer", autocommit=False)
    run_id = scored_run(admin, reviewer_id)
    assert first.execute(SIGN_OFF, (run_id, "2.00", None)).rowcount == 1
    got = []

    def sign_second():
        got.append(second.execute(SIGN_OFF, (run_id, "2.00", None)).rowcount)
        second.commit()

    waiter = threading.Thread(target=sign_second)
    waiter.start()
    deadline = time.monotonic() + 10
    while admin.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                        (second.info.backend_pid,)).fetchone() != ("Lock",):
        assert time.monotonic() < deadline, "the second sign-off did not wait for the first"
        time.sleep(0.02)
    first.commit()
    waiter.join(10)
    assert got == [0]
    assert sign_offs(admin, run_id) == [(Decimal("2.00"), None)]


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_a_sign_off_runs_under_read_committed(admin, logins, reviewer_id, isolation):
    """Under an older snapshot the second of two at once would not see the first: refused."""
    reviewer = logins("reviewer", autocommit=False)
    run_id = scored_run(admin, reviewer_id)
    reviewer.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
    with refused(admin, errors.InvalidTransactionState, re.escape(
            f"evalledger: a reviewer's sign-off runs under READ COMMITTED, not {isolation}")):
        reviewer.execute(SIGN_OFF, (run_id, "2.00", None))
    reviewer.rollback()


def test_only_the_runs_reviewer_is_told_anything(admin, logins, connect_as, reviewer_id):
    """Another reviewer learns neither whether the run is scored nor whether it was signed off."""
    from tests.conftest import OTHER_REVIEWER_ROLE

    unscored = record_run(admin, reviewer_id, count=1, complete=False, review=False)
    other = connect_as(OTHER_REVIEWER_ROLE)
    with refused(admin, errors.InsufficientPrivilege,
                 re.escape(f"evalledger: only the run's reviewer signs off run {unscored}")):
        other.execute(SIGN_OFF, (unscored, "1.00", None))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        logins("runner").execute(SIGN_OFF, (unscored, "1.00", None))
