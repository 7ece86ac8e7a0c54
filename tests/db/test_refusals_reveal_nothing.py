"""What errors and helpers reveal. The independence refusal names no brain and no
tuner; a definer helper answers only about what its caller may read (caller_reads_v1); a refusal
reads the same whether the thing exists, is complete, or is one the caller cannot see. Tried as
the runner's and the reviewers' own logins (docs/guards.md, section 22)."""

from __future__ import annotations

import contextlib
import json
import uuid

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import brains, catalog, store
from tests.builders import BRAIN_PROMPTS, open_harness_run, prompt_hash, record_run, register_prompt, run_fields
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE
from tests.db.insider_logins import (  # noqa: F401 (fixture)
    in_thread, logins, refusal_of, row_counts, set_zone, wait_until_waiting, zone_that_moves)
from tests.db.test_retention import age_run, set_clock

COLD = "timezone('UTC', timezone('UTC', now()) - interval '30 months')"
DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def test_the_independence_refusal_names_no_brain_and_no_tuner(admin, logins, reviewers):
    """AGT-901 and AGT-902 both own the prompt; the reviewer tunes one of them. Whichever, the
    runner learns only that this reviewer may not review this prompt: not whose tuner they are."""
    shared = "You are the shared brain.\n"
    owner = logins("owner")
    for brain in ("AGT-901", "AGT-902"):
        brains.add(owner, brain, "anthropic:claude-sonnet-4-6", shared)
    runner = logins("runner")
    answers = set()
    for tuned, reviewer in (("AGT-901", reviewers[REVIEWER_ROLE]), ("AGT-902", reviewers[OTHER_REVIEWER_ROLE])):
        admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES (%s, %s)", (tuned, reviewer))
        before = row_counts(admin)
        sqlstate, message = refusal_of(runner, *store_run(reviewer, prompt_hash(shared)))
        assert row_counts(admin) == before
        answers.add((sqlstate, message.replace(str(reviewer), "<reviewer>")))
    assert answers == {("23514", "evalledger: reviewer <reviewer> is not independent of this run's system prompt")}


def store_run(reviewer, prompt):
    values = {**run_fields(system_prompt_hash=prompt), "question_count": 1, "reviewer_user_id": reviewer}
    return (f"INSERT INTO evalledger.brain_eval_log ({', '.join(values)}) VALUES ({', '.join(f'%({k})s' for k in values)})",
            values)


POLICY = "SELECT evalledger.brain_eval_question_policy_v2(%s, 'EVAL-Q01')"


@contextlib.contextmanager
def granted(admin, function: str, role: str):
    """EXECUTE on a helper no application role holds, for as long as a test needs it to try the
    helper's own check (the grant committed, so the role's own login sees it; revoked after)."""
    admin.execute(f"GRANT EXECUTE ON FUNCTION evalledger.{function} TO {role}")
    try:
        yield
    finally:
        admin.execute(f"REVOKE EXECUTE ON FUNCTION evalledger.{function} FROM {role}")


def test_the_question_policy_answers_only_about_a_run_the_caller_may_read(admin, logins, reviewers):
    """It read any run id for any reviewer. No role calls it now (the write path judges with the
    code role's rights, the recompute as its definer), and even a role granted it reads NULL for
    another reviewer's run, a cold run and a run that does not exist alike."""
    mine = record_run(admin, reviewers[REVIEWER_ROLE], count=1, complete=False, review=False)
    theirs = record_run(admin, reviewers[OTHER_REVIEWER_ROLE], count=1, complete=False, review=False)
    cold = record_run(admin, reviewers[REVIEWER_ROLE], count=1, complete=False, review=False)
    age_run(admin, cold, COLD)
    reviewer, runner = logins("reviewer"), logins("runner")
    with granted(admin, "brain_eval_question_policy_v2(uuid, text)", "evalledger_reviewer"), \
            granted(admin, "brain_eval_question_policy_v2(uuid, text)", "evalledger_runner"):
        assert reviewer.execute(POLICY, (mine,)).fetchone()[0]["brains"] == ["AGT-901"]
        for run in (theirs, cold, uuid.uuid4()):
            assert reviewer.execute(POLICY, (run,)).fetchone()[0] is None
        assert runner.execute(POLICY, (theirs,)).fetchone()[0] is not None  # the runner reads every hot run
        for run in (cold, uuid.uuid4()):
            assert runner.execute(POLICY, (run,)).fetchone()[0] is None
    for conn in (reviewer, runner):
        assert refusal_of(conn, POLICY, (mine,)) == ("42501", "permission denied for function brain_eval_question_policy_v2")


