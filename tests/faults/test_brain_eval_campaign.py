"""The fault campaign's brain-eval and ledger part: a harness run against the stand-in SIGKILLed
while the brain answers or the judges draft, two runners of one run, `review finish` and `ledger
seal` killed, at moments the campaign's seed draws. After each fault the same command again
resumes, the stand-in's request log proves that no question was asked again once its answer (or a
judge's draft) was stored, counts in SQL prove every row once, and `ledger verify` is clean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections import Counter

import pytest

from evalledger.suites.brain_eval import catalog
from evalledger.suites.brain_eval.demo import DEMO_NOTES, review_path
from tests.cli import SCRIPT, _environment, recorded_demo_file, run_cli
from tests.conftest import REVIEWER_ROLE
from tests.faults.conftest import assert_verified, one
from tests.outages import killed_when, wait_until
from tests.standin import steps

pytestmark = [pytest.mark.faults]

BRAIN = "claude-sonnet-4-6"
JUDGES = ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro")
QUESTIONS = {q["text"]: q["id"] for q in json.loads(catalog.demo_catalog_path().read_text("utf-8"))["questions"]}
BEING_RUN = re.compile(r"evalledger: error: run (\S+) is being run by another process since [^;]+; "
                       r"run the same command again when it ends\n")


def question_of(request) -> str:
    found = [text for text in QUESTIONS if text in request.user]
    assert found, f"a {request.model} request names no catalog question"
    return QUESTIONS[max(found, key=len)]


@pytest.fixture
def brain(dsn, reviewers, tmp_path, standin):
    """The demo catalog loaded and AGT-902 registered (through the CLI), a folder of views, and the
    stand-in answering every model after a short wait: (env, run arguments without --questions)."""
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path), **standin.env()}
    recorded_demo_file(tmp_path, env)
    views = tmp_path / "views"
    views.mkdir()
    (views / "accounts.sql").write_text("CREATE VIEW v_accounts AS SELECT account_id, name FROM accounts;\n")
    for model in (BRAIN, *JUDGES):
        standin.set_default(model, steps.ok(latency_s=0.05))
    args = ["run", "brain-eval", "--brain", "AGT-902", "--catalog", "v28-2026Q2", "--trigger", "quarterly",
            "--reviewer", REVIEWER_ROLE, "--views-dir", str(views), "--concurrency", "1"]
    return env, args


def drawn_questions(faults, low: int, high: int) -> str:
    ids = sorted(QUESTIONS.values())
    return ",".join(sorted(faults.sample(ids, faults.randint(low, high))))


class Asked:
    """What was stored when each kill landed, to hold the stand-in's later requests against."""

    def __init__(self, admin, standin):
        self.admin, self.standin = admin, standin
        self.kills: list[tuple[float, set, set]] = []

    def killed(self) -> None:
        """Read in one snapshot, once the killed process's sessions are gone (a COMMIT it sent just
        before the kill is then either stored or never will be)."""
        wait_until(lambda: one(self.admin, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                           "AND pid <> pg_backend_pid() AND backend_type = 'client backend'") == 0)
        at = time.monotonic()
        answered, drafted = self.admin.execute(
            "SELECT (SELECT coalesce(array_agg(question_id), '{}') FROM evalledger.brain_eval_harness_answer), "
            "(SELECT coalesce(array_agg(question_id || ' ' || split_part(model, ':', 2)), '{}') "
            "FROM evalledger.brain_eval_judge_suggestion)").fetchone()
        self.kills.append((at, set(answered), {tuple(d.split(" ")) for d in drafted}))

    def assert_nothing_stored_was_asked_again(self) -> None:
        for at, answered, drafted in self.kills:
            later = [r for r in self.standin.requests if r.received_at > at]
            again = [question_of(r) for r in later if r.model == BRAIN and question_of(r) in answered]
            assert again == [], f"the brain was asked again what it had answered: {again}"
            again = [(question_of(r), r.model) for r in later if (question_of(r), r.model) in drafted]
            assert again == [], f"a judge was asked again what it had drafted: {again}"

    def assert_the_last_resumption_asked_only_the_rest(self, questions: int) -> None:
        """A kill may cost the calls in flight and the replies not yet stored; the same command
        again asks each question without an answer, and each judge without a draft, once."""
        since = self.kills[-1][0] if self.kills else 0.0
        answered = self.kills[-1][1] if self.kills else set()
        brain = Counter(question_of(r) for r in self.standin.requests_for(BRAIN) if r.received_at > since)
        assert set(brain.values()) <= {1} and len(brain) == questions - len(answered), (brain, answered)
        for model in JUDGES:
            drafts = Counter(question_of(r) for r in self.standin.requests_for(model) if r.received_at > since)
            assert set(drafts.values()) <= {1}, (model, drafts)


