"""Policy follows the prompt, not the label. The lever mapping (its criterion, the
question needs, the harness's lever count) and brain legal holds follow every brain that owns the
run's prompt (brain_prompt: it registered the prompt or carried it in an analysis), and no brain
takes a prompt on while a run of it under another brain is open. Tried as the runner's and the
owner's own logins, racing in two sessions where the rule is a lock (docs/guards.md, section 18)."""

from __future__ import annotations

import json

import pytest
from psycopg import errors

from evalledger.suites.brain_eval import brains, catalog, store
from tests.builders import open_harness_run, prompt_hash, question, record_run, run_fields
from tests.conftest import OTHER_REVIEWER_ROLE
from tests.db.insider_logins import LOGINS, in_thread, logins, refused, wait_until_waiting  # noqa: F401 (fixture)
from tests.db.test_retention import age_run, purge_committed

AGT_902_PROMPT = "You are AGT-902, the action brain. Propose actions only from your levers.\n"
P = prompt_hash(AGT_902_PROMPT)
LEVERS = ["rep_coaching", "save_play"]
MODEL = "anthropic:claude-sonnet-4-6"
DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))


@pytest.fixture
def adopted(logins):
    """AGT-902's prompt, with its levers; AGT-901 registers the same text too (no run of it is open)."""
    owner = logins("owner")
    brains.add(owner, "AGT-902", MODEL, AGT_902_PROMPT, None, LEVERS)
    brains.add(owner, "AGT-901", MODEL, AGT_902_PROMPT)
    return owner


def outside_the_levers(number, row):
    row["proposed_actions"] = [{"action_type": "discount_50_percent"}] if number == 2 else [{"action_type": "save_play"}]
    row["lever_mapping_violations"] = 1 if number == 2 else 0


def test_agt_902s_prompt_under_agt_901s_label_is_held_to_agt_902s_levers(admin, logins, adopted, reviewer_id):
    """A recorded run labelled AGT-901 carrying AGT-902's prompt: its actions are counted against
    AGT-902's levers, and the lever criterion (AGT-902's) decides. Before: pass."""
    decided = record_run(logins("runner"), reviewer_id, count=3, system_prompt_hash=P, bend=outside_the_levers,
                         registry=admin, review_conn=admin)
    assert decided.brain_under_test == "AGT-901"
    assert admin.execute("SELECT question_id, lever_mapping_violations FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s ORDER BY 1", (decided.eval_run_id,)).fetchall() == [
        ("EVAL-Q01", 0), ("EVAL-Q02", 1), ("EVAL-Q03", 0)]
    assert (decided.decision, decided.decision_rationale) == (
        "fail", "Fail: hard criteria missed: lever mapping 33.3pp below 100%.")
    # The auditor's recompute re-derives the run and its question rows by the same rule (the recompute's v1 and v2
    # re-derived them by the label's: a pass, EVAL-Q02 passed, both reported as rewritten).
    assert logins("auditor").execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    # Claiming none is refused: the count is the database's, from the answer (the run, written in one
    # transaction, leaves nothing).
    def claim_none(number, row):
        outside_the_levers(number, row)
        row["lever_mapping_violations"] = 0
    runner = logins("runner")
    with pytest.raises(errors.CheckViolation) as caught:
        with runner.transaction():
            record_run(runner, reviewer_id, count=3, system_prompt_hash=P, bend=claim_none, registry=admin,
                       review=False, complete=False)
    assert caught.value.diag.constraint_name == "brain_eval_question_score_automatic_scores_computed"
    assert caught.value.diag.message_primary == ("evalledger: brain_eval_question_score.lever_mapping_violations 0 "
                                                 "(the answer gives 1): computed by the database from the answer")
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 1


