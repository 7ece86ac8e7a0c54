"""The readers' side's BI contract (issue 22) on a real PostgreSQL: the by-month panel tables kept exactly at
completion and purge, judge-versus-reviewer agreement against hand-computed kappas (a reviewer who
saw the drafts first does not count), each reader's tier, the _v2 views, and a comment with its
unit on every column of every view."""

from __future__ import annotations

import json
from datetime import timedelta, timezone
from decimal import Decimal

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import catalog
from evalledger.suites.brain_eval import store as brain_eval
from tests.builders import (BRAIN_PROMPTS, acting_as, catalog_document, load_catalog, open_harness_run, question,
                            record_run, register_prompt)
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE
from tests.db.test_retention import purge_committed, set_run_clock

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
TABLES = ("brain_eval_runs_by_month", "brain_eval_questions_by_month", "brain_eval_agreement_by_month")
J1, J2 = "openai:gpt-4o", "google:gemini-1.5-pro"
PROMPT = "You are the agreement test brain.\n"


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def rows(conn, query, *params):
    return [tuple(r) for r in conn.execute(query, params).fetchall()]


def recount(conn):
    return rows(conn, "SELECT * FROM evalledger.brain_eval_by_month_recount_v1()")


# -- judge-versus-reviewer agreement: the hand-computed fixture ---------------------------------------
#
# One completed harness run of AGT-901 over eight non-stale questions, two judges. For each
# question: the reviewer's final hallucinations H, claims C, diagnosis D; judge J1's unsupported
# claims U (quoted), claims and diagnosis. J2 drafts the reviewer's own numbers, except that its
# EVAL-Q22 draft does not parse (it contributes nothing).
#
#   question  reviewer H C D    J1 U C D     how the reviewer entered them
#   EVAL-Q01          0 5 1        0 5 1     blind, then looked at the drafts (counts)
#   EVAL-Q02          1 4 0.5      0 6 0.5   blind; looked, then changed only the comment (counts)
#   EVAL-Q04          0 3 1        0 3 0.5   blind with C=4; looked, then set C=3 (C does not count)
#   EVAL-Q05          2 6 0        2 4 0.5   blind, never looked
#   EVAL-Q07          0 5 1        1 5 1     blind, never looked
#   EVAL-Q08          3 7 0.5      2 7 0     looked FIRST, then entered everything (nothing counts)
#   EVAL-Q21          1 2 -        1 3 -     blind (no diagnosis: expansion_qualification)
#   EVAL-Q22          0 4 -        0 4 -     blind
#
# A harness run asks every stale-fixture question of its catalog: those five are answered and
# reviewed too, with no judge drafts, so they are in no pair.
# J1, unsupported claims binned 0 / 1 / 2+, 7 blind pairs (all but Q08):
#   (judge, reviewer) = Q01 (0,0) Q02 (0,1) Q04 (0,0) Q05 (2,2) Q07 (1,0) Q21 (1,1) Q22 (0,0)
#   po = 5/7; judge shares 4,2,1 /7, reviewer 4,2,1 /7: pe = (16+4+1)/49 = 3/7
#   kappa = (5/7 - 3/7) / (1 - 3/7) = 1/2
# J1, diagnosis 0 / 0.5 / 1 as categories 0,1,2, 5 blind pairs (Q01 Q02 Q04 Q05 Q07):
#   (2,2) (1,1) (1,2) (1,0) (2,2): exact agreement 3/5; linear weights |i-j|/2
#   Do = (0.5 + 0.5)/5 = 0.2; judge counts (0,3,2), reviewer (1,1,3):
#   De = [3*1*0.5 + 3*3*0.5 + 2*1*1 + 2*1*0.5] / 25 = 9/25 = 0.36
#   weighted kappa = 1 - 0.2/0.36 = 4/9 = 0.4444
# J1, total claims, 6 blind pairs (Q01 Q02 Q05 Q07 Q21 Q22; not Q04, not Q08):
#   |diff| = 0 2 2 0 1 0: mean 5/6 = 0.8333
# Had Q08 counted, J1's unsupported kappa would be 0.6 and its claims mean 5/7: the blind rule
# is what the figures below prove.
# J2: unsupported 6 pairs (not Q08, not Q22), all agreeing: kappa 1; diagnosis 5 pairs, kappa_w 1;
# claims 5 pairs (not Q04, Q08, Q22), mean difference 0.
REVIEWER = {
    "EVAL-Q01": (0, 5, 1), "EVAL-Q02": (1, 4, 0.5), "EVAL-Q04": (0, 3, 1), "EVAL-Q05": (2, 6, 0),
    "EVAL-Q07": (0, 5, 1), "EVAL-Q08": (3, 7, 0.5), "EVAL-Q21": (1, 2, None), "EVAL-Q22": (0, 4, None),
}
JUDGE_1 = {
    "EVAL-Q01": (0, 5, 1), "EVAL-Q02": (0, 6, 0.5), "EVAL-Q04": (0, 3, 0.5), "EVAL-Q05": (2, 4, 0.5),
    "EVAL-Q07": (1, 5, 1), "EVAL-Q08": (2, 7, 0), "EVAL-Q21": (1, 3, None), "EVAL-Q22": (0, 4, None),
}
STALE = {"EVAL-Q03": 1, "EVAL-Q06": 1, "EVAL-Q16": 1, "EVAL-Q17": 1, "EVAL-Q30": None}  # diagnosis, where asked
HAND = {
    # judge: (unsupported pairs, agreement, kappa, diagnosis pairs, agreement, weighted kappa, claims pairs, mean |diff|)
    J1: (7, Decimal("0.7143"), Decimal("0.5000"), 5, Decimal("0.6000"), Decimal("0.4444"), 6, Decimal("0.8333")),
    J2: (6, Decimal("1.0000"), Decimal("1.0000"), 5, Decimal("1.0000"), Decimal("1.0000"), 5, Decimal("0.0000")),
}