@pytest.fixture
def harness_runs(admin, logins, reviewer_id):
    """A hot and a cold open harness run of EVAL-Q01, an open run that is no harness run, and the
    analysis a runner would answer with."""
    owner = logins("owner")
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    hot, version = open_harness_run(owner, admin, reviewer_id, ["EVAL-Q01"])
    # Another prompt: one run of a brain, prompt and catalog is open at a time. Aged last, since
    # the next run of its brain would close it, past its deadline (docs/guards.md, section 31).
    cold, _ = open_harness_run(owner, admin, reviewer_id, ["EVAL-Q01"], prompt="You are the test brain, long ago.\n")
    plain = record_run(admin, reviewer_id, count=1, complete=False, review=False)
    age_run(admin, cold, COLD)
    return {"hot": hot, "cold": cold, "plain": plain, "missing": uuid.uuid4(), "version": version}


def answer(runner, run_id, version):
    claims = [{"text": "x", "numerical": True, "source_ids": [DEMO["questions"][0]["sources"][0]["id"]],
               "confidence": "high"}]
    analysis = store.record_analysis(runner, brain="AGT-901", model_id=version.model_id,
                                     system_prompt_hash=version.system_prompt_hash, question_id="EVAL-Q01",
                                     question="q", output="o", claims=claims, token_cost_usd=0)
    return ("INSERT INTO evalledger.brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
            "VALUES (%s, 'EVAL-Q01', %s, false)", (run_id, analysis))


def test_the_harness_refusals_read_the_same_for_a_cold_run_as_for_none(admin, logins, harness_runs):
    """Before, the runner learnt from the refusal whether a cold run it cannot read exists (and
    whether it was complete)."""
    runner = logins("runner")
    answers, suggestions, records = set(), set(), set()
    for name in ("cold", "plain", "missing"):
        run_id = harness_runs[name]
        before = row_counts(admin)
        sqlstate, message = refusal_of(runner, *answer(runner, run_id, harness_runs["version"]))
        answers.add((sqlstate, message.replace(str(run_id), "<run>")))
        sqlstate, message = refusal_of(
            runner, "INSERT INTO evalledger.brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, "
                    "response_json) VALUES (%s, 'EVAL-Q01', 'openai:gpt-4o', false, '{}')", (run_id,))
        suggestions.add((sqlstate, message.replace(str(run_id), "<run>")))
        sqlstate, message = refusal_of(
            runner, "INSERT INTO evalledger.brain_eval_harness_run (eval_run_id, brain_version_id, catalog_version, "
                    "question_ids, contracts, answers) SELECT %s, v.brain_version_id, 'v28-2026Q2', '{EVAL-Q01}', %s, "
                    "'live' FROM evalledger.brain_version v LIMIT 1",
            (run_id, Jsonb({"brain_view_contracts_hash": "c" * 64, "source": "s", "views": [{"name": "v"}]})))
        if name != "plain":  # a plain open run takes a harness record (this one's question count agrees)
            records.add((sqlstate, message.replace(str(run_id), "<run>")))
        assert row_counts(admin)["brain_eval_harness_answer"] == before["brain_eval_harness_answer"]
    assert answers == {("42501", "evalledger: no open harness run <run> takes answers")}
    assert suggestions == {("42501", "evalledger: no open harness run <run> takes suggestions")}
    assert records == {("42501", "evalledger: no open run <run> takes a harness record")}
    # The hot harness run takes its answer.
    runner.execute(*answer(runner, harness_runs["hot"], harness_runs["version"]))


def takes_run(conn, seed):
    values = {"corpus_source": "db", "sample_limit": 10, "seed": seed, "n_takes": 3, "corpus_sha8": f"{seed:08x}",
              "prompt_sha8": "bbbbbbbb", "models": PANEL}
    return conn.execute(f"INSERT INTO evalledger.eval_takes_quality_runs ({', '.join(values)}) "
                        f"VALUES ({', '.join(f'%({k})s' for k in values)}) RETURNING id", values).fetchone()[0]