def assert_one_run_stored_once(admin, questions: int) -> str:
    [(run_id,)] = admin.execute("SELECT eval_run_id::text FROM evalledger.brain_eval_log").fetchall()
    assert admin.execute("SELECT count(*), count(DISTINCT question_id) FROM evalledger.brain_eval_harness_answer"
                         ).fetchone() == (questions, questions)
    assert one(admin, "SELECT count(*) FROM evalledger.brain_analysis_log") == questions
    assert admin.execute("SELECT count(*) = count(DISTINCT (question_id, model)) "
                         "FROM evalledger.brain_eval_judge_suggestion").fetchone() == (True,)
    return run_id


def test_a_harness_run_killed_at_random_resumes_and_asks_nothing_stored_again(brain, admin, standin, faults):
    env, args = brain
    questions = drawn_questions(faults, 3, 7)
    n = questions.count(",") + 1
    argv = [str(SCRIPT), *args, "--questions", questions]
    asked = Asked(admin, standin)
    for _ in range(faults.randint(1, 3)):
        phase = faults.choice(["answers", "drafts", "time"])
        if phase == "answers":
            at = one(admin, "SELECT count(*) FROM evalledger.brain_eval_harness_answer") + faults.randint(0, 2)
            when = lambda: one(admin, "SELECT count(*) FROM evalledger.brain_eval_harness_answer") >= at  # noqa: E731
        elif phase == "drafts":
            at = one(admin, "SELECT count(*) FROM evalledger.brain_eval_judge_suggestion") + faults.randint(1, 4)
            when = lambda: one(admin, "SELECT count(*) FROM evalledger.brain_eval_judge_suggestion") >= at  # noqa: E731
        else:
            after = time.monotonic() + faults.uniform(0.3, 4.0)
            when = lambda: time.monotonic() >= after  # noqa: E731
        began = time.monotonic()
        if killed_when(argv, _environment(env), when):
            asked.killed()
        print(f"killed at {phase}: {len(asked.kills)} kills so far, {time.monotonic() - began:.1f}s, "
              f"{len(standin.requests_for(BRAIN))} brain requests, {len(standin.requests)} in all")
    done = run_cli(*args, "--questions", questions, env=env)
    assert done.code == 0, done.out + done.err
    assert_one_run_stored_once(admin, n)
    asked.assert_nothing_stored_was_asked_again()
    asked.assert_the_last_resumption_asked_only_the_rest(n)
    again = run_cli(*args, "--questions", questions, env=env)
    assert again.code == 0 and f"answers: {n} of {n} stored ({n} before this resumption); 0 asked now" in again.out
    assert_verified(env)


def test_two_runners_of_one_run_ask_each_question_once(brain, admin, standin, faults):
    """A second process on the same run, started at a drawn moment (before the first has made the
    run, or while it asks), stops at once without asking anything (exit 3, one line saying why and
    what to do), or finds the run done; the same command again then resumes it."""
    env, args = brain
    questions = drawn_questions(faults, 3, 6)
    n = questions.count(",") + 1
    argv = [str(SCRIPT), *args, "--questions", questions]
    full = {**os.environ, **_environment(env)}
    first = subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if faults.random() < 0.5:  # at a drawn moment: before the first has made the run, or after
        pause = faults.uniform(0.0, 1.5)
        time.sleep(pause)
        second = subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        results = [(p.returncode, out, err) for p in (first, second) for out, err in [p.communicate(timeout=180)]]
    else:  # while the first asks: its next answers wait until the second has ended
        began = time.monotonic()
        while one(admin, "SELECT count(*) FROM evalledger.brain_eval_harness_answer") < 1 and first.poll() is None:
            time.sleep(0.02)
        pause = time.monotonic() - began
        standin.gate = threading.Event()
        try:
            second = subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, err = second.communicate(timeout=180)
            first_running = first.poll() is None
        finally:
            standin.gate.set()
        results = [(p.returncode, out, err) for p in (first,) for out, err in [p.communicate(timeout=180)]]
        results.append((second.returncode, out, err))
        assert second.returncode == 3 or not first_running, results
    codes = sorted(code for code, _, _ in results)
    print(f"the second began after {pause:.2f}s; exits {[code for code, _, _ in results]}")
    assert codes in ([0, 0], [0, 3]), results
    run_id = assert_one_run_stored_once(admin, n)
    for code, out, err in results:
        if code == 3:
            refused = BEING_RUN.fullmatch(err)
            assert refused and refused.group(1) == run_id, err
    brain_asked = Counter(question_of(r) for r in standin.requests_for(BRAIN))
    assert len(brain_asked) == n and set(brain_asked.values()) == {1}, brain_asked
    for model in JUDGES:
        drafts = Counter(question_of(r) for r in standin.requests_for(model))
        assert set(drafts.values()) <= {1}, (model, drafts)
    again = run_cli(*args, "--questions", questions, env=env)
    assert again.code == 0 and "0 asked now" in again.out, again.out + again.err
    assert_verified(env)


