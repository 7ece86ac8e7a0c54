"""Migration 0009 (the review app) at the database, as each role: a comment's limit; the reference
answer (a catalog question's expected findings and pass criteria) that a reviewer reads only once
its own numbers are saved, recorded by a transaction that committed first (a rolled-back reveal
shows nothing), append-only and purged with its run; the trail that tells a change after the
reference from one before; and the optimistic check a save makes (reviewing.save)."""

from __future__ import annotations

import re
import threading
import time

import psycopg
import pytest
from psycopg import errors

from evalledger.suites.brain_eval import reviewing, store
from evalledger.suites.brain_eval.demo import open_demo_run, register_demo
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE
from tests.db.insider_logins import zone_that_moves
from tests.db.test_retention import HORIZON, purge_as_retention, set_run_clock

QUESTION = "EVAL-Q01"  # plan_diagnosis, not stale: hallucinations, claims, diagnosis, coherence
NUMBERS = {"hallucinations_detected": 0, "total_claims": 3, "diagnosis_accuracy_score": 1,
           "narrative_coherence_rating": 4}


@pytest.fixture
def run_id(dsn, reviewers):
    register_demo(dsn)
    found, _ = open_demo_run(dsn, REVIEWER_ROLE)
    return found


def catalog_criteria(admin, question: str = QUESTION) -> dict:
    return admin.execute("SELECT pass_criteria FROM evalledger.brain_eval_catalog_question "
                         "WHERE catalog_version = 'v28-2026Q2' AND question_id = %s", (question,)).fetchone()[0]


def shown_rows(admin, run_id) -> list[tuple]:
    return admin.execute("SELECT question_id, shown_by::text, entries_before FROM evalledger.brain_eval_reference_shown "
                         "WHERE eval_run_id = %s ORDER BY question_id", (run_id,)).fetchall()


def test_a_reviewer_reads_no_pass_criteria_but_through_the_reference(run_id, connect_as):
    reviewer = connect_as(REVIEWER_ROLE)
    for column, table in (("pass_criteria", "brain_eval_catalog_question"), ("document", "brain_eval_catalog"),
                          ("*", "brain_eval_catalog_question")):
        with pytest.raises(errors.InsufficientPrivilege, match=f"permission denied for table {table}"):
            reviewer.execute(f"SELECT {column} FROM evalledger.{table}")
    texts = reviewer.execute("SELECT question_id, question_text, sources FROM evalledger.brain_eval_catalog_question "
                             "WHERE question_id = %s", (QUESTION,)).fetchall()
    assert len(texts) == 1 and texts[0][1].startswith("Why is EMEA at 71% of plan")
    assert reviewing.reference(reviewer, run_id, QUESTION) is None