def test_a_harness_run_counts_the_prompts_levers_whatever_version_it_runs(admin, logins, adopted, reviewer_id):
    """The harness ran AGT-901's version of the prompt (no levers of its own): AGT-902's levers count."""
    owner, runner = logins("owner"), logins("runner")
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    run_id, version = open_harness_run(owner, runner, reviewer_id, ["EVAL-Q01", "EVAL-Q02"], "AGT-901", AGT_902_PROMPT)
    assert version.target_id == "AGT-901" and version.levers == []
    source = DEMO["questions"][0]["sources"][0]["id"]
    claim = {"text": "x", "numerical": True, "source_ids": [source], "confidence": "high"}
    for question_id, action in (("EVAL-Q01", "discount_50_percent"), ("EVAL-Q02", "rep_coaching")):
        analysis = store.record_analysis(runner, brain="AGT-901", model_id=version.model_id, system_prompt_hash=P,
                                         question_id=question_id, question="q", output="o", claims=[claim],
                                         proposed_actions=[{"action_type": action}], token_cost_usd=0)
        runner.execute("INSERT INTO evalledger.brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                       "VALUES (%s, %s, %s, false)", (run_id, question_id, analysis))
    assert runner.execute("SELECT question_id, lever_mapping_violations FROM evalledger.brain_eval_harness_answer "
                          "WHERE eval_run_id = %s ORDER BY 1", (run_id,)).fetchall() == [("EVAL-Q01", 1), ("EVAL-Q02", 0)]


def test_the_question_needs_follow_the_prompts_brains(admin, adopted):
    """A question row of an AGT-901-labelled run of AGT-902's prompt needs its lever count."""
    brains_of = admin.execute("SELECT evalledger.run_brains_v1('AGT-901', %s)", (P,)).fetchone()[0]
    assert brains_of == ["AGT-901", "AGT-902"]
    needs = admin.execute(
        "SELECT evalledger.question_needs_v2(ROW(NULL, NULL, 'EVAL-Q05', NULL, 'coverage_gap', false, 1, 0, 4, NULL, 1, "
        "NULL, '{}'::jsonb, 4, NULL, NULL, now(), now(), NULL)::evalledger.brain_eval_question_score, r.definition, %s), "
        "evalledger.question_needs_v2(ROW(NULL, NULL, 'EVAL-Q05', NULL, 'coverage_gap', false, 1, 0, 4, NULL, 1, "
        "NULL, '{}'::jsonb, 4, NULL, NULL, now(), now(), NULL)::evalledger.brain_eval_question_score, r.definition, "
        "ARRAY['AGT-901']) FROM evalledger.rubric r WHERE r.rubric_id = evalledger.active_rubric_v1('brain-eval')",
        (brains_of,)).fetchone()
    assert needs == (["lever_mapping_violations"], [])


def test_a_hold_on_agt_902_keeps_a_run_of_its_prompt_under_any_label(admin, logins, adopted, reviewer_id):
    run_id = record_run(logins("runner"), reviewer_id, count=2, system_prompt_hash=P, registry=admin,
                        review_conn=admin).eval_run_id
    age_run(admin, run_id, "timezone('UTC', timezone('UTC', now()) - interval '8 years')")
    owner = logins("owner")
    hold = owner.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-902', 'matter') "
                         "RETURNING hold_id").fetchone()[0]
    plan = {r[0]: r[1:] for r in logins("auditor").execute("SELECT * FROM evalledger.retention_plan_v2()")}
    assert plan["brain_eval_log"][:4] == (0, 0, 0, 1)
    assert plan["brain_eval_log"][4] == f"hold {hold} (brain AGT-902): 1"
    assert purge_committed(admin) == []
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()[0] == 1
    owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold,))
    assert ("brain_eval_log", 1, run_id, None) in purge_committed(admin)


Q = prompt_hash("You are AGT-901, the pipeline brain.\n")


@pytest.fixture
def open_901_run(admin, logins, reviewer_id):
    """An open run labelled AGT-901 of AGT-901's own prompt Q (registered by AGT-901 only)."""
    brains.add(logins("owner"), "AGT-901", MODEL, "You are AGT-901, the pipeline brain.\n")
    return record_run(logins("runner"), reviewer_id, count=1, system_prompt_hash=Q, registry=admin, review=False,
                      complete=False)


TAKES_ON = r"evalledger: AGT-902 cannot take on system prompt {} while a run of it under another brain is open"