def verdict(conn, run_id, model):
    scores = {d: 8 for d in ("accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density")}
    conn.execute("INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, response_json) "
                 "VALUES (%s, 1, %s, false, %s)", (run_id, model, Jsonb({"scores": scores})))


def test_the_takes_quality_refusals_and_helpers_read_the_same_for_a_cold_run_as_for_none(admin, logins):
    runner = logins("runner")
    done = takes_run(runner, 1)
    for model in PANEL:
        verdict(runner, done, model)
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (done,))
    cold = takes_run(runner, 2)
    with admin.transaction():
        set_clock(admin, "eval_takes_quality_runs", "created_at", COLD, f"id = {cold}")
    missing = 999999
    verdicts = {(s, m.replace(str(run), "<run>")) for run in (done, cold, missing)
                for s, m in [refusal_of(runner, "INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, "
                                                "model, recorded) VALUES (%s, 1, 'openai:gpt-4o', false)", (run,))]}
    assert verdicts == {("42501", "evalledger: no open takes-quality run <run> takes verdicts")}
    helpers = {(s, m.replace(str(run), "<run>")) for run in (cold, missing)
               for call in ("takes_quality_cycle_v2(%s, 1)", "takes_quality_receipt_v3(%s)")
               for s, m in [refusal_of(runner, f"SELECT evalledger.{call}", (run,))]}
    assert helpers == {("P0002", "evalledger: no takes-quality run <run>")}
    assert runner.execute("SELECT evalledger.takes_quality_receipt_v3(%s) ->> 'verdict'", (done,)).fetchone()[0] == "pass"


def test_a_reveal_on_a_cold_run_reads_as_one_on_no_run(admin, logins, reviewer_id):
    run_id = record_run(admin, reviewer_id, count=1, complete=False, review=False)
    age_run(admin, run_id, COLD)
    reviewer = logins("reviewer")
    got = {(s, m.replace(str(run), "<run>")) for run in (run_id, uuid.uuid4())
           for s, m in [refusal_of(reviewer, "SELECT evalledger.brain_eval_show_suggestions_v2(%s, 'EVAL-Q01')", (run,))]}
    assert got == {("42501", "evalledger: no question EVAL-Q01 in run <run> that you review")}


# Every way a reviewer might read a question's thresholds, or ask whether numbers of its choosing
# pass, before it scores: (statement, the object its refusal names).
THRESHOLD_READS = [
    (POLICY, "function brain_eval_question_policy_v2"),
    # A row of its own making (it may not pass a stored row whole: that would read question_passed).
    ("SELECT evalledger.brain_eval_question_verdict_v1(jsonb_populate_record(NULL::evalledger.brain_eval_question_score, "
     "jsonb_build_object('eval_run_id', %s::uuid, 'question_id', 'EVAL-Q01')), '{}')",
     "function brain_eval_question_verdict_v1"),
    ("SELECT evalledger.question_passes_v2(jsonb_populate_record(NULL::evalledger.brain_eval_question_score, "
     "'{\"hallucinations_detected\": 1, \"total_claims\": 2}'), r.definition, ARRAY['AGT-901'], "
     "'{\"max_hallucinations\": 0}') FROM evalledger.brain_eval_log l JOIN evalledger.rubric r USING (rubric_id) "
     "WHERE l.eval_run_id = %s", "function question_passes_v2"),
    ("SELECT c.pass_criteria FROM evalledger.brain_eval_catalog_question c, evalledger.brain_eval_harness_run h "
     "WHERE h.eval_run_id = %s AND c.catalog_version = h.catalog_version", "table brain_eval_catalog_question"),
]