def test_the_reference_shows_once_the_numbers_are_saved_and_reads_from_the_next_transaction(run_id, connect_as,
                                                                                           admin):
    reviewer = connect_as(REVIEWER_ROLE)
    with pytest.raises(errors.ObjectNotInPrerequisiteState,
                       match="shows once your numbers for it are saved .blind review.: still needed: "
                             "hallucinations_detected, total_claims, diagnosis_accuracy_score, narrative_coherence_rating"):
        reviewing.show_reference(reviewer, run_id, QUESTION)
    assert shown_rows(admin, run_id) == []
    with reviewer.transaction():
        store.score_question(reviewer, run_id, QUESTION, NUMBERS)
        first = reviewing.show_reference(reviewer, run_id, QUESTION)
        assert first is not None
        assert reviewing.reference(reviewer, run_id, QUESTION) is None  # not in the transaction that showed it
    criteria = catalog_criteria(admin)
    found = reviewing.reference(reviewer, run_id, QUESTION)
    assert found["expected_findings"] == criteria["expected_findings"] == [
        "pipeline coverage of 2.1x is below the 3x plan assumption"]
    assert found["pass_criteria"] == {k: v for k, v in criteria.items() if k != "expected_findings"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", found["shown_at"])
    last = admin.execute("SELECT max(entry_id) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s "
                         "AND question_id = %s", (run_id, QUESTION)).fetchone()[0]
    assert shown_rows(admin, run_id) == [(QUESTION, admin.info.user, last)]
    assert reviewing.show_reference(reviewer, run_id, QUESTION) == first  # recorded once


class Abandoned(Exception):
    """Raised inside a transaction block: psycopg rolls it back."""


def test_a_rolled_back_reveal_shows_nothing_and_records_nothing(run_id, connect_as, admin):
    reviewer = connect_as(REVIEWER_ROLE)
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    with pytest.raises(Abandoned), reviewer.transaction():
        reviewing.show_reference(reviewer, run_id, QUESTION)
        seen = reviewing.reference(reviewer, run_id, QUESTION)
        raise Abandoned  # the reviewer's client rolls back after the reveal
    assert seen is None
    assert shown_rows(admin, run_id) == []
    assert reviewing.reference(reviewer, run_id, QUESTION) is None
    with reviewer.transaction():  # nor in a savepoint that is rolled back
        with pytest.raises(Abandoned), reviewer.transaction():
            reviewing.show_reference(reviewer, run_id, QUESTION)
            raise Abandoned
        assert reviewing.reference(reviewer, run_id, QUESTION) is None
    assert shown_rows(admin, run_id) == []
    assert reviewing.reference(reviewer, run_id, QUESTION) is None


def test_only_the_runs_reviewer_shows_or_reads_it_and_auditors_see_that_it_was(run_id, connect_as, admin):
    reviewer, other = connect_as(REVIEWER_ROLE), connect_as(OTHER_REVIEWER_ROLE)
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    with pytest.raises(errors.InsufficientPrivilege, match=f"no question {QUESTION} in run {run_id} that you review"):
        reviewing.show_reference(other, run_id, QUESTION)
    reviewing.show_reference(reviewer, run_id, QUESTION)
    assert reviewing.reference(other, run_id, QUESTION) is None
    assert reviewing.reference(reviewer, run_id, QUESTION) is not None
    assert other.execute("SELECT count(*) FROM evalledger.brain_eval_reference_shown").fetchone()[0] == 0
    for reader in ("evalledger_auditor", "evalledger_revops"):
        assert connect_as(reader).execute("SELECT count(*) FROM evalledger.brain_eval_reference_shown "
                                          "WHERE eval_run_id = %s", (run_id,)).fetchone()[0] == 1
    with pytest.raises(errors.InsufficientPrivilege):
        connect_as("evalledger_runner").execute("SELECT count(*) FROM evalledger.brain_eval_reference_shown")


def test_a_run_recorded_outside_the_harness_has_no_reference(dsn, reviewers, connect_as, admin):
    from tests.builders import record_run, register_prompt, BRAIN_PROMPTS

    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    recorded = record_run(connect_as("evalledger_runner"), reviewers[REVIEWER_ROLE], count=2, complete=False)
    reviewer = connect_as(REVIEWER_ROLE)
    question = reviewer.execute("SELECT question_id FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s "
                                "ORDER BY question_id LIMIT 1", (recorded,)).fetchone()[0]
    assert reviewing.show_reference(reviewer, recorded, question) is None
    assert shown_rows(admin, recorded) == []


def test_what_changed_after_the_reference_is_told_apart_by_the_trail(run_id, connect_as, admin):
    reviewer = connect_as(REVIEWER_ROLE)
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    reviewing.show_reference(reviewer, run_id, QUESTION)
    store.score_question(reviewer, run_id, QUESTION, {"narrative_coherence_rating": 2})
    after = admin.execute(
        "SELECT e.field, e.entry_id > s.entries_before FROM evalledger.brain_eval_review_entry e "
        "JOIN evalledger.brain_eval_reference_shown s USING (eval_run_id, question_id) "
        "WHERE e.eval_run_id = %s AND e.question_id = %s ORDER BY e.entry_id", (run_id, QUESTION)).fetchall()
    assert after == [(field, False) for field in NUMBERS] + [("narrative_coherence_rating", True)]


@pytest.mark.parametrize("role", ["evalledger_owner", None])
def test_the_reference_shown_is_append_only(run_id, connect_as, admin, role):
    reviewer = connect_as(REVIEWER_ROLE)
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    reviewing.show_reference(reviewer, run_id, QUESTION)
    before = shown_rows(admin, run_id)
    conn = connect_as(role) if role else admin
    for statement in ("UPDATE evalledger.brain_eval_reference_shown SET shown_by = 'x'",
                      "DELETE FROM evalledger.brain_eval_reference_shown",
                      "TRUNCATE evalledger.brain_eval_reference_shown"):
        # The owner role holds SELECT only (seal_tables_v2): refused by privilege before the guard.
        refusal = "permission denied for table" if role else "brain_eval_reference_shown is append-only"
        with pytest.raises(errors.InsufficientPrivilege, match=refusal):
            conn.execute(statement)
    with pytest.raises(errors.InsufficientPrivilege):
        connect_as("evalledger_owner").execute(
            "INSERT INTO evalledger.brain_eval_reference_shown (eval_run_id, question_id, reviewer_user_id, shown_by, "
            "shown_txid, entries_before, run_created_at) SELECT eval_run_id, 'EVAL-Q02', reviewer_user_id, 'x', 1, 0, "
            "now() FROM evalledger.brain_eval_reference_shown")
    with pytest.raises(errors.InsufficientPrivilege):
        reviewer.execute("INSERT INTO evalledger.brain_eval_reference_shown (eval_run_id, question_id, reviewer_user_id, "
                         "shown_by, shown_txid, entries_before, run_created_at) VALUES (%s, 'EVAL-Q02', gen_random_uuid(), "
                         "'x', 1, 0, now())", (run_id,))
    assert shown_rows(admin, run_id) == before


def test_the_reference_shown_goes_with_its_run_in_the_purge(run_id, connect_as, admin):
    reviewer = connect_as(REVIEWER_ROLE)
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    reviewing.show_reference(reviewer, run_id, QUESTION)
    with admin.transaction():
        set_run_clock(admin, run_id, f"{HORIZON} - interval '1 day'")
        purge_as_retention(admin)
    assert shown_rows(admin, run_id) == []
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)
                         ).fetchone()[0] == 0


