"""Judge agreement counts a judge once per question (issue 36, item 4; migration 0144): with
--repeats K a judge's K drafts on an answer are one (draft, reviewer) pair, its number its mean over
its contributing repeats on the reviewer's scale (brain_eval_agreement_pairs_v1, the one home of the
fold), so a run whose repeats agree agrees exactly as a run of one; 0144 counts again the by-month
agreement a repeated run added when each repeat was a pair. Tried as the runner, the reviewer,
RevOps and the auditor."""

from __future__ import annotations

from tests.db.test_brain_eval_repeats_numbered_once import JUDGE, STALE, draft, runs, suggest  # noqa: F401


def review_blind_and_complete(connect_as, runner, run_id, hallucinations=0):
    """The run's reviewer scores EVAL-Q01 and the stale-fixture questions without seeing a draft
    (every value blind), signs off, and the runner completes the run."""
    from evalledger.suites.brain_eval import store as brain_eval
    from tests.conftest import REVIEWER_ROLE

    reviewer = connect_as(REVIEWER_ROLE)
    brain_eval.score_question(reviewer, run_id, "EVAL-Q01", {
        "hallucinations_detected": hallucinations, "total_claims": 1, "narrative_coherence_rating": 4,
        "diagnosis_accuracy_score": 0.5})
    for question, diagnosis in STALE.items():
        brain_eval.score_question(reviewer, run_id, question, {
            "hallucinations_detected": 0, "total_claims": 1, "narrative_coherence_rating": 4,
            "staleness_correctly_recognized": True,
            **({} if diagnosis is None else {"diagnosis_accuracy_score": diagnosis})})
    brain_eval.sign_off_run(reviewer, run_id, "1.00")
    brain_eval.complete_run(runner, run_id)


def test_agreement_counts_a_judge_once_per_question_whatever_its_k(runs, connect_as):
    """A judge asked 3 times whose repeats agree agrees with the reviewer exactly as a judge asked
    once (brain_eval_agreement_pairs_v1 folds its repeats by their mean): the same blind pairs, the
    same cells, the same kappa, and judge_agreement_v1 counts one pair per judge and question."""
    runner, start = runs
    questions = ("EVAL-Q01", *STALE)
    steady = "anthropic:claude-opus-4-7"
    auditor = connect_as("evalledger_auditor")
    facts, measures = {}, {}
    for k in (None, 3):
        run_id = start(k, questions)
        for question in questions:
            for model, unsupported in ((JUDGE, 1 if question == "EVAL-Q01" else 0), (steady, 0)):
                for n in ((None,) if k is None else (1, 2, 3)):
                    suggest(runner, run_id, {**draft(unsupported, 1.0), "staleness_recognised": True}, n, model=model,
                            question=question)
        review_blind_and_complete(connect_as, runner, run_id)
        facts[k] = auditor.execute("SELECT * FROM brain_eval_agreement_facts_v1(ARRAY[%s]::uuid[]) "
                                   "ORDER BY judge_model", (run_id,)).fetchall()
        measures[k] = auditor.execute(
            "SELECT f.judge_model, m.* FROM brain_eval_agreement_facts_v1(ARRAY[%s]::uuid[]) f "
            "CROSS JOIN LATERAL agreement_measures_v1("
            "ARRAY[f.unsupported_j0_r0, f.unsupported_j0_r1, f.unsupported_j0_r2, f.unsupported_j1_r0,"
            " f.unsupported_j1_r1, f.unsupported_j1_r2, f.unsupported_j2_r0, f.unsupported_j2_r1, f.unsupported_j2_r2],"
            "ARRAY[f.diagnosis_j0_r0, f.diagnosis_j0_r1, f.diagnosis_j0_r2, f.diagnosis_j1_r0, f.diagnosis_j1_r1,"
            " f.diagnosis_j1_r2, f.diagnosis_j2_r0, f.diagnosis_j2_r1, f.diagnosis_j2_r2],"
            " f.claims_pairs, f.claims_abs_difference) m ORDER BY f.judge_model", (run_id,)).fetchall()
    assert len(facts[None]) == 2 and facts[3] == facts[None]
    assert measures[3] == measures[None]
    # Two runs of 6 questions: 12 blind pairs of each judge's unsupported claims, 10 of diagnosis (5 a run).
    for role in ("evalledger_revops", "evalledger_auditor"):
        assert connect_as(role).execute(
            "SELECT judge_model, unsupported_pairs, diagnosis_pairs, claims_pairs FROM judge_agreement_v1 "
            "ORDER BY judge_model").fetchall() == [(steady, 12, 10, 12), (JUDGE, 12, 10, 12)], role
    assert auditor.execute("SELECT * FROM brain_eval_by_month_recount_v1()").fetchall() == []