def test_review_finish_killed_at_random_signs_off_once(brain, admin, faults):
    env, args = brain
    questions = drawn_questions(faults, 2, 5)
    started = run_cli(*args, "--questions", questions, "--answers", "recorded", "--judges", "recorded", env=env)
    assert started.code == 0, started.err
    run_id = started.out.split()[1]
    # The demo reviewer's numbers for these questions only.
    chosen = set(questions.split(","))
    numbers = [line for line in review_path().read_text().splitlines() if json.loads(line)["question_id"] in chosen]
    mine = env["EVALLEDGER_HOME"] + "/review.jsonl"
    with open(mine, "w") as handle:
        handle.write("\n".join(numbers) + "\n")
    scored = run_cli("review", "score", run_id, "--from", mine, "--as", REVIEWER_ROLE, env=env)
    assert scored.code == 0, scored.err
    hours = str(faults.choice([0.5, 1.25, 3.5]))
    notes = [arg for dimension, text in DEMO_NOTES.items() for arg in ("--note", f"{dimension}={text}")]
    finish = ["review", "finish", run_id, "--hours", hours, *notes, "--as", REVIEWER_ROLE]
    for _ in range(faults.randint(1, 3)):
        if faults.random() < 0.5:  # as soon as the sign-off is committed, before the command says so
            when = lambda: one(admin, "SELECT count(*) FROM evalledger.brain_eval_run_review") >= 1  # noqa: E731
        else:
            after = time.monotonic() + faults.uniform(0.05, 1.0)
            when = lambda: time.monotonic() >= after  # noqa: E731
        killed_when([str(SCRIPT), *finish], _environment(env), when)
    for _ in range(2):  # the reviewer cannot tell whether it committed, and signs off again
        again = run_cli(*finish, env=env)
        assert (again.code, again.err) == (0, ""), again.out + again.err
    [(signed_hours, signed_notes)] = admin.execute(
        "SELECT reviewer_hours_spent, calibration_notes FROM evalledger.brain_eval_run_review").fetchall()
    assert (float(signed_hours), signed_notes) == (float(hours), DEMO_NOTES)
    assert_verified(env)


def test_ledger_seal_killed_at_random_seals_every_entry_once(brain, admin, faults):
    env, args = brain
    for _ in range(faults.randint(2, 4)):
        # Entries to seal: a catalog's worth of recorded answers and drafts, in a run of its own.
        questions = drawn_questions(faults, 1, 4)
        started = run_cli(*args, "--questions", questions, "--answers", "recorded", "--judges", "recorded", env=env)
        assert started.code == 0, started.err
        run_id = started.out.split()[1]
        assert run_cli("brain-eval", "cancel", run_id, "--reason", "a fault campaign's entries", env=env).code in (0, 1)
        after = time.monotonic() + faults.uniform(0.0, 1.0)
        killed_when([str(SCRIPT), "ledger", "seal"], _environment(env), lambda: time.monotonic() >= after)
    sealed = run_cli("ledger", "seal", env=env)
    assert sealed.code == 0, sealed.err
    # The blocks cover the journal's transactions without a gap or an overlap, each entry once.
    assert admin.execute("SELECT bool_and(lo_txid = previous_hi) FROM (SELECT lo_txid, lag(hi_txid) OVER "
                         "(ORDER BY block_id) AS previous_hi FROM evalledger.ledger_block) b "
                         "WHERE previous_hi IS NOT NULL").fetchone()[0] in (True, None)
    assert one(admin, "SELECT sum(entry_count) FROM evalledger.ledger_block") == \
        one(admin, "SELECT count(*) FROM evalledger.ledger_journal")
    assert run_cli("ledger", "seal", env=env).out.startswith("nothing to seal")
    assert_verified(env)
