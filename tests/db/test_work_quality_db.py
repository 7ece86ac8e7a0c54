"""work-quality in the database: Compare and IsRegression at their boundaries, what completion
computes, the judges it skips, imports of the seed's own files, append-only, and who reads what."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.work_quality import snapshot as snap_mod
from tests.db.test_retention import set_clock

DIMS = list(snap_mod.DIMENSIONS)
PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7"]
GO_HISTORY = Path(__file__).resolve().parents[1] / "go" / "snapshot_roundtrip" / "testdata" / "history" / "review-pr"
TABLES = ("eval_work_quality_snapshots", "eval_work_quality_judge_verdicts")


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def start(conn, run_id="r1", name="review-pr", models=PANEL, **overrides) -> int:
    values = {"origin": "run", "kind": "bot", "name": name, "run_id": run_id, "models": list(models),
              "evidence_sha256": "a" * 64, **overrides}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_work_quality_snapshots ({cols}) VALUES ({marks}) RETURNING snapshot_id",
                        values).fetchone()[0]


def reply(score=0.7, **overrides) -> dict:
    return {**{d: score for d in DIMS}, "narrative": "Grounded in the diff.", "confidence": 0.8, **overrides}


def verdict(conn, snapshot_id, model, response=None, **extra):
    values = {"snapshot_id": snapshot_id, "model": model, "recorded": False,
              "response_json": Jsonb(reply() if response is None else response), **extra}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_work_quality_judge_verdicts ({cols}) VALUES ({marks}) "
                        "RETURNING contributes, error_kind, error_message", values).fetchone()


def complete(conn, snapshot_id) -> dict:
    return conn.execute("SELECT evalledger.work_quality_complete_v1(%s)", (snapshot_id,)).fetchone()[0]


def judged(conn, run_id, scores_by_model: dict, name="review-pr", **overrides) -> dict:
    """A whole run: start, one reply per model (a float: every dimension at it), complete."""
    sid = start(conn, run_id, name=name, models=list(scores_by_model), **overrides)
    for model, score in scores_by_model.items():
        verdict(conn, sid, model, score if isinstance(score, dict) else reply(score))
    return complete(conn, sid)


def rows(admin):
    return {t: admin.execute(f"SELECT * FROM evalledger.{t} ORDER BY 1").fetchall() for t in TABLES}


# --- Compare: the same band, exactly -----------------------------------------------------------


@pytest.mark.parametrize("prev, cur, verdict_", [
    (0.60, 0.65, "same"),    # +0.05 exactly: within the band
    (0.60, 0.651, "better"),
    (0.60, 0.55, "same"),    # -0.05 exactly
    (0.60, 0.549, "worse"),
    (0.70, 0.75, "same"),    # float64 would say 0.050000000000000044 and call it better
    (0.60, 0.60, "same"),
])
def test_compare_headline_at_the_same_band(runner, prev, cur, verdict_):
    delta = runner.execute("SELECT work_quality_compare_v1(%s, %s, 'p')",
                           (Jsonb({"overall": prev, "value_for_money": 0.5}),
                            Jsonb({"overall": cur, "value_for_money": 0.5}))).fetchone()[0]
    assert delta["verdict"] == verdict_
    assert Decimal(str(delta["overall_delta"])) == Decimal(str(cur)) - Decimal(str(prev))


def test_compare_per_dimension_with_missing_scores_as_zero_and_no_baseline(runner):
    delta = runner.execute("SELECT work_quality_compare_v1(%s, %s, 'run-a')",
                           (Jsonb({"overall": 0.5, "efficacy": 0.4}), Jsonb({"overall": 0.7}))).fetchone()[0]
    assert delta["prev_run_id"] == "run-a" and delta["value_delta"] == 0
    assert delta["per_dimension"] == {**{d: 0 for d in DIMS}, "overall": 0.2, "efficacy": -0.4}
    assert runner.execute("SELECT work_quality_compare_v1(NULL, %s, NULL)", (Jsonb({"overall": 1}),)).fetchone()[0] is None


# --- IsRegression: the tolerance, exactly, overall and value_for_money separately ---------------


def regression(conn, overall_delta, value_delta, tolerance=None):
    delta = {"prev_run_id": "p", "overall_delta": overall_delta, "value_delta": value_delta, "per_dimension": {},
             "verdict": "same"}
    return conn.execute("SELECT work_quality_is_regression_v1(%s, %s::numeric)", (Jsonb(delta), tolerance)).fetchone()[0]


@pytest.mark.parametrize("overall, value, reasons", [
    (-0.08, 0, []),                                           # exactly the tolerance: not a regression
    (-0.081, 0, ["overall dropped -0.081 (vs p)"]),
    (0, -0.08, []),
    (0, -0.0801, ["value_for_money dropped -0.080 (vs p)"]),  # the seed's %.3f
    (-0.2, -0.3, ["overall dropped -0.200 (vs p)", "value_for_money dropped -0.300 (vs p)"]),
    (0.08, 0.5, []),                                          # gains never regress
])
def test_is_regression_at_the_default_tolerance(runner, overall, value, reasons):
    assert regression(runner, overall, value) == reasons


def test_zero_or_negative_tolerance_means_the_default_and_a_wider_one_is_honoured(runner):
    assert regression(runner, -0.081, 0, 0) == ["overall dropped -0.081 (vs p)"]
    assert regression(runner, -0.081, 0, -1) == ["overall dropped -0.081 (vs p)"]
    assert regression(runner, -0.081, 0, 0.1) == []
    assert regression(runner, -0.05, 0, 0.04) == ["overall dropped -0.050 (vs p)"]


def test_no_baseline_is_never_a_regression(runner):
    assert runner.execute("SELECT work_quality_is_regression_v1(NULL)").fetchone()[0] == []
    first = judged(runner, "r1", {PANEL[0]: 0.9, PANEL[1]: 0.9})
    assert first["comparison"] is None and first["prev_run_id"] is None
    listed = runner.execute("SELECT work_quality_is_regression_v1(comparison) FROM eval_work_quality_snapshots").fetchone()
    assert listed == ([],)


def test_the_thresholds_are_data_a_new_rubric_row_changes_them(admin, runner):
    assert runner.execute("SELECT work_quality_policy_v1() ->> 'same_band', work_quality_policy_v1() ->> "
                          "'regress_tolerance'").fetchone() == ("0.05", "0.08")
    definition = admin.execute("SELECT definition FROM rubric WHERE suite = 'work-quality'").fetchone()[0]
    definition["compare"] = {"same_band": 0.2, "regress_tolerance": 0.3}
    admin.execute("INSERT INTO rubric (suite, version, definition) VALUES ('work-quality', 'v1.1-test', %s)",
                  (Jsonb(definition),))
    # A new row is not policy until it is activated (never by being newest).
    assert runner.execute("SELECT work_quality_policy_v1() ->> 'same_band'").fetchone()[0] == "0.05"
    admin.execute("INSERT INTO rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, 'test' "
                  "FROM rubric WHERE suite = 'work-quality' AND version = 'v1.1-test'")
    assert regression(runner, -0.25, 0) == []
    delta = runner.execute("SELECT work_quality_compare_v1(%s, %s, 'p')",
                           (Jsonb({"overall": 0.5}), Jsonb({"overall": 0.35}))).fetchone()[0]
    assert delta["verdict"] == "same"


# --- completion: what the database computes ----------------------------------------------------


def test_two_runs_the_second_compared_and_regressing_on_overall_alone(runner, connect_as):
    judged(runner, "r1", {PANEL[0]: 0.8, PANEL[1]: 0.7})
    second = judged(runner, "r2", {PANEL[0]: {**reply(0.7), "value_for_money": 0.8},
                                    PANEL[1]: {**reply(0.6), "value_for_money": 0.7}})
    assert second["prev_run_id"] == "r1"
    assert second["comparison"]["overall_delta"] == -0.1 and second["comparison"]["value_delta"] == 0
    assert second["comparison"]["verdict"] == "worse"
    history = connect_as("evalledger_auditor").execute(
        "SELECT run_id, overall, overall_delta, verdict, regression, regression_reasons FROM work_quality_history_v1 "
        "ORDER BY at").fetchall()
    assert history == [("r1", Decimal("0.75"), None, None, False, []),
                       ("r2", Decimal("0.65"), Decimal("-0.1"), "worse", True, ["overall dropped -0.100 (vs r1)"])]


def test_value_for_money_alone_trips_the_gate(runner):
    judged(runner, "r1", {PANEL[0]: 0.8})
    second = judged(runner, "r2", {PANEL[0]: {**reply(0.8), "value_for_money": 0.7}})
    assert second["comparison"]["verdict"] == "same"
    assert runner.execute("SELECT work_quality_is_regression_v1(%s)", (Jsonb(second["comparison"]),)).fetchone()[0] == [
        "value_for_money dropped -0.100 (vs r1)"]


def test_means_spread_note_and_the_skipped_judges(runner):
    sid = start(runner, models=["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro",
                                "vllm:llama", "ollama:qwen", "compat:x"], bot_family="anthropic")
    assert verdict(runner, sid, "openai:gpt-4o", reply(0.6)) == (True, None, None)
    assert verdict(runner, sid, "anthropic:claude-opus-4-7", reply(0.9)) == (True, None, None)
    assert verdict(runner, sid, "google:gemini-1.5-pro", {"overall": 0.5}) == (
        False, "incomplete_scores", "missing [efficacy, completeness, output_quality, restraint, reliability, value_for_money]")
    assert verdict(runner, sid, "vllm:llama", reply(1.5)) == (False, "out_of_scale", "efficacy = 1.5 (scale 0-1)")
    assert verdict(runner, sid, "ollama:qwen", reply(0.5, narrative=" ")) == (False, "off_contract", "no narrative")
    assert verdict(runner, sid, "compat:x", None, response_json=None, error_kind="provider_error",
                   error_message="HTTP 500: boom") == (False, "provider_error", "HTTP 500: boom")
    doc = complete(runner, sid)
    agg = doc["aggregate"]
    assert agg["mean_scores"] == {d: 0.75 for d in DIMS}
    assert agg["disagreement"] == {d: 0.3 for d in DIMS}
    assert [v["model"] for v in agg["verdicts"]] == ["openai:gpt-4o", "anthropic:claude-opus-4-7"]
    assert [v["same_family_as_bot"] for v in agg["verdicts"]] == [False, True]
    assert agg["note"] == (
        "judge anthropic:claude-opus-4-7 shares the assessed run's family (anthropic); "
        "judge google:gemini-1.5-pro skipped: incomplete_scores: missing [efficacy, completeness, output_quality, "
        "restraint, reliability, value_for_money]; "
        "judge vllm:llama skipped: out_of_scale: efficacy = 1.5 (scale 0-1); "
        "judge ollama:qwen skipped: off_contract: no narrative; "
        "judge compat:x skipped: provider_error: HTTP 500: boom")


def test_one_judge_has_no_spread_and_recorded_replies_are_labelled(runner):
    sid = start(runner, models=[PANEL[0]], judges="recorded")
    verdict(runner, sid, PANEL[0], recorded=True)
    doc = complete(runner, sid)
    assert doc["aggregate"]["disagreement"] is None
    assert doc["aggregate"]["note"] == "recorded replies shipped with evalledger, not live calls: openai:gpt-4o"


@pytest.mark.parametrize("confidence", [1.2, "high", None])
def test_confidence_off_contract(runner, confidence):
    sid = start(runner)
    body = reply()
    if confidence is None:
        del body["confidence"]
    else:
        body["confidence"] = confidence
    contributes, kind, message = verdict(runner, sid, PANEL[0], body)
    assert (contributes, kind) == (False, "off_contract") and message.startswith("confidence = ")


def test_relative_judgement_kept_only_with_a_previous_snapshot(runner):
    rel = {"overall": "BETTER ", "efficacy": "n/a", "restraint": "meh", "completeness": "worse"}
    sid = start(runner, "r1")
    verdict(runner, sid, PANEL[0], reply(relative_vs_prev=rel, relative_narrative="x"))
    verdict(runner, sid, PANEL[1])
    first = complete(runner, sid)
    assert "relative_vs_prev" not in first["aggregate"]["verdicts"][0]
    sid = start(runner, "r2")
    verdict(runner, sid, PANEL[0], reply(relative_vs_prev=rel, relative_narrative="clearer"))
    verdict(runner, sid, PANEL[1])
    second = complete(runner, sid)
    assert second["aggregate"]["verdicts"][0]["relative_vs_prev"] == {"overall": "better", "completeness": "worse"}
    assert second["aggregate"]["verdicts"][0]["relative_narrative"] == "clearer"
    assert "relative_vs_prev" not in second["aggregate"]["verdicts"][1]


def test_all_judges_failing_refuses_completion_and_the_run_stays_open(runner, admin):
    sid = start(runner)
    verdict(runner, sid, PANEL[0], None, response_json=None, error_kind="provider_error", error_message="down")
    verdict(runner, sid, PANEL[1], {"not": "a verdict"})
    before = rows(admin)
    with pytest.raises(errors.CheckViolation, match="no judge produced a verdict") as caught:
        complete(runner, sid)
    assert caught.value.sqlstate == "23514"
    assert rows(admin) == before
    assert admin.execute("SELECT completed_at, snapshot_json FROM eval_work_quality_snapshots").fetchone() == (None, None)


def test_completion_needs_every_panel_model(runner):
    sid = start(runner)
    verdict(runner, sid, PANEL[0])
    with pytest.raises(errors.CheckViolation, match="lacks a verdict from anthropic:claude-opus-4-7"):
        complete(runner, sid)


def test_the_runner_cannot_supply_what_the_database_computes(runner, admin):
    with pytest.raises(errors.InsufficientPrivilege):
        start(runner, mean_scores=Jsonb({"overall": 1}))
    with pytest.raises(errors.InsufficientPrivilege, match="computed by the database"):
        start(admin, comparison=Jsonb({}))
    sid = start(runner)
    with pytest.raises(errors.InsufficientPrivilege, match="error_kind out_of_scale is the database's"):
        verdict(runner, sid, PANEL[0], error_kind="out_of_scale")
    with pytest.raises(errors.CheckViolation, match="not on the panel"):
        verdict(runner, sid, "google:gemini-1.5-pro")


# --- imports of the seed's own files -----------------------------------------------------------


def go_document(name: str) -> dict:
    return json.loads((GO_HISTORY / name).read_text())


def import_doc(conn, doc, source="f.json"):
    return conn.execute("INSERT INTO eval_work_quality_snapshots (origin, snapshot_json, source_file, models) "
                        "VALUES ('import', %s, %s, '{}') ON CONFLICT ON CONSTRAINT eval_work_quality_snapshots_identity_key "
                        "DO NOTHING RETURNING snapshot_id", (Jsonb(doc), source)).fetchone()


def test_an_imported_go_history_becomes_rows_once_and_the_next_run_compares_with_it(runner, admin):
    first, second = sorted(p.name for p in GO_HISTORY.glob("*.json"))
    assert import_doc(runner, go_document(first), first) is not None
    assert import_doc(runner, go_document(second), second) is not None
    assert import_doc(runner, go_document(second), second) is None  # idempotent
    got = admin.execute("SELECT run_id, origin, at, persona, tokens, models, prev_run_id, prev_snapshot_id IS NOT NULL "
                        "FROM eval_work_quality_snapshots ORDER BY at").fetchall()
    assert [(r[0], r[1], r[3], r[4], r[5], r[6], r[7]) for r in got] == [
        ("run-a", "import", "Revi", 3456, ["openai/gpt-5.5", "anthropic/claude-sonnet-4-6"], None, False),
        ("run-b", "import", "Revi", 9000, ["openai/gpt-5.5"], "run-a", True)]
    assert got[0][2] == datetime(2026, 6, 25, 10, 0, 0, 123457, tzinfo=timezone.utc)  # microseconds in the column
    assert admin.execute("SELECT snapshot_json ->> 'at' FROM eval_work_quality_snapshots WHERE run_id = 'run-a'"
                         ).fetchone()[0] == "2026-06-25T10:00:00.123456789Z"  # the file's nanoseconds in the document
    assert admin.execute("SELECT model, family, same_family, contributes FROM eval_work_quality_judge_verdicts "
                         "ORDER BY verdict_id").fetchall() == [
        ("openai/gpt-5.5", "openai", False, True), ("anthropic/claude-sonnet-4-6", "anthropic", True, True),
        ("openai/gpt-5.5", "openai", False, True)]
    # A live run of the same target now has the imported run-b as its previous snapshot.
    doc = judged(runner, "r-live", {PANEL[0]: 0.6}, name="review-pr")
    assert doc["prev_run_id"] == "run-b" and doc["comparison"]["verdict"] == "same"


def test_imported_verdicts_come_only_from_the_file(runner):
    (sid,) = import_doc(runner, go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0]))
    with pytest.raises(errors.InsufficientPrivilege, match="come from its file only"):
        verdict(runner, sid, "openai:gpt-4o")


def test_an_import_of_another_schema_version_is_refused(runner):
    doc = go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0])
    with pytest.raises(errors.CheckViolation, match="schema_version 2 is not 1"):
        import_doc(runner, {**doc, "schema_version": 2})


# --- append-only, for every role that could try ------------------------------------------------


@pytest.fixture
def recorded(runner):
    judged(runner, "r1", {PANEL[0]: 0.8, PANEL[1]: 0.7})
    sid = start(runner, "r2")
    verdict(runner, sid, PANEL[0])
    return sid


STATEMENTS = [
    ("UPDATE eval_work_quality_judge_verdicts SET narrative = 'edited'", "append-only: UPDATE refused"),
    ("DELETE FROM eval_work_quality_judge_verdicts", "append-only: DELETE refused"),
    ("DELETE FROM eval_work_quality_snapshots WHERE run_id = 'r1'", "append-only: DELETE refused"),
    ("TRUNCATE eval_work_quality_judge_verdicts", "append-only: TRUNCATE refused"),
    ("TRUNCATE eval_work_quality_snapshots CASCADE", "append-only: TRUNCATE refused"),
    ("UPDATE eval_work_quality_snapshots SET completed_at = now() WHERE run_id = 'r1'", "is complete"),
    ("UPDATE eval_work_quality_snapshots SET name = 'other' WHERE run_id = 'r2'", "only completed_at may be set"),
    ("UPDATE eval_work_quality_snapshots SET mean_scores = '{}' WHERE run_id = 'r1'", "is complete"),
]


@pytest.mark.parametrize("role", ["superuser", "evalledger_owner"])
@pytest.mark.parametrize("statement, says", STATEMENTS)
def test_append_only_refusals_leave_every_row_as_it_was(admin, connect_as, recorded, role, statement, says):
    conn = admin if role == "superuser" else connect_as(role)
    if role == "evalledger_owner":  # it holds no UPDATE, DELETE or TRUNCATE (issue 17)
        says = "permission denied for table eval_work_quality_"
    before = rows(admin)
    with pytest.raises(errors.InsufficientPrivilege, match=says) as caught:
        conn.execute(statement)
    assert caught.value.sqlstate == "42501"
    assert rows(admin) == before


def test_replica_mode_does_not_skip_the_guards(admin, recorded):
    before = rows(admin)
    admin.execute("SET session_replication_role = replica")
    try:
        with pytest.raises(errors.InsufficientPrivilege, match="append-only: DELETE refused"):
            admin.execute("DELETE FROM eval_work_quality_judge_verdicts")
    finally:
        admin.execute("RESET session_replication_role")
    assert rows(admin) == before


def test_the_runner_may_set_completed_at_and_nothing_else(runner, admin, recorded):
    before = rows(admin)
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied"):
        runner.execute("UPDATE eval_work_quality_snapshots SET task = 'x'")
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied"):
        runner.execute("DELETE FROM eval_work_quality_judge_verdicts")
    assert rows(admin) == before


# --- who reads what ----------------------------------------------------------------------------


def test_history_view_revops_hot_tier_auditor_everything_agent_nothing(admin, runner, connect_as):
    old = go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0])
    three_years_ago = datetime.now(timezone.utc) - timedelta(days=3 * 365)
    import_doc(runner, {**old, "name": "old-bot", "at": three_years_ago.strftime("%Y-%m-%dT%H:%M:%SZ")})
    # The tier clock is the recording time, not `at`: the import recorded three years ago.
    with admin.transaction():
        set_clock(admin, "eval_work_quality_snapshots", "created_at", "now() - interval '3 years'", "name = 'old-bot'")
        set_clock(admin, "eval_work_quality_judge_verdicts", "snapshot_created_at", "now() - interval '3 years'",
                  "snapshot_id IN (SELECT snapshot_id FROM evalledger.eval_work_quality_snapshots "
                  "WHERE name = 'old-bot')")
        set_clock(admin, "eval_work_quality_snapshot_uncertainty", "run_created_at", "now() - interval '3 years'",
                  "snapshot_id IN (SELECT snapshot_id FROM evalledger.eval_work_quality_snapshots "
                  "WHERE name = 'old-bot')")
    judged(runner, "r1", {PANEL[0]: 0.8})
    seen = {role: [r[0] for r in connect_as(role).execute("SELECT name FROM work_quality_history_v1 ORDER BY name")]
            for role in ("evalledger_revops", "evalledger_auditor")}
    assert seen == {"evalledger_revops": ["review-pr"], "evalledger_auditor": ["old-bot", "review-pr"]}
    agent = connect_as("evalledger_agent")
    for relation in ("work_quality_history_v1", "eval_work_quality_snapshots", "eval_work_quality_judge_verdicts"):
        with pytest.raises(errors.InsufficientPrivilege):
            agent.execute(f"SELECT * FROM evalledger.{relation}")


def test_a_retry_keeps_a_verdict_that_stands_once_another_judge_contributed(runner):
    """Issue 37, item 7, at the store: while no judge of a run has contributed, a judge that failed on
    content may be asked again; once another has contributed, its failure is its verdict. A recorded
    reply (never started) and a live call about to start are then told apart from every other
    refusal: SETTLED and False, which the run notes and skips; any other refusal still raises."""
    from evalledger.judges.providers import JudgeCall
    from evalledger.judges.specs import parse_model_spec
    from evalledger.suites.work_quality import store

    sid = start(runner)
    for model in PANEL:
        assert verdict(runner, sid, model, {"overall": 3})[1] == "incomplete_scores"
    first, second = (JudgeCall(spec=parse_model_spec(m), text="reply", parsed=reply()) for m in PANEL)
    assert store.record_verdict(runner, sid, first, recorded=False)["contributes"]
    assert store.record_verdict(runner, sid, second, recorded=False) == store.SETTLED
    assert store.record_start(runner, sid, PANEL[1], 0.01) is False
    assert runner.execute("SELECT count(*) FROM eval_work_quality_judge_verdicts WHERE model = %s",
                          (PANEL[1],)).fetchone()[0] == 1
    with pytest.raises(errors.CheckViolation, match="judged by live judges"):
        store.record_verdict(runner, sid, second, recorded=True)
