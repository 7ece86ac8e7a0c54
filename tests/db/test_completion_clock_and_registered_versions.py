"""Issue 37, item 8: a run's completion time, what a reviewer was shown and which version a run is
of, at their roots. Each attempt as the login that got through on b6420f8, and its neighbours: a
crafted TimeZone, the other suites' completions, isolation levels (docs/guards.md, section 29)."""

from __future__ import annotations

import pytest
from psycopg import errors

from evalledger.suites.brain_eval import brains, store
from tests.builders import prompt_hash, record_run, run_fields, start_run
from tests.db.insider_logins import logins, refused, set_zone, zone_that_moves  # noqa: F401 (fixture)
from tests.db.test_reveal_committed_before_drafts import READ, SHOW, drafted  # noqa: F401 (fixture)

PROMPT_A = "You are brain A. Answer from the views.\n"


def completion(admin, run_id):
    """(started_at, completed_at, the latest time a score or sign-off of the run was recorded)."""
    return admin.execute(
        "SELECT l.started_at, l.completed_at, greatest("
        " (SELECT max(e.entered_at) FROM evalledger.brain_eval_review_entry e WHERE e.eval_run_id = l.eval_run_id),"
        " (SELECT max(r.created_at) FROM evalledger.brain_eval_run_review r WHERE r.eval_run_id = l.eval_run_id)) "
        "FROM evalledger.brain_eval_log l WHERE l.eval_run_id = %s", (run_id,)).fetchone()


def test_a_completion_time_the_runner_gives_is_refused(admin, logins, reviewer_id):
    """brain_eval_complete_v1(run, started_at + 2 minutes) was accepted: the run decided "two
    minutes in" on scores and a sign-off entered later. Now refused, whatever the time; the run
    completes at the database's clock, after what it was decided on, in any TimeZone."""
    runner = logins("runner")
    run_id = record_run(runner, reviewer_id, count=3, complete=False, registry=admin, review_conn=admin)
    for given in ("started_at + interval '2 minutes'", "now()", "'infinity'", "'2001-01-01'"):
        with refused(admin, errors.InsufficientPrivilege,
                     r"evalledger: completed_at is the database's clock at completion, not the caller's: "
                     r"pass NULL, not .*"):
            runner.execute(f"SELECT evalledger.brain_eval_complete_v1(l.eval_run_id, {given}) "
                           "FROM evalledger.brain_eval_log l WHERE l.eval_run_id = %s", (run_id,))
    assert completion(admin, run_id)[1] is None
    zone, _ = zone_that_moves(runner, "1 day")
    set_zone(runner, zone)
    before = admin.execute("SELECT clock_timestamp()").fetchone()[0]
    store.complete_run(runner, run_id)
    after = admin.execute("SELECT clock_timestamp()").fetchone()[0]
    started, completed, last_entry = completion(admin, run_id)
    assert before <= completed <= after and last_entry <= completed and started <= completed


def test_a_completion_time_is_the_databases_even_for_the_superuser(admin, logins, reviewer_id):
    """The root is the trigger every suite's run table shares: an UPDATE naming a time (the
    superuser's: no role holds UPDATE) completes at the database's clock."""
    run_id = record_run(logins("runner"), reviewer_id, count=3, complete=False, registry=admin, review_conn=admin)
    before = admin.execute("SELECT clock_timestamp()").fetchone()[0]
    admin.execute("UPDATE evalledger.brain_eval_log SET completed_at = started_at + interval '2 minutes' "
                  "WHERE eval_run_id = %s", (run_id,))
    assert completion(admin, run_id)[1] >= before