def draft(unsupported: int, claims: int, diagnosis) -> dict:
    reply = {"total_claims": claims, "unsupported_claims": [f"claim {n}" for n in range(unsupported)],
             "notes": "test draft"}
    if diagnosis is not None:
        reply["diagnosis_accuracy"] = diagnosis
    return reply


def claim_list(count: int) -> list[dict]:
    return [{"text": f"claim {n}", "numerical": False, "source_ids": [], "confidence": "high"} for n in range(count)]


def fields(h, c, d, comment=None) -> dict:
    values = {"hallucinations_detected": h, "total_claims": c, "narrative_coherence_rating": 4}
    if d is not None:
        values["diagnosis_accuracy_score"] = d
    if comment:
        values["reviewer_comments"] = comment
    return values


def agreement_run(admin, connect_as, reviewer_id, brain="AGT-901") -> str:
    """The fixture above, entered in the order the table says, completed; its run id."""
    owner, runner = connect_as("evalledger_owner"), connect_as("evalledger_runner")
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    questions = [*REVIEWER, *STALE]
    run_id, version = open_harness_run(owner, runner, reviewer_id, questions, brain, PROMPT)
    for question in questions:
        analysis = brain_eval.record_analysis(
            runner, brain=brain, model_id=version.model_id, system_prompt_hash=version.system_prompt_hash,
            question_id=question, question="q", output="o", claims=claim_list(8), token_cost_usd=0)
        runner.execute("INSERT INTO brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                       "VALUES (%s, %s, %s, false)", (run_id, question, analysis))
        if question in STALE:
            continue
        for model, reply in ((J1, draft(*JUDGE_1[question])),
                             (J2, {"total_claims": "?"} if question == "EVAL-Q22" else draft(*REVIEWER[question]))):
            runner.execute("INSERT INTO brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, "
                           "response_json) VALUES (%s, %s, %s, false, %s)", (run_id, question, model, Jsonb(reply)))
    reviewer = connect_as(REVIEWER_ROLE)

    def score(question, **changes):
        brain_eval.score_question(reviewer, run_id, question, changes)

    def look(question):
        brain_eval.show_suggestions(reviewer, run_id, question)

    look("EVAL-Q08")
    score("EVAL-Q08", **fields(*REVIEWER["EVAL-Q08"]))
    for question in ("EVAL-Q01", "EVAL-Q02", "EVAL-Q05", "EVAL-Q07", "EVAL-Q21", "EVAL-Q22"):
        score(question, **fields(*REVIEWER[question]))
    score("EVAL-Q04", **fields(0, 4, 1))
    for question, diagnosis in STALE.items():
        score(question, staleness_correctly_recognized=True, **fields(0, 3, diagnosis))
    for question in ("EVAL-Q01", "EVAL-Q02", "EVAL-Q04"):
        look(question)
    score("EVAL-Q02", reviewer_comments="the drafts agree with me")
    score("EVAL-Q04", total_claims=3)
    brain_eval.sign_off_run(reviewer, run_id, "1.50")
    brain_eval.complete_run(runner, run_id)
    return run_id


def test_agreement_is_the_hand_computed_kappa_over_blind_entries_only(admin, connect_as, reviewer_id):
    agreement_run(admin, connect_as, reviewer_id)
    for reader in ("evalledger_auditor", "evalledger_revops"):
        found = rows(connect_as(reader), """
            SELECT judge_model, unsupported_pairs, unsupported_agreement, unsupported_kappa, diagnosis_pairs,
                   diagnosis_agreement, diagnosis_weighted_kappa, claims_pairs, claims_mean_abs_difference
              FROM judge_agreement_v1 WHERE brain_under_test = 'AGT-901' ORDER BY judge_model""")
        assert {r[0]: r[1:] for r in found} == HAND, reader


def test_the_blind_rule_reads_the_trail_and_the_committed_showing(admin, connect_as, reviewer_id):
    run_id = agreement_run(admin, connect_as, reviewer_id)
    pairs = {(q, m): (ub, db, cb) for q, m, ub, db, cb in rows(connect_as("evalledger_auditor"), """
        SELECT question_id, judge_model, unsupported_blind, diagnosis_blind, claims_blind
          FROM brain_eval_agreement_pairs_v1(ARRAY[%s::uuid])""", run_id)}
    assert pairs[("EVAL-Q08", J1)] == (False, False, False)  # looked first
    assert pairs[("EVAL-Q04", J1)] == (True, True, False)     # claims changed after looking
    assert pairs[("EVAL-Q02", J1)] == (True, True, True)      # only the comment changed after
    assert pairs[("EVAL-Q21", J1)] == (True, False, True)     # no diagnosis on this question
    assert ("EVAL-Q22", J2) not in pairs                      # a draft that does not contribute


def test_one_runs_agreement_is_what_brain_eval_show_reads(admin, connect_as, reviewer_id):
    run_id = agreement_run(admin, connect_as, reviewer_id)
    from evalledger.suites.brain_eval import agreement

    with connect_as("evalledger_auditor").transaction() as tx:
        found = agreement.of_run(tx.connection, run_id)
    assert {a.judge_model: (a.unsupported_pairs, a.unsupported_kappa, a.diagnosis_pairs,
                            a.diagnosis_weighted_kappa, a.claims_pairs, a.claims_mean_abs_difference)
            for a in found} == {m: (h[0], h[2], h[3], h[5], h[6], h[7]) for m, h in HAND.items()}


def test_brain_eval_show_prints_each_judges_agreement(dsn, admin, connect_as, reviewer_id):
    from tests.cli import run_cli
    from tests.e2e.test_everyday_cli import read_json

    run_id = agreement_run(admin, connect_as, reviewer_id)
    env = {"DATABASE_URL": dsn}
    text = run_cli("brain-eval", "show", str(run_id), env=env)
    assert text.err == ""
    lines = text.out.splitlines()
    heading = lines.index("  judges against the reviewer (blind entries only; kappa (pairs)):")
    assert lines[heading + 1:] == [
        f"    {J2:28} unsupported claims kappa 1.00 (6)  diagnosis weighted kappa 1.00 (5)  claims mean |diff| 0.00 (5)",
        f"    {J1:28} unsupported claims kappa 0.50 (7)  diagnosis weighted kappa 0.44 (5)  claims mean |diff| 0.83 (6)",
    ]
    shown = read_json(run_cli("brain-eval", "show", str(run_id), "--json", env=env), "suites/brain_eval",
                      "brain_eval_run")
    def exact(number) -> Decimal:  # the JSON number as written
        return Decimal(str(number))

    assert {a["judge_model"]: (a["unsupported_pairs"], exact(a["unsupported_kappa"]), a["diagnosis_pairs"],
                               exact(a["diagnosis_weighted_kappa"]), a["claims_pairs"],
                               exact(a["claims_mean_abs_difference"])) for a in shown["agreement"]} == {
        m: (h[0], h[2], h[3], h[5], h[6], h[7]) for m, h in HAND.items()}


@pytest.mark.parametrize("cells, kappa, weighted", [
    ([0] * 9, None, None),                                   # no items
    ([5, 0, 0, 0, 0, 0, 0, 0, 0], None, None),               # both raters always 0: undefined
    ([3, 0, 0, 0, 3, 0, 0, 0, 3], Decimal("1.0000"), Decimal("1.0000")),
    ([0, 0, 3, 0, 0, 0, 3, 0, 0], Decimal("-1.0000"), Decimal("-1.0000")),  # always opposite ends
    ([2, 1, 0, 1, 2, 0, 0, 0, 0], Decimal("0.3333"), Decimal("0.3333")),
])
def test_kappa_functions_by_hand(admin, cells, kappa, weighted):
    # Opposite ends [[0,0,3],[0,0,0],[3,0,0]]: po 0, pe (3*3 + 3*3)/36 = 1/2, kappa (0 - 1/2)/(1/2) = -1;
    # Do = 6*1/6 = 1, De = (3*3*1 + 3*3*1)/36 = 1/2, weighted 1 - 2 = -1.
    # [[2,1,0],[1,2,0],[0,0,0]]: po 4/6, pe (3*3 + 3*3)/36 = 1/2, kappa (2/3 - 1/2)/(1/2) = 1/3;
    # Do = 2*0.5/6 = 1/6, De = (3*3*0.5 + 3*3*0.5)/36 = 1/4, weighted 1 - 2/3 = 1/3.
    assert admin.execute("SELECT evalledger.cohen_kappa_v1(%s::bigint[]), evalledger.weighted_kappa_v1(%s::bigint[])",
                         (cells, cells)).fetchone() == (kappa, weighted)


# -- the by-month tables are exactly the runs -------------------------------------------------------

def complete_as_superuser(admin, run_id):
    admin.execute("UPDATE evalledger.brain_eval_log SET completed_at = now() WHERE eval_run_id = %s", (run_id,))


def recorded_at(admin, runner, reviewer_id, clock: str, **run):
    """A run recorded (tier clock) at the SQL expression clock, then completed: its id."""
    run_id = record_run(runner, reviewer_id, count=4, complete=False, **run)
    with admin.transaction():
        set_run_clock(admin, run_id, clock)
    complete_as_superuser(admin, run_id)
    return run_id


def test_completion_adds_each_run_once_and_the_tables_recount_clean(admin, connect_as, reviewer_id, reviewers):
    runner = connect_as("evalledger_runner")
    record_run(runner, reviewer_id, count=6)
    record_run(runner, reviewers[OTHER_REVIEWER_ROLE], brain="AGT-902", count=3, run_trigger="on_demand")
    record_run(runner, reviewer_id, count=2, complete=False)  # open: nothing
    agreement_run(admin, connect_as, reviewer_id)
    assert recount(admin) == []
    assert rows(admin, "SELECT sum(runs)::int FROM brain_eval_runs_by_month") == [(3,)]
    assert rows(admin, "SELECT sum(runs_seen)::int FROM brain_eval_questions_by_month") == [(6 + 3 + 13,)]
    # What went around the code role shows: a superuser's edit of a panel row is a recount difference.
    admin.execute("UPDATE brain_eval_runs_by_month SET runs = runs + 1 WHERE brain_under_test = 'AGT-902'")
    assert [r[0] for r in recount(admin)] == ["brain_eval_runs_by_month"]


@pytest.mark.parametrize("role", ["evalledger_owner", "evalledger_runner", REVIEWER_ROLE, "evalledger_revops",
                                  "evalledger_auditor"])
def test_no_role_writes_the_panel_tables(admin, connect_as, reviewer_id, role):
    record_run(connect_as("evalledger_runner"), reviewer_id, count=2)
    conn = connect_as(role)
    for table in TABLES:
        for statement in (f"INSERT INTO evalledger.{table} DEFAULT VALUES",
                          f"UPDATE evalledger.{table} SET brain_under_test = brain_under_test",
                          f"DELETE FROM evalledger.{table}", f"TRUNCATE evalledger.{table}"):
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(statement)
    assert recount(admin) == []


def test_the_purge_recounts_the_months_it_took_runs_from(admin, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    old = "now() - interval '7 years 2 days'"
    gone = recorded_at(admin, runner, reviewer_id, old)
    held = recorded_at(admin, runner, reviewer_id, old, brain="AGT-902")
    kept = record_run(runner, reviewer_id, count=4).eval_run_id
    with acting_as(admin, "evalledger_owner"):
        admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'kept by a test')", (held,))
    assert rows(admin, "SELECT sum(runs)::int FROM brain_eval_runs_by_month") == [(3,)]
    purge_committed(admin)
    assert rows(admin, "SELECT eval_run_id FROM brain_eval_log ORDER BY created_at") == [(held,), (kept,)]
    assert recount(admin) == []
    assert sorted(rows(admin, "SELECT brain_under_test, runs FROM brain_eval_runs_by_month")) == [
        ("AGT-901", 1), ("AGT-902", 1)]
    assert gone not in {r[0] for r in rows(admin, "SELECT eval_run_id FROM brain_eval_log")}


# -- each reader's tier -----------------------------------------------------------------------------

def test_tier_limited_readers_aggregate_whole_hot_months_only(admin, connect_as, reviewer_id):
    """RevOps (and a reviewer) aggregate the months wholly in the hot tier: the month the tier
    boundary cuts is left out whole, so no cold run is ever counted; the per-run views show each
    hot run of it, as the tables' own policies do. The auditor aggregates everything."""
    runner = connect_as("evalledger_runner")
    whole, start = admin.execute("SELECT evalledger.whole_hot_months_from_v1()::timestamp AT TIME ZONE 'UTC', "
                                 "now() - interval '24 months'").fetchone()
    # In the month the boundary cuts: halfway into its hot part, or (when the boundary is within
    # minutes of the month's end, as at the last second of a month) an hour before it, cold.
    cut_is_hot = whole - start > timedelta(minutes=10)
    cut_at = start + (whole - start) / 2 if cut_is_hot else start - timedelta(hours=1)
    first_whole = recorded_at(admin, runner, reviewer_id, f"'{whole.isoformat()}'::timestamptz")
    cut = recorded_at(admin, runner, reviewer_id, f"'{cut_at.isoformat()}'::timestamptz")
    cold = recorded_at(admin, runner, reviewer_id, "now() - interval '25 months'")
    now = record_run(runner, reviewer_id, count=4).eval_run_id

    def aggregated(role):
        return rows(connect_as(role), "SELECT coalesce(sum(runs), 0)::int FROM stale_fixture_by_month_v1")[0][0]

    def per_run(role):
        return {r[0] for r in rows(connect_as(role), "SELECT eval_run_id FROM stale_fixture_pass_rate_v2")}

    assert aggregated("evalledger_auditor") == 4
    assert aggregated("evalledger_revops") == 2 == aggregated(REVIEWER_ROLE)
    assert rows(connect_as("evalledger_revops"), "SELECT sum(runs_seen)::int FROM most_failing_questions_v2") == [(8,)]
    assert per_run("evalledger_auditor") == {first_whole, cut, cold, now}
    assert per_run("evalledger_revops") == {first_whole, now} | ({cut} if cut_is_hot else set())
    assert per_run(REVIEWER_ROLE) == per_run("evalledger_revops")
    assert recount(admin) == []


def test_a_reviewer_reads_its_own_runs_and_no_agreement(admin, connect_as, reviewers):
    runner = connect_as("evalledger_runner")
    record_run(runner, reviewers[REVIEWER_ROLE], count=3)
    record_run(runner, reviewers[OTHER_REVIEWER_ROLE], count=5)
    mine = connect_as(REVIEWER_ROLE)
    assert rows(mine, "SELECT reviewer_user_id, runs_reviewed, ratings FROM reviewer_calibration_v2") == [
        (reviewers[REVIEWER_ROLE], 1, 3)]
    assert rows(mine, "SELECT sum(runs)::int, sum(stale_questions)::int FROM stale_fixture_by_month_v1") == [(1, 3)]
    # Not a reviewer's: what counts other reviewers' runs, production traffic, the drafts it was not shown.
    for view in ("most_failing_questions_v2", "brain_eval_questions_by_month", "prompt_drift_v2", "judge_agreement_v1",
                 "takes_quality_trend_v1", "brain_eval_agreement_by_month"):
        with pytest.raises(errors.InsufficientPrivilege):
            mine.execute(f"SELECT * FROM evalledger.{view}")
    with pytest.raises(errors.InsufficientPrivilege):
        connect_as("evalledger_agent").execute("SELECT * FROM evalledger.most_failing_questions_v2")


# -- the _v2 views ----------------------------------------------------------------------------------

def fail(*numbers):
    def bend(number, row):
        if number in numbers:
            row["hallucinations_detected"] = 1
    return bend


def test_most_failing_v2_ranks_per_brain_and_catalog_version(admin, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    for version in ("v28-2026Q2", "v29-2026Q3"):  # runs name loaded catalogs only
        load_catalog(admin, catalog_document([question(n) for n in range(1, 4)], version))
    record_run(runner, reviewer_id, count=3, bend=fail(1), question_catalog_version="v28-2026Q2")
    record_run(runner, reviewer_id, count=3, bend=fail(1, 2), question_catalog_version="v28-2026Q2")
    record_run(runner, reviewer_id, count=3, bend=fail(3), question_catalog_version="v29-2026Q3")
    record_run(runner, reviewer_id, brain="AGT-902", count=3, question_catalog_version="v28-2026Q2")
    got = rows(connect_as("evalledger_auditor"), """
        SELECT * FROM most_failing_questions_v2 ORDER BY brain_under_test, question_catalog_version, fail_rank, question_id""")
    assert got == [
        ("AGT-901", "v28-2026Q2", "EVAL-Q01", 2, 2, Decimal("100.00"), 1),
        ("AGT-901", "v28-2026Q2", "EVAL-Q02", 2, 1, Decimal("50.00"), 2),
        ("AGT-901", "v28-2026Q2", "EVAL-Q03", 2, 0, Decimal("0.00"), 3),
        ("AGT-901", "v29-2026Q3", "EVAL-Q03", 1, 1, Decimal("100.00"), 1),
        ("AGT-901", "v29-2026Q3", "EVAL-Q01", 1, 0, Decimal("0.00"), 2),
        ("AGT-901", "v29-2026Q3", "EVAL-Q02", 1, 0, Decimal("0.00"), 2),
        ("AGT-902", "v28-2026Q2", "EVAL-Q01", 1, 0, Decimal("0.00"), 1),
        ("AGT-902", "v28-2026Q2", "EVAL-Q02", 1, 0, Decimal("0.00"), 1),
        ("AGT-902", "v28-2026Q2", "EVAL-Q03", 1, 0, Decimal("0.00"), 1),
    ]
    # _v1 keeps its contract: one row per question id over every brain and catalog.
    assert rows(connect_as("evalledger_auditor"), "SELECT question_id, runs_seen, runs_failed FROM "
                "most_failing_questions_v1 ORDER BY question_id") == [
        ("EVAL-Q01", 4, 2), ("EVAL-Q02", 4, 1), ("EVAL-Q03", 4, 1)]
    # The filters: a brain, a trigger.
    assert rows(connect_as("evalledger_auditor"), "SELECT count(*) FROM most_failing_questions_rows_v2("
                "'AGT-902', NULL, NULL, 'quarterly')") == [(3,)]
    assert rows(connect_as("evalledger_auditor"), "SELECT count(*) FROM most_failing_questions_rows_v2("
                "NULL, NULL, NULL, 'on_demand')") == [(0,)]


def test_a_cancelled_runs_unjudged_questions_count_as_not_passed(admin, connect_as, reviewer_id):
    """A run cancelled before its review closes its questions without a verdict (question_passed
    NULL): the panels counted it as having asked each and failed none, so every such run lowered
    the fail shares like a pass. No pass rate leaves out a run started and never finished."""
    runner = connect_as("evalledger_runner")
    version = load_catalog(admin, catalog_document([question(n) for n in range(1, 3)], "v28-2026Q2"))
    record_run(runner, reviewer_id, count=2, bend=fail(1), question_catalog_version=version)
    cancelled = record_run(runner, reviewer_id, count=2, review=False, complete=False, question_catalog_version=version)
    assert runner.execute("SELECT evalledger.brain_eval_cancel_v1(%s, 'wrong catalog')", (cancelled,)).fetchone()[0]
    auditor = connect_as("evalledger_auditor")
    assert rows(auditor, "SELECT question_id, runs_seen, runs_failed, fail_pct FROM most_failing_questions_v2 "
                "ORDER BY question_id") == [("EVAL-Q01", 2, 2, Decimal("100.00")), ("EVAL-Q02", 2, 1, Decimal("50.00"))]
    assert rows(auditor, "SELECT question_id, runs_seen, runs_failed FROM most_failing_questions_v1 "
                "ORDER BY question_id") == [("EVAL-Q01", 2, 2), ("EVAL-Q02", 2, 1)]
    assert recount(admin) == []


def test_stale_fixture_v2_has_the_pass_rate_as_a_column(connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")

    def miss(*numbers):
        def bend(number, row):
            if number in numbers:
                row["staleness_correctly_recognized"] = False
        return bend

    clean = record_run(runner, reviewer_id, count=6).eval_run_id
    missed = record_run(runner, reviewer_id, count=6, bend=miss(2, 4)).eval_run_id
    none = record_run(runner, reviewer_id, count=6, bend=lambda n, row: row.update(
        uses_stale_fixture=False, staleness_correctly_recognized=None)).eval_run_id
    auditor = connect_as("evalledger_auditor")
    got = {r[0]: r[1:] for r in rows(auditor, "SELECT eval_run_id, stale_questions, stale_recognised, stale_missed, "
                                              "stale_pass_rate, all_recognised, sev2_incident FROM stale_fixture_pass_rate_v2")}
    assert got[clean] == (5, 5, 0, 1, True, False)
    assert got[missed] == (5, 3, 2, Decimal("0.6"), False, True)
    assert got[none] == (0, 0, 0, None, None, False)
    v1 = {r[0]: r[1:] for r in rows(auditor, "SELECT eval_run_id, stale_questions, stale_recognised, stale_missed, "
                                             "all_recognised, sev2_incident FROM stale_fixture_pass_rate_v1")}
    assert {k: (v[0], v[1], v[2], v[4], v[5]) for k, v in got.items()} == v1
    assert rows(auditor, "SELECT runs, runs_with_stale, runs_all_recognised, sev2_runs, stale_questions, "
                         "stale_recognised, stale_pass_rate FROM stale_fixture_by_month_v1") == [
        (3, 2, 1, 1, 10, 8, Decimal("0.8"))]
    # The latest N per brain, newest first.
    assert rows(auditor, "SELECT eval_run_id FROM stale_fixture_pass_rate_rows_v2('AGT-901', NULL, NULL, NULL, 1)"
                ) == [(none,)]


def test_calibration_v2_by_quarter_adds_up_to_v1(connect_as, reviewer_id, reviewers):
    runner = connect_as("evalledger_runner")

    def rate(*ratings):
        def bend(number, row):
            row["narrative_coherence_rating"] = ratings[number - 1]
        return bend

    record_run(runner, reviewer_id, count=4, bend=rate(5, 4, 4, 3))
    record_run(runner, reviewer_id, count=2, bend=rate(2, 5))
    record_run(runner, reviewers[OTHER_REVIEWER_ROLE], count=1, bend=rate(4))
    auditor = connect_as("evalledger_auditor")
    v1 = sorted(rows(auditor, "SELECT * FROM reviewer_calibration_v1"))
    v2 = sorted(rows(auditor, "SELECT reviewer_user_id, runs_reviewed, ratings, rating_1, rating_2, rating_3, "
                              "rating_4, rating_5, rating_mean, rating_stddev FROM reviewer_calibration_rows_v2("
                              "NULL, NULL, NULL, NULL, false)"))
    assert v1 == v2
    assert rows(auditor, "SELECT rating_mean, rating_stddev FROM reviewer_calibration_v2 WHERE reviewer_user_id = %s",
                reviewer_id) == [(Decimal("3.8333"), Decimal("1.1690"))]


def test_cost_by_month_sums_the_runs(connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    record_run(runner, reviewer_id, count=4, hours="2.50")
    record_run(runner, reviewer_id, count=2, hours="1.25")
    record_run(runner, reviewer_id, count=2, brain="AGT-902", hours="3.00")
    got = rows(connect_as("evalledger_auditor"), "SELECT brain_under_test, runs, token_cost_usd, token_cost_per_run_usd, "
               "reviewer_hours_spent, runs_with_hours, reviewer_hours_per_run FROM cost_by_month_v1 ORDER BY 1")
    assert got == [("AGT-901", 2, Decimal("0.0750"), Decimal("0.0375"), Decimal("3.75"), 2, Decimal("1.88")),
                   ("AGT-902", 1, Decimal("0.0250"), Decimal("0.0250"), Decimal("3.00"), 1, Decimal("3.00"))]


def test_prompt_drift_v2_is_a_history_per_month(admin, connect_as, reviewer_id):
    from tests.db.test_dashboards import SHA_C, SHA_D, production_analysis

    runner = connect_as("evalledger_runner")
    month = admin.execute("SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
                          ).fetchone()[0].astimezone(timezone.utc)
    last_month = month - timedelta(days=20)
    register_prompt(admin, "AGT-901", SHA_C)
    register_prompt(admin, "AGT-901", SHA_D)
    passed = record_run(runner, reviewer_id, count=2, system_prompt_hash=SHA_C,
                        started_at=(month - timedelta(days=40)).replace(day=2)).eval_run_id
    production_analysis(runner, "AGT-901", SHA_C, last_month.replace(day=3))
    production_analysis(runner, "AGT-901", SHA_D, month + timedelta(seconds=1))
    got = rows(connect_as("evalledger_auditor"), "SELECT month, production_prompt_hash, eval_run_id, prompt_drift "
               "FROM prompt_drift_v2 WHERE brain_under_test = 'AGT-901' ORDER BY month")
    first = (month - timedelta(days=40)).replace(day=1).date()
    assert got[0] == (first, None, passed, None)          # the eval passed; no production traffic yet
    assert got[-2] == (last_month.replace(day=1).date(), SHA_C, passed, False)
    assert got[-1] == (month.date(), SHA_D, passed, True)  # production moved to a prompt never passed
    assert rows(connect_as("evalledger_auditor"), "SELECT brain, production_prompt_hash, prompt_drift FROM "
                "prompt_drift_v1 WHERE brain = 'AGT-901'") == [("AGT-901", SHA_D, True)]


def test_the_most_failing_panel_reads_months_not_question_rows(connect_as, reviewer_id):
    record_run(connect_as("evalledger_runner"), reviewer_id, count=2)
    plan = "\n".join(r[0] for r in connect_as("evalledger_revops").execute(
        "EXPLAIN SELECT * FROM evalledger.most_failing_questions_v2"))
    assert "brain_eval_question_score" not in plan


# -- the contract explains itself -------------------------------------------------------------------

UNITS = ("0-1", "0-100", "1-5", "-1 to 1", "USD", "Hours", "hours", "Count", "count", "Rank", "Milliseconds",
         "Score", "Percent", "Claims (a count)", "scale")


def test_every_column_of_every_view_has_a_comment_and_every_number_its_unit(admin):
    found = rows(admin, """
        SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), col_description(c.oid, a.attnum)
          FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind = 'v' ORDER BY 1, a.attnum""")
    assert len(found) > 150
    missing = [f"{v}.{c}" for v, c, _, comment in found if not comment]
    assert missing == []
    unitless = [f"{v}.{c}: {comment}" for v, c, kind, comment in found
                if kind in ("numeric", "bigint", "integer") and not c.endswith("_id")  # ids are names, not numbers
                and not any(u in comment for u in UNITS)]
    assert unitless == []


def test_brain_under_test_names_the_brain_in_every_v2_view(admin):
    named = rows(admin, """
        SELECT DISTINCT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
         WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind = 'v' AND a.attname = 'brain'""")
    assert named == [("prompt_drift_v1",)]
