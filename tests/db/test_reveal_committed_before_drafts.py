"""What a rollback erases. A reviewer reads a question's judge drafts only in a
transaction later than the one that recorded the reveal (brain_eval_suggestion_shown.shown_txid),
so a reveal that is rolled back showed nothing, and the trail of every value entered after a reveal
says so. Tried as the reviewer's own login (docs/guards.md, section 17)."""

from __future__ import annotations

import json

import pytest
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import catalog, store
from tests.builders import open_harness_run
from tests.db.insider_logins import logins  # noqa: F401 (fixture)

DRAFT = {"total_claims": 3, "unsupported_claims": ["coverage 2.1x"], "diagnosis_accuracy": 0.5,
         "staleness_recognised": None, "notes": "n"}
DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
SOURCE = DEMO["questions"][0]["sources"][0]["id"]


@pytest.fixture
def drafted(admin, logins, reviewer_id):
    """An open harness run of EVAL-Q01 with the brain's answer and one judge's draft on it."""
    owner, runner = logins("owner"), logins("runner")
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    run_id, version = open_harness_run(owner, runner, reviewer_id, ["EVAL-Q01"])
    claims = [{"text": "x", "numerical": True, "source_ids": [SOURCE], "confidence": "high"}] * 3
    analysis = store.record_analysis(runner, brain=version.target_id, model_id=version.model_id,
                                     system_prompt_hash=version.system_prompt_hash, question_id="EVAL-Q01",
                                     question="q", output="o", claims=claims, token_cost_usd=0)
    runner.execute("INSERT INTO evalledger.brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                   "VALUES (%s, 'EVAL-Q01', %s, false)", (run_id, analysis))
    runner.execute("INSERT INTO evalledger.brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, "
                   "response_json) VALUES (%s, 'EVAL-Q01', 'openai:gpt-4o', false, %s)", (run_id, Jsonb(DRAFT)))
    return run_id


READ = "SELECT count(*) FROM evalledger.brain_eval_judge_suggestion WHERE eval_run_id = %s AND question_id = 'EVAL-Q01'"
SHOW = "SELECT evalledger.brain_eval_show_suggestions_v2(%s, 'EVAL-Q01')"


def shown(admin, run_id) -> int:
    return admin.execute("SELECT count(*) FROM evalledger.brain_eval_suggestion_shown WHERE eval_run_id = %s",
                         (run_id,)).fetchone()[0]


def test_a_reveal_rolled_back_showed_nothing(admin, logins, drafted):
    reviewer = logins("reviewer", autocommit=False)
    assert reviewer.execute(SHOW, (drafted,)).fetchone()[0] is not None
    assert reviewer.execute(READ, (drafted,)).fetchone()[0] == 0  # not in the revealing transaction
    reviewer.execute("SAVEPOINT a")  # nor after the reveal moved into a subtransaction and back
    reviewer.execute(SHOW, (drafted,))
    reviewer.execute("RELEASE SAVEPOINT a")
    assert reviewer.execute(READ, (drafted,)).fetchone()[0] == 0
    reviewer.rollback()
    assert shown(admin, drafted) == 0
    # A value entered now is entered blind, and the trail says so.
    store.score_question(reviewer, drafted, "EVAL-Q01", {"total_claims": 3, "hallucinations_detected": 0})
    reviewer.commit()
    assert admin.execute("SELECT DISTINCT suggestions_shown FROM evalledger.brain_eval_review_entry "
                         "WHERE eval_run_id = %s", (drafted,)).fetchall() == [(False,)]


def test_a_reveal_a_subtransaction_made_is_not_read_in_its_transaction(admin, logins, drafted):
    reviewer = logins("reviewer", autocommit=False)
    reviewer.execute("SAVEPOINT a")
    reviewer.execute(SHOW, (drafted,))
    assert reviewer.execute(READ, (drafted,)).fetchone()[0] == 0
    reviewer.execute("RELEASE SAVEPOINT a")
    assert reviewer.execute(READ, (drafted,)).fetchone()[0] == 0
    reviewer.commit()
    assert reviewer.execute(READ, (drafted,)).fetchone()[0] == 1  # a later transaction reads them
    reviewer.commit()


def test_a_committed_reveal_shows_the_drafts_and_marks_what_follows(admin, logins, drafted):
    reviewer = logins("reviewer")  # autocommit: the reveal commits in its own transaction
    reviewer.execute(SHOW, (drafted,))
    assert shown(admin, drafted) == 1
    assert reviewer.execute(READ, (drafted,)).fetchone()[0] == 1
    store.score_question(reviewer, drafted, "EVAL-Q01", {"total_claims": 3, "hallucinations_detected": 0})
    assert admin.execute("SELECT DISTINCT suggestions_shown FROM evalledger.brain_eval_review_entry "
                         "WHERE eval_run_id = %s", (drafted,)).fetchall() == [(True,)]
    # What was shown is never rewritten, not even by the superuser.
    for statement in ("UPDATE evalledger.brain_eval_suggestion_shown SET shown_txid = 1",
                      "DELETE FROM evalledger.brain_eval_suggestion_shown"):
        with pytest.raises(Exception, match="append-only"):
            admin.execute(statement)
    assert shown(admin, drafted) == 1


def test_nobody_records_a_reveal_but_the_runs_reviewer(admin, logins, drafted, reviewers):
    for role in ("runner", "revops", "auditor", "owner"):
        conn = logins(role)
        with pytest.raises(Exception, match="permission denied for"):
            conn.execute(SHOW, (drafted,))
        with pytest.raises(Exception, match="permission denied for table brain_eval_suggestion_shown"):
            conn.execute("INSERT INTO evalledger.brain_eval_suggestion_shown (eval_run_id, question_id, "
                         "reviewer_user_id, shown_by, run_created_at, shown_txid) "
                         "SELECT eval_run_id, 'EVAL-Q01', reviewer_user_id, 'x', created_at, 1 "
                         "FROM evalledger.brain_eval_log")
    assert shown(admin, drafted) == 0