def test_no_brain_takes_on_the_prompt_of_an_open_run_of_another(admin, logins, open_901_run, reviewer_id):
    """A second brain registering (or carrying in an analysis) the prompt of an open run would make
    that run's reviewer, if it tunes the second brain, no longer independent: refused until the run
    completes."""
    owner, runner = logins("owner"), logins("runner")
    with refused(admin, errors.CheckViolation, TAKES_ON.format(Q), "brain_prompt_no_open_run_of_another_brain"):
        brains.add(owner, "AGT-902", MODEL, "You are AGT-901, the pipeline brain.\n", None, LEVERS)
    with refused(admin, errors.CheckViolation, TAKES_ON.format(Q), "brain_prompt_no_open_run_of_another_brain"):
        store.record_analysis(runner, brain="AGT-902", origin="production", model_id="m", system_prompt_hash=Q,
                              question="q", output="o", token_cost_usd="0.01")
    # The run's own brain may carry its prompt in production meanwhile.
    store.record_analysis(runner, brain="AGT-901", origin="production", model_id="m", system_prompt_hash=Q,
                          question="q", output="o", token_cost_usd="0.01")
    # Once the run is decided, the prompt may become AGT-902's too.
    from tests.builders import review_run
    review_run(admin, reviewer_id, open_901_run, {"EVAL-Q01": {k: v for k, v in question(1).items() if k in (
        "hallucinations_detected", "total_claims", "staleness_correctly_recognized", "diagnosis_accuracy_score",
        "narrative_coherence_rating")}})
    store.complete_run(runner, open_901_run)
    brains.add(owner, "AGT-902", MODEL, "You are AGT-901, the pipeline brain.\n", None, LEVERS)
    assert admin.execute("SELECT target_id FROM evalledger.brain_prompt WHERE system_prompt_hash = %s ORDER BY 1",
                         (Q,)).fetchall() == [("AGT-901",), ("AGT-902",)]


def test_a_registration_racing_a_run_waits_for_it_and_is_refused(admin, logins, reviewer_id):
    """Two sessions: the runner's run admission of Q (uncommitted) holds Q's registry rows; the
    owner's AGT-902 version of Q waits, then sees the open run and is refused."""
    owner = logins("owner")
    brains.add(owner, "AGT-901", MODEL, "You are AGT-901, the pipeline brain.\n")
    runner = logins("runner", autocommit=False)
    store.start_run(runner, question_count=1, reviewer_user_id=reviewer_id, **run_fields(system_prompt_hash=Q))
    registering = logins("owner")
    thread, outcome = in_thread(lambda: brains.add(registering, "AGT-902", MODEL, "You are AGT-901, the pipeline brain.\n"))
    wait_until_waiting(admin, LOGINS["owner"][0])
    runner.commit()
    thread.join(20)
    assert isinstance(outcome.get("error"), errors.CheckViolation), outcome
    assert outcome["error"].diag.constraint_name == "brain_prompt_no_open_run_of_another_brain"


def test_a_run_racing_a_registration_waits_for_it_and_asks_the_new_brains_tuners(admin, logins, reviewers):
    """The other way round: AGT-902's version of Q is being registered (uncommitted) when a run of Q
    is admitted for a reviewer who tunes AGT-902: the run waits, then finds the reviewer dependent."""
    brains.add(logins("owner"), "AGT-901", MODEL, "You are AGT-901, the pipeline brain.\n")
    tuner = reviewers[OTHER_REVIEWER_ROLE]
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)", (tuner,))
    owner = logins("owner", autocommit=False)
    brains.add(owner, "AGT-902", MODEL, "You are AGT-901, the pipeline brain.\n")
    runner = logins("runner")
    thread, outcome = in_thread(lambda: store.start_run(runner, question_count=1, reviewer_user_id=tuner,
                                                        **run_fields(system_prompt_hash=Q)))
    wait_until_waiting(admin, LOGINS["runner"][0])
    owner.commit()
    thread.join(20)
    assert isinstance(outcome.get("error"), errors.CheckViolation), outcome
    assert outcome["error"].diag.constraint_name == "brain_eval_log_reviewer_independent"
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 0