def test_a_comment_over_the_limit_is_refused_by_the_database(run_id, connect_as, admin):
    limit = int(re.search(r"<= (\d+)", admin.execute(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'brain_eval_question_score_comment_length'"
    ).fetchone()[0]).group(1))
    assert limit == reviewing.COMMENT_LIMIT == 4000
    reviewer = connect_as(REVIEWER_ROLE)
    with pytest.raises(errors.CheckViolation) as refused:
        store.score_question(reviewer, run_id, QUESTION, {"reviewer_comments": "x" * (limit + 1)})
    assert refused.value.diag.constraint_name == "brain_eval_question_score_comment_length"
    store.score_question(reviewer, run_id, QUESTION, {"reviewer_comments": "é" * limit})  # characters, not bytes
    with pytest.raises(reviewing.Invalid, match="4001 characters: a comment is at most 4000 .shorten it by 1."):
        reviewing.parse_value("reviewer_comments", "x" * (limit + 1))


def test_a_save_is_refused_when_the_question_changed_since_it_was_shown(run_id, connect_as):
    first, second = connect_as(REVIEWER_ROLE), connect_as(REVIEWER_ROLE)
    shown = reviewing.versions(first, run_id, QUESTION)[QUESTION]["last_entry"]
    assert shown == 0
    with second.transaction():
        reviewing.save(second, run_id, QUESTION, {"total_claims": 5, "narrative_coherence_rating": 3}, shown)
    with pytest.raises(reviewing.Changed) as changed, first.transaction():
        reviewing.save(first, run_id, QUESTION, {"total_claims": 4}, shown)
    login = first.info.user  # the session's login; the tests act as the reviewer with SET ROLE
    assert [(c.field, c.value, c.entered_by, c.acting_role) for c in changed.value.changes] == [
        ("total_claims", 5, login, REVIEWER_ROLE), ("narrative_coherence_rating", 3, login, REVIEWER_ROLE)]
    assert re.fullmatch(rf"{QUESTION} changed since it was shown to you: total claims 5 by {login} \(acting as "
                        rf"{REVIEWER_ROLE}\) at \S+ \S+ UTC; narrative coherence rating 3 by .+ at \S+ \S+ UTC\. "
                        "Nothing of yours was saved", str(changed.value))
    assert first.execute("SELECT total_claims FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s "
                         "AND question_id = %s", (run_id, QUESTION)).fetchone()[0] == 5
    # Shown the new version, the same save goes through.
    fresh = reviewing.versions(first, run_id, QUESTION)[QUESTION]["last_entry"]
    with first.transaction():
        reviewing.save(first, run_id, QUESTION, {"total_claims": 4}, fresh)