def test_a_reviewer_reads_no_threshold_of_a_question_before_scoring_it(admin, logins, harness_runs):
    """The write trigger read a harness question's pass thresholds with the reviewer's rights, so the
    reviewer could read them too (the policy helper) or try numbers against them (question_passes_v2),
    from psql before scoring, unrecorded. Now every such read is refused, and so is attaching the
    judging trigger to a table of the reviewer's own; the reviewer's score is still judged by the
    question's thresholds, with nothing of them in what the reviewer reads."""
    runner, reviewer = logins("runner"), logins("reviewer")
    runner.execute(*answer(runner, harness_runs["hot"], harness_runs["version"]))
    run_id = harness_runs["hot"]
    before = row_counts(admin)
    for statement, named in THRESHOLD_READS:
        assert refusal_of(reviewer, statement, (run_id,)) == ("42501", f"permission denied for {named}")
    # The reference answer, thresholds included, reads NULL until a reveal after the blind score (section 14).
    assert reviewer.execute("SELECT evalledger.brain_eval_reference_v2(%s, 'EVAL-Q01')", (run_id,)).fetchone()[0] is None
    reviewer.execute("CREATE TEMP TABLE mine (eval_run_id uuid, question_id text, hallucinations_detected integer)")
    sqlstate, message = refusal_of(reviewer, "CREATE TRIGGER probe BEFORE INSERT ON mine FOR EACH ROW "
                                             "EXECUTE FUNCTION evalledger.brain_eval_question_score_judge_v1()")
    assert (sqlstate, message) == ("42501", "permission denied for function evalledger.brain_eval_question_score_judge_v1")
    assert row_counts(admin) == before
    params = {"run": run_id, "diagnosed": diagnosed_question(admin, run_id)}
    assert judged(admin, reviewer, params, 0) is True
    assert judged(admin, reviewer, params, 1) is False  # EVAL-Q01 allows none


SCORE = ("UPDATE evalledger.brain_eval_question_score SET hallucinations_detected = %(h)s, total_claims = 1 + %(h)s, "
         "narrative_coherence_rating = 4, diagnosis_accuracy_score = CASE WHEN %(diagnosed)s THEN 1.0 END "
         "WHERE eval_run_id = %(run)s")
VERDICT = "SELECT question_passed FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s"


def judged(admin, reviewer, params, hallucinations) -> bool | None:
    """The reviewer scores the question; the verdict the judge gave it, read as the superuser."""
    assert reviewer.execute(SCORE, {**params, "h": hallucinations}).rowcount == 1
    return admin.execute(VERDICT, (params["run"],)).fetchone()[0]


def answered(admin, logins, harness_runs) -> dict:
    """The hot harness run's EVAL-Q01 answered, and the score statement's parameters for it."""
    runner = logins("runner")
    runner.execute(*answer(runner, harness_runs["hot"], harness_runs["version"]))
    return {"run": harness_runs["hot"], "diagnosed": diagnosed_question(admin, harness_runs["hot"])}


def diagnosed_question(admin, run_id) -> bool:
    """Whether the rubric scores diagnosis accuracy on the run's one question (then the score gives it)."""
    return admin.execute(
        "SELECT r.definition -> 'diagnosis_question_types' ? q.question_type FROM evalledger.brain_eval_question_score q "
        "JOIN evalledger.brain_eval_log l USING (eval_run_id) JOIN evalledger.rubric r USING (rubric_id) "
        "WHERE q.eval_run_id = %s", (run_id,)).fetchone()[0]


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read", "serializable"])
def test_the_judging_trigger_decides_the_same_in_any_zone_and_isolation(admin, logins, harness_runs, isolation):
    """The judge reads the question's policy with the code role's rights, but through caller_reads_v1
    (the hot tier, in UTC): a reviewer's crafted TimeZone and its isolation level change no verdict.
    An entry under an older snapshot than its statement's is refused outright (the trail must see
    every committed reveal: issue 37, item 8), so it is judged by nothing."""
    params = answered(admin, logins, harness_runs)
    reviewer = logins("reviewer")
    zone, hours = zone_that_moves(reviewer, "24 months")
    set_zone(reviewer, zone)
    reviewer.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {isolation}")
    if isolation != "read committed":
        with pytest.raises(errors.InvalidTransactionState, match="a reviewer's entry .* runs under READ COMMITTED"):
            judged(admin, reviewer, params, 0)
        assert admin.execute(VERDICT, (params["run"],)).fetchone()[0] is None
        reviewer.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert judged(admin, reviewer, params, 0) is True
    assert judged(admin, reviewer, params, 1) is False