def test_migration_0144_counts_again_the_agreement_a_repeated_run_added(runs, connect_as, admin):
    """The months whose agreement rows counted each repeat as a judge (before 0144) are counted again
    by 0144's recount, as the completed runs say."""
    from pathlib import Path

    runner, start = runs
    run_id = start(3, ("EVAL-Q01", *STALE))
    for n in (1, 2, 3):
        suggest(runner, run_id, draft(0, 0.5), n)
    review_blind_and_complete(connect_as, runner, run_id)
    # As the pairs before 0144 counted them: each of the three repeats a pair.
    admin.execute("SET session_replication_role = replica")  # past the panel table's guards, as a restore is
    admin.execute("UPDATE evalledger.brain_eval_agreement_by_month SET unsupported_j0_r0 = 3 * unsupported_j0_r0, "
                  "diagnosis_j1_r1 = 3 * diagnosis_j1_r1, claims_pairs = 3 * claims_pairs, "
                  "claims_abs_difference = 3 * claims_abs_difference")
    admin.execute("SET session_replication_role = DEFAULT")
    auditor = connect_as("evalledger_auditor")
    assert len(auditor.execute("SELECT * FROM brain_eval_by_month_recount_v1()").fetchall()) == 1
    text = (Path(__file__).resolve().parents[2] / "migrations/0144.agreement-once-per-judge.sql").read_text("utf-8")
    recount = text[text.index("DO $recount$"):text.index("$recount$;") + len("$recount$;")]
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute(recount)
    assert auditor.execute("SELECT * FROM brain_eval_by_month_recount_v1()").fetchall() == []
    assert auditor.execute("SELECT unsupported_pairs, diagnosis_pairs FROM judge_agreement_v1").fetchall() == [(1, 1)]


def test_a_judges_repeats_that_differ_are_one_pair_their_mean_on_the_reviewers_scale(runs, connect_as):
    """Repeats that differ: one pair per judge and question, the judge's mean over its contributing
    repeats put on the reviewer's scale (a whole count, diagnosis in steps of 0.5, halves up); a
    repeat that does not contribute counts for nothing."""
    runner, start = runs
    run_id = start(4)
    for n, (unsupported, diagnosis, claims) in enumerate([(0, 0.5, 3), (1, 1.0, 4), (1, 1.0, 4)], 1):
        suggest(runner, run_id, {**draft(unsupported, diagnosis), "total_claims": claims}, n)
    suggest(runner, run_id, {"total_claims": "many"}, 4)  # incomplete: no draft
    other = "anthropic:claude-opus-4-7"
    suggest(runner, run_id, draft(0, 0.5), 1, model=other)
    suggest(runner, run_id, draft(1, 1.0), 2, model=other)  # means 0.5 and 0.75: halves up, to 1 and 1.0
    auditor = connect_as("evalledger_auditor")
    assert [(m, u, float(d), c) for m, u, d, c in auditor.execute(
        "SELECT judge_model, judge_unsupported, judge_diagnosis, judge_claims "
        "FROM brain_eval_agreement_pairs_v1(ARRAY[%s]::uuid[]) ORDER BY judge_model", (run_id,))] == [
        (other, 1, 1.0, 3), (JUDGE, 1, 1.0, 4)]
