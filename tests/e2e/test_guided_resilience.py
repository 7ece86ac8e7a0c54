"""The terminal walk (`evalledger review RUN`) when things go wrong under it: the database goes away
mid-question (its answers are kept, the walk says so and tries again until it is back), stays away
(an interrupt, or the walk's patience running out, says what was not saved), or someone changes the
question from another terminal before the save (it is not overwritten: the walk names who changed
what and asks)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from psycopg.conninfo import make_conninfo

from evalledger.core import db
from evalledger.suites.brain_eval import guided, reviewing, store
from evalledger.suites.brain_eval.demo import open_demo_run, register_demo
from tests.conftest import REVIEWER_ROLE, TEST_PASSWORD
from tests.web.conftest import refused_connections

QUESTION = "EVAL-Q01"  # plan_diagnosis: hallucinations, claims, diagnosis, coherence, comments
TYPED = ["0", "", "1", "4", "typed while the server restarted"]


class Scripted:
    """A console that types the given answers in turn; an answer may be a callable, run first (an
    event at that prompt), whose return value is typed."""

    def __init__(self, answers: list) -> None:
        self.answers = list(answers)
        self.said: list[str] = []

    def say(self, text: str = "") -> None:
        self.said.append(text)

    def ask(self, label: str, default: str = "") -> str:
        if not self.answers:
            raise KeyboardInterrupt  # the reviewer stops here
        answer = self.answers.pop(0)
        answer = answer() if callable(answer) else answer
        return answer if answer != "" else default


@pytest.fixture
def run_id(dsn, reviewers):
    register_demo(dsn)
    return open_demo_run(dsn, REVIEWER_ROLE)[0]


@pytest.fixture
def as_reviewer(dsn):
    """Every connection of this test's commands as the reviewer's own login (whose connections the
    test can cut), not the superuser acting as it."""
    db.use_database_url(make_conninfo(dsn, user=REVIEWER_ROLE, password=TEST_PASSWORD))
    yield
    db.use_database_url(None)


def walk_of(run_id, console, sleep: Callable[[float], None] = lambda s: None, **options) -> guided.Walk:
    return guided.Walk(run_id, console, sleep=sleep, **options)


def first_question(walk: guided.Walk) -> dict:
    return next(q for q in walk._read()[1] if q["question_id"] == QUESTION)


def stored(admin, run_id) -> tuple:
    return admin.execute("SELECT hallucinations_detected, total_claims, diagnosis_accuracy_score::float, "
                         "narrative_coherence_rating, reviewer_comments FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s AND question_id = %s", (run_id, QUESTION)).fetchone()


def test_answers_typed_as_the_database_goes_away_are_saved_once_it_is_back(run_id, as_reviewer, admin):
    outage = refused_connections(admin, REVIEWER_ROLE)
    waits = []

    def drop_then_answer():
        outage.__enter__()  # the server goes away as the last answer is typed
        return TYPED[-1]

    def sleep(seconds):
        waits.append(seconds)
        if len(waits) == 3:
            outage.__exit__(None, None, None)  # back after three waits

    console = Scripted([*TYPED[:-1], drop_then_answer])
    walk = walk_of(run_id, console, sleep)
    walk.review_question(first_question(walk), 1, 30)
    said = "\n".join(console.said)
    assert "  the database is not reachable (" in said
    assert "your answers to EVAL-Q01 are kept, trying again until it is back (Ctrl-C stops)" in said
    assert "Traceback" not in said and "SQLSTATE" not in said
    assert said.count("the database is not reachable") == 1  # said once, not at every try
    assert "  the database is back\n  saved EVAL-Q01: complete" in said
    assert waits == [1, 2, 4]
    assert stored(admin, run_id) == (0, 3, 1.0, 4, "typed while the server restarted")
    assert walk.unsaved is None and walk.saved == [QUESTION]
    assert "  the reference answer (now that your numbers are saved; recorded):" in said


def test_an_interrupt_while_the_database_is_away_says_what_was_not_saved(run_id, as_reviewer, admin):
    def stop(seconds):
        raise KeyboardInterrupt

    with refused_connections(admin, REVIEWER_ROLE):
        console = Scripted(TYPED[:-1] + [TYPED[-1]])
        walk = walk_of(run_id, console, stop)
        walk._answers = {}
        question = {"question_id": QUESTION, "uses_stale_fixture": False, "question_type": "plan_diagnosis",
                    "needs": ["hallucinations_detected", "total_claims", "diagnosis_accuracy_score",
                              "narrative_coherence_rating"], "last_entry": 0,
                    **{name: None for name in reviewing.FIELDS}}
        values = {"hallucinations_detected": 0, "total_claims": 3, "diagnosis_accuracy_score": 1,
                  "narrative_coherence_rating": 4, "reviewer_comments": "kept"}
        with pytest.raises(KeyboardInterrupt):
            walk._save(question, values)
    assert walk.unsaved == (QUESTION, values)  # what the command prints as not saved
    assert stored(admin, run_id) == (None, None, None, None, None)


def test_a_walk_gives_up_after_its_patience_and_keeps_the_answers_to_print(run_id, as_reviewer, admin):
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds

    walk_console = Scripted(TYPED)
    walk = walk_of(run_id, walk_console, sleep, clock=lambda: clock[0], retry_for=20)
    question = first_question(walk)
    with refused_connections(admin, REVIEWER_ROLE), pytest.raises(guided.Unreachable, match=r"tried for 20 s"):
        walk.review_question(question, 1, 30)
    assert walk.unsaved[0] == QUESTION and walk.unsaved[1]["reviewer_comments"] == TYPED[-1]


def test_the_command_prints_the_answers_it_could_not_save(run_id, dsn, admin, monkeypatch):
    from tests.cli import run_cli

    def cut_at_the_comment(self, label, default=""):
        if label.startswith("comments"):
            admin.execute(f'ALTER ROLE "{REVIEWER_ROLE}" CONNECTION LIMIT 0')
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (REVIEWER_ROLE,))
        return original(self, label, default)

    from evalledger.suites.brain_eval.cli import review as command

    original = command._PromptConsole.ask
    monkeypatch.setattr(command._PromptConsole, "ask", cut_at_the_comment)
    monkeypatch.setattr(guided, "RETRY_FOR", 2.5)  # one wait of a second, then it gives up
    reviewer_url = make_conninfo(dsn, user=REVIEWER_ROLE, password=TEST_PASSWORD)
    try:
        done = run_cli("review", str(run_id), env={"DATABASE_URL": reviewer_url},
                       input="".join(f"{t}\n" for t in TYPED))
    finally:
        admin.execute(f'ALTER ROLE "{REVIEWER_ROLE}" CONNECTION LIMIT -1')
    assert done.code == 3, done
    assert "your answers to EVAL-Q01 are kept, trying again until it is back" in done.out
    assert ("not saved: EVAL-Q01: hallucinations detected 0, total claims 3, diagnosis accuracy score 1, "
            "narrative coherence rating 4, reviewer comments typed while the server restarted "
            "(type it again when you resume)") in done.err
    assert "Traceback" not in done.err
    assert stored(admin, run_id) == (None, None, None, None, None)


@pytest.mark.parametrize("keep_mine", [False, True])
def test_a_question_changed_in_another_terminal_is_not_overwritten(run_id, as_reviewer, admin, keep_mine):
    def the_other_terminal_saves():
        with db.transaction(None) as conn:
            store.score_question(conn, run_id, QUESTION, {"total_claims": 4, "narrative_coherence_rating": 2})
        return TYPED[-1]

    console = Scripted([*TYPED[:-1], the_other_terminal_saves, "y" if keep_mine else "n"])
    walk = walk_of(run_id, console)
    walk.review_question(first_question(walk), 1, 30)
    said = "\n".join(console.said)
    assert f"  not saved: {QUESTION} changed since it was shown to you: total claims 4 by {REVIEWER_ROLE} at " in said
    if keep_mine:
        assert stored(admin, run_id) == (0, 3, 1.0, 4, TYPED[-1])
        assert f"saved {QUESTION}: complete" in said
    else:
        assert stored(admin, run_id) == (None, 4, None, 2, None)
        assert f"  {QUESTION}: kept as stored" in said