def test_a_run_of_a_prompt_is_admitted_only_as_a_registered_version_of_it(admin, logins, reviewer_id):
    """A recorded run of prompt A, registered only under claude-sonnet-4-6 and no label, was admitted
    as claude-opus-4-7 labelled pipeline_brain_v3 (AGT-902's label). Refused as the runner; each of
    model and label alone too; the registered pair is admitted."""
    owner, runner = logins("owner"), logins("runner")
    brains.add(owner, "AGT-901", "anthropic:claude-sonnet-4-6", PROMPT_A)
    hash_a = prompt_hash(PROMPT_A)
    for model, label in (("claude-opus-4-7", "pipeline_brain_v3"), ("claude-opus-4-7", None),
                         ("claude-sonnet-4-6", "pipeline_brain_v3")):
        shown = label or r"\(none\)"
        with refused(admin, errors.ForeignKeyViolation,
                     rf"evalledger: AGT-901 has no registered version with system prompt {hash_a}, "
                     rf"model {model} and label {shown}", "brain_eval_log_version_registered"):
            start_run(runner, registry=admin, question_count=3, reviewer_user_id=reviewer_id,
                      **run_fields("AGT-901", system_prompt_hash=hash_a, model_id=model,
                                   system_prompt_version_label=label))
    assert start_run(runner, registry=admin, question_count=3, reviewer_user_id=reviewer_id,
                     **run_fields("AGT-901", system_prompt_hash=hash_a))


@pytest.mark.parametrize("how", ["begin", "default_transaction_isolation"])
@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_a_reveal_another_session_committed_is_never_laundered_by_a_snapshot(admin, logins, drafted, how, isolation):
    """The reviewer's first session takes a REPEATABLE READ snapshot; a second session of the same
    reviewer reveals the drafts, commits and reads them; the first then entered the judge's count
    and the trail said suggestions_shown = false. Now the entry is refused under any snapshot older
    than the statement; under READ COMMITTED it is recorded as shown."""
    if how == "begin":
        first = logins("reviewer", autocommit=False)
        first.execute(f"BEGIN ISOLATION LEVEL {isolation.upper()}")
    else:
        first = logins("reviewer", autocommit=False,
                       options=f"-c default_transaction_isolation={isolation.replace(' ', chr(92) + ' ')}")
    assert first.execute(READ, (drafted,)).fetchone()[0] == 0  # the snapshot is taken
    second = logins("reviewer")
    second.execute(SHOW, (drafted,))
    assert second.execute(READ, (drafted,)).fetchone()[0] == 1
    with refused(admin, errors.InvalidTransactionState,
                 f"evalledger: a reviewer's entry \\(whether the judges' suggestions were shown\\) runs under "
                 f"READ COMMITTED, not {isolation.upper()}"):
        store.score_question(first, drafted, "EVAL-Q01", {"total_claims": 3, "hallucinations_detected": 0})
    first.rollback()
    first.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
    store.score_question(first, drafted, "EVAL-Q01", {"total_claims": 3, "hallucinations_detected": 0})
    first.commit()
    assert admin.execute("SELECT DISTINCT suggestions_shown FROM evalledger.brain_eval_review_entry "
                         "WHERE eval_run_id = %s", (drafted,)).fetchall() == [(True,)]
    # And no agreement figure counts the pair as blind.
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_agreement_pairs_v1(ARRAY[%s]::uuid[]) "
                         "WHERE unsupported_blind OR claims_blind OR diagnosis_blind", (drafted,)).fetchone()[0] == 0


VERDICTS = "SELECT question_passed FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s"


def test_the_runner_reads_only_the_committed_verdicts_of_an_open_run(admin, logins, drafted):
    """Decided (issue 37, item 5; docs/guards.md section 22): the runner reads question_passed of an
    open run it records, but only as committed. A reviewer's score held in an open transaction,
    which it could roll back unseen, shows the runner nothing; once committed, the verdict is read
    and the entry is on the trail: no probe through the runner leaves no trace."""
    runner, reviewer = logins("runner"), logins("reviewer", autocommit=False)
    assert runner.execute(VERDICTS, (drafted,)).fetchall() == [(None,)]
    scores = {"total_claims": 3, "hallucinations_detected": 2, "narrative_coherence_rating": 4,
              "diagnosis_accuracy_score": 1.0}
    store.score_question(reviewer, drafted, "EVAL-Q01", scores)
    assert runner.execute(VERDICTS, (drafted,)).fetchall() == [(None,)]
    reviewer.rollback()
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s",
                         (drafted,)).fetchone()[0] == 0
    assert store.score_question(reviewer, drafted, "EVAL-Q01", scores) == []
    reviewer.commit()
    verdict = admin.execute(VERDICTS, (drafted,)).fetchall()
    assert verdict == [(False,)]  # two hallucinations: the question fails
    assert runner.execute(VERDICTS, (drafted,)).fetchall() == verdict
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s",
                         (drafted,)).fetchone()[0] == len(scores)