def test_two_sessions_scoring_one_question_at_once_each_get_their_own_verdict(admin, logins, harness_runs):
    """The second score waits for the first's row lock, then is judged on its own numbers: the row
    ends with the last score's verdict, and the trail holds both entries."""
    params = answered(admin, logins, harness_runs)
    first, second = logins("reviewer"), logins("reviewer")
    first.execute("BEGIN")
    first.execute(SCORE, {**params, "h": 0})
    thread, outcome = in_thread(lambda: second.execute(SCORE, {**params, "h": 1}).rowcount)
    wait_until_waiting(admin, REVIEWER_ROLE)
    assert admin.execute(VERDICT, (params["run"],)).fetchone()[0] is None  # the first's is not committed yet
    first.execute("COMMIT")
    thread.join(30)
    assert outcome == {"result": 1}
    assert admin.execute(VERDICT, (params["run"],)).fetchone()[0] is False
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s",
                         (params["run"],)).fetchone()[0] >= 2


VERDICT_READS = [
    ("UPDATE evalledger.brain_eval_question_score SET narrative_coherence_rating = 4 WHERE eval_run_id = %s "
     "RETURNING question_passed", "table brain_eval_question_score"),
    ("UPDATE evalledger.brain_eval_question_score SET narrative_coherence_rating = 4 WHERE eval_run_id = %s "
     "RETURNING *", "table brain_eval_question_score"),
    ("SELECT question_passed FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s",
     "table brain_eval_question_score"),
    ("SELECT count(*) FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s AND question_passed",
     "table brain_eval_question_score"),
    ("SELECT to_jsonb(q) FROM evalledger.brain_eval_question_score q WHERE eval_run_id = %s",
     "table brain_eval_question_score"),
    ("SELECT evalledger.question_needs_v2(q, '{}', '{}') FROM evalledger.brain_eval_question_score q "
     "WHERE eval_run_id = %s", "table brain_eval_question_score"),
]


def test_a_score_rolled_back_reveals_no_verdict(admin, logins, harness_runs):
    """A reviewer who could read each question's verdict as it scored could score, read, roll back
    and try again, and so learn the thresholds with nothing on the record. It reads no verdict at
    all before the run completes: every way to ask for question_passed is refused, in a transaction
    it then rolls back as in one it commits, while its own scores save and are judged."""
    params = answered(admin, logins, harness_runs)
    reviewer = logins("reviewer")
    reviewer.execute("BEGIN")
    reviewer.execute(SCORE, {**params, "h": 1})
    for statement, named in VERDICT_READS:
        reviewer.execute("SAVEPOINT probe")
        assert refusal_of(reviewer, statement, (params["run"],)) == ("42501", f"permission denied for {named}")
        reviewer.execute("ROLLBACK TO SAVEPOINT probe")
    reviewer.execute("ROLLBACK")
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s",
                         (params["run"],)).fetchone()[0] == 0
    assert admin.execute(VERDICT, (params["run"],)).fetchone()[0] is None
    # What it may read of the row, it reads; and its score, committed, is judged as before.
    assert reviewer.execute("SELECT question_id, hallucinations_detected FROM evalledger.brain_eval_question_score "
                            "WHERE eval_run_id = %s", (params["run"],)).fetchone() == ("EVAL-Q01", None)
    assert judged(admin, reviewer, params, 1) is False


def test_a_refused_score_shows_no_verdict_in_its_detail(admin, logins, harness_runs):
    """A CHECK that refuses the row after the judge has set its verdict (here: a comment over the
    length limit, with every number given) may report the failing row. Not to the reviewer: under
    row-level security PostgreSQL gives a refused row no detail at all (and would list only the
    columns the caller may read), so the refusal is no oracle either."""
    params = answered(admin, logins, harness_runs)
    over_long = SCORE.replace(" WHERE ", ", reviewer_comments = repeat('x', 4001) WHERE ")
    with pytest.raises(psycopg.errors.CheckViolation) as caught:
        logins("reviewer").execute(over_long, {**params, "h": 0})
    assert caught.value.diag.constraint_name == "brain_eval_question_score_comment_length"
    assert caught.value.diag.message_detail is None
    assert "question_passed" not in str(caught.value) and admin.execute(VERDICT, (params["run"],)).fetchone()[0] is None