def test_a_save_holds_the_question_until_it_commits(run_id, connect_as):
    first, second = connect_as(REVIEWER_ROLE), connect_as(REVIEWER_ROLE)
    shown = reviewing.versions(first, run_id, QUESTION)[QUESTION]["last_entry"]
    outcome = []
    with first.transaction():
        reviewing.save(first, run_id, QUESTION, {"total_claims": 5}, shown)

        def racing():
            try:
                with second.transaction():
                    reviewing.save(second, run_id, QUESTION, {"total_claims": 6}, shown)
                outcome.append("saved")
            except reviewing.Changed as exc:
                outcome.append(exc.changes[0].value)

        thread = threading.Thread(target=racing)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # waiting for the first save's lock
    thread.join(10)
    assert outcome == [5]  # it saw the first save once that committed, and saved nothing


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_a_transaction_held_open_across_the_hot_tiers_edge_neither_reads_nor_reveals(run_id, connect_as, admin,
                                                                                      isolation):
    """Issue 17, class 1, for the reference answer: its window is the statement's, in UTC
    (brain_eval_reference_v2), so a reviewer's transaction begun while the run was hot reads nothing once
    the run is cold, whatever its isolation and whatever TimeZone it sets (the zone that moves a
    24-month step furthest back today)."""
    reviewer = connect_as(REVIEWER_ROLE)
    zone, _ = zone_that_moves(admin, "24 months", earlier=True)
    reviewer.execute("SELECT set_config('TimeZone', %s, false)", (zone,))
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    reviewing.show_reference(reviewer, run_id, QUESTION)
    with admin.transaction():  # the run leaves the hot tier five seconds from now
        set_run_clock(admin, run_id, "evalledger.hot_tier_start_v1() + interval '5 seconds'")

    def cold() -> bool:
        return admin.execute("SELECT created_at < evalledger.hot_tier_start_v1() FROM evalledger.brain_eval_log "
                             "WHERE eval_run_id = %s", (run_id,)).fetchone()[0]

    with reviewer.transaction():
        reviewer.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation.upper()}")
        assert not cold()
        assert reviewing.reference(reviewer, run_id, QUESTION) is not None  # hot when the transaction began
        while not cold():
            time.sleep(0.2)
        assert reviewing.reference(reviewer, run_id, QUESTION) is None
        with pytest.raises(errors.InsufficientPrivilege, match=f"no question {QUESTION} in run {run_id} that you review"):
            with reviewer.transaction():
                reviewing.show_reference(reviewer, run_id, QUESTION)


def test_two_sessions_revealing_at_once_record_one_reveal(run_id, connect_as, admin):
    """The reviewer in two terminals asks for the same reference at once: one row, one time."""
    first, second = connect_as(REVIEWER_ROLE), connect_as(REVIEWER_ROLE)
    store.score_question(first, run_id, QUESTION, NUMBERS)
    got = {}
    first.execute("BEGIN")
    got["first"] = reviewing.show_reference(first, run_id, QUESTION)  # holds the question row's lock

    def reveal():
        got["second"] = reviewing.show_reference(second, run_id, QUESTION)

    racer = threading.Thread(target=reveal)
    racer.start()
    racer.join(1.0)
    assert racer.is_alive()  # the second waits for the first's transaction
    first.execute("COMMIT")
    racer.join(20)
    assert got["first"] == got["second"] is not None
    assert [row[:2] for row in shown_rows(admin, run_id)] == [(QUESTION, admin.info.user)]
