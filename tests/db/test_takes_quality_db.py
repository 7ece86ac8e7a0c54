"""takes-quality in the database: what the triggers decide, append-only, and who may do what."""

from __future__ import annotations

import math

import psycopg
import pytest
from psycopg.types.json import Jsonb

PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]


def start_run(conn, **overrides) -> int:
    values = {"corpus_source": "db", "sample_limit": 10, "seed": 1, "n_takes": 3, "corpus_sha8": "aaaaaaaa",
              "prompt_sha8": "bbbbbbbb", "models": PANEL, **overrides}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_takes_quality_runs ({cols}) VALUES ({marks}) RETURNING id", values).fetchone()[0]


def verdict(conn, run_id, model, scores=None, cycle=1, **extra):
    values = {"run_id": run_id, "cycle": cycle, "model": model, "recorded": False,
              "response_json": Jsonb({"scores": scores if scores is not None else {d: 8 for d in DIMS},
                                      "feedback": "fine", "improvements": ["x"]}), **extra}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_takes_quality_judge_verdicts ({cols}) VALUES ({marks}) "
                        "RETURNING contributes, error_kind, error_message", values).fetchone()


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def test_fingerprints_are_the_databases(runner, admin):
    run_id = start_run(runner)
    models_sha8, rubric_sha8 = runner.execute(
        "SELECT models_sha8, rubric_sha8 FROM eval_takes_quality_runs WHERE id = %s", (run_id,)).fetchone()
    import hashlib

    assert models_sha8 == hashlib.sha256("\n".join(sorted(PANEL)).encode()).hexdigest()[:8]
    fingerprint = admin.execute("SELECT fingerprint FROM rubric WHERE rubric_id = active_rubric_v1('takes-quality')"
                                ).fetchone()[0]
    assert rubric_sha8 == fingerprint[:8]
    # The same eval with the panel reordered is the same run.
    again = runner.execute(
        "INSERT INTO eval_takes_quality_runs (corpus_source, sample_limit, seed, n_takes, corpus_sha8, prompt_sha8, models) "
        "VALUES ('db', 10, 2, 3, 'aaaaaaaa', 'bbbbbbbb', %s) "
        "ON CONFLICT ON CONSTRAINT eval_takes_quality_runs_identity_key DO NOTHING", (list(reversed(PANEL)),))
    assert again.rowcount == 0


def test_the_database_decides_contribution(runner):
    run_id = start_run(runner)
    assert verdict(runner, run_id, PANEL[0]) == (True, None, None)
    assert verdict(runner, run_id, PANEL[1], {"accuracy": 8}) == (
        False, "incomplete_scores", "missing [attribution, weight_calibration, kind_classification, signal_density]")
    assert verdict(runner, run_id, PANEL[2], {**{d: 8 for d in DIMS}, "signal_density": 10.5}) == (
        False, "out_of_scale", "signal_density = 10.5 (scale 1-10)")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="error_kind out_of_scale is the database's"):
        verdict(runner, run_id, PANEL[0], cycle=2, error_kind="out_of_scale")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # a computed column: no INSERT grant
        runner.execute("INSERT INTO eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, contributes) "
                       "VALUES (%s, 3, %s, false, true)", (run_id, PANEL[0]))
    with pytest.raises(psycopg.errors.CheckViolation, match="not on the panel"):
        verdict(runner, run_id, "openai:gpt-4.1", cycle=2)
    decided = runner.execute("SELECT takes_quality_cycle_v2(%s, 1)", (run_id,)).fetchone()[0]
    assert decided["verdict"] == "inconclusive" and decided["contributed"] == 1


def _full(**over):
    return {**{d: 8 for d in DIMS}, **over}


_ALL_MISSING = "missing [accuracy, attribution, weight_calibration, kind_classification, signal_density]"
# (what the judge's reply parsed to, then what the database decides: error kind, message, scores)
CONTRIBUTION_CASES = [
    (_full(accuracy=10, attribution=7), (None, None, _full(accuracy=10, attribution=7))),
    ({"scores": _full(accuracy=1, signal_density=9.5), "narrative": "ok"},
     (None, None, _full(accuracy=1, signal_density=9.5))),
    ({**_full(), "extra": 99}, (None, None, _full())),  # keys the rubric does not name are ignored
    ({"scores": "n/a", **_full(accuracy=9)}, (None, None, _full(accuracy=9))),  # not an object: top level
    (None, ("parse_failed", "no JSON object in the reply", None)),
    ([{"accuracy": 7}], ("parse_failed", "no JSON object in the reply", None)),
    ("7", ("parse_failed", "no JSON object in the reply", None)),
    ({k: v for k, v in _full().items() if k != "signal_density"},
     ("incomplete_scores", "missing [signal_density]", None)),
    ({"scores": {"accuracy": None}}, ("incomplete_scores", _ALL_MISSING, None)),  # null is missing
    ({"scores": _full(attribution=None, kind_classification=None)},
     ("incomplete_scores", "missing [attribution, kind_classification]", None)),
    ({"accuracy": 11}, ("incomplete_scores", _ALL_MISSING.replace("accuracy, ", ""), None)),  # missing first
    (_full(accuracy=11), ("out_of_scale", "accuracy = 11 (scale 1-10)", None)),
    (_full(accuracy=0.99), ("out_of_scale", "accuracy = 0.99 (scale 1-10)", None)),
    (_full(accuracy=10.001), ("out_of_scale", "accuracy = 10.001 (scale 1-10)", None)),
    (_full(accuracy="8"), ("out_of_scale", 'accuracy = "8" (scale 1-10)', None)),
    (_full(accuracy=True), ("out_of_scale", "accuracy = true (scale 1-10)", None)),
    (_full(accuracy=[8]), ("out_of_scale", "accuracy = [8] (scale 1-10)", None)),
    (_full(accuracy=math.nan), ("out_of_scale", 'accuracy = "NaN" (scale 1-10)', None)),
    (_full(accuracy=math.inf), ("out_of_scale", 'accuracy = "Infinity" (scale 1-10)', None)),
    (_full(accuracy=-math.inf), ("out_of_scale", 'accuracy = "-Infinity" (scale 1-10)', None)),
    (_full(attribution=0, signal_density=11), ("out_of_scale", "attribution = 0 (scale 1-10)", None)),
]


def test_the_database_decides_every_reason_a_parsed_reply_does_not_contribute(runner):
    """What the runner sends for each shape of parsed reply (NaN and infinities made JSON-safe by
    the runner), and what the database makes of it: the one home of the contribution rule."""
    from evalledger.judges.providers import JudgeCall
    from evalledger.judges.specs import parse_model_spec
    from evalledger.suites.takes_quality import store

    decided = []
    for case, (parsed, _) in enumerate(CONTRIBUTION_CASES, start=1):
        run_id = start_run(runner, corpus_sha8=f"{case:08x}", slug_prefix=f"case-{case}")
        call = JudgeCall(spec=parse_model_spec(PANEL[0]), text="reply", parsed=parsed, output_tokens=10)
        row = store.record_verdict(runner, run_id, 1, call, recorded=False)
        decided.append((row["error_kind"], row["error_message"], row["scores"]))
        assert row["contributes"] is (row["error_kind"] is None)
    assert decided == [expected for _, expected in CONTRIBUTION_CASES]
    stored = runner.execute("SELECT count(*) FILTER (WHERE contributes), count(*) "
                            "FROM eval_takes_quality_judge_verdicts").fetchone()
    assert stored == (4, len(CONTRIBUTION_CASES))


@pytest.mark.parametrize("scores, verdict_expected", [
    ([8, 8, 8], "pass"),
    ([7, 7, 7], "pass"),
    ([9, 9, 4], "fail"),      # mean 7.33 but a minimum under 5
    ([7, 7, 6.97], "fail"),   # mean 6.99
    ([7, 7, 6.99], "fail"),   # mean 6.9967: 7.00 to two decimals, still under 7
    ([7, 7.01, 6.99], "pass"),  # mean exactly 7
])
def test_pass_rule_at_its_boundaries(runner, scores, verdict_expected):
    run_id = start_run(runner)
    for model, score in zip(PANEL, scores):
        verdict(runner, run_id, model, {**{d: 8 for d in DIMS}, "accuracy": score})
    decided = runner.execute("SELECT takes_quality_cycle_v2(%s, 1)", (run_id,)).fetchone()[0]
    assert decided["verdict"] == verdict_expected


def test_rounding_is_for_display_not_the_boundary(runner):
    run_id = start_run(runner)
    for model, score in zip(PANEL, [7, 7, 6.99]):
        verdict(runner, run_id, model, {**{d: 8 for d in DIMS}, "accuracy": score})
    decided = runner.execute("SELECT takes_quality_cycle_v2(%s, 1)", (run_id,)).fetchone()[0]
    assert decided["scores"]["accuracy"]["mean"] == 7
    assert decided["message"].startswith("FAIL: accuracy mean 6.9967 < 7 (3 of 3 models contributed")


def test_completion_needs_every_verdict_and_happens_once(runner):
    run_id = start_run(runner)
    verdict(runner, run_id, PANEL[0])
    with pytest.raises(psycopg.errors.CheckViolation, match="cycle 1 lacks anthropic:claude-opus-4-7, google"):
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,))
    verdict(runner, run_id, PANEL[1])
    verdict(runner, run_id, PANEL[2], error_kind="provider_error", error_message="HTTP 500", response_json=None)
    # A provider error decides nothing: the run is not final until the call is retried.
    with pytest.raises(psycopg.errors.CheckViolation, match=r"is not final: cycle 1 google:gemini-1.5-pro "
                                                            r"\(provider_error\) failed outside the judges' content"):
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,))
    open_receipt = runner.execute("SELECT takes_quality_receipt_v3(%s)", (run_id,)).fetchone()[0]
    assert open_receipt["final"] is False and open_receipt["verdict"] == "pass"
    assert open_receipt["errors"] == ["cycle 1 google:gemini-1.5-pro: provider_error: HTTP 500"]
    assert open_receipt["verdictMessage"].endswith("; not final: 1 call(s) failed outside the judges' content, "
                                                   "and running the same eval again retries them")
    verdict(runner, run_id, PANEL[2])  # the retry
    with pytest.raises(psycopg.errors.CheckViolation, match="has its verdict in cycle 1 of takes-quality run"):
        verdict(runner, run_id, PANEL[2])  # an answer is never replaced
    receipt = runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert receipt["verdict"] == "pass" and receipt["successes_per_cycle"] == [3] and receipt["final"] is True
    assert receipt["errors"] == ["cycle 1 google:gemini-1.5-pro: provider_error: HTTP 500; retried"]
    assert receipt["verdictMessage"] == "PASS: every dim mean >=7 and min >=5 (3 of 3 models contributed; overall 8)"
    # Completed once: completing again finds no open run, and changes nothing.
    assert runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,)).fetchone()[0] is None
    assert runner.execute("SELECT receipt_json FROM eval_takes_quality_runs WHERE id = %s",
                          (run_id,)).fetchone()[0] == receipt
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="no open takes-quality run [0-9]+ takes verdicts"):
        verdict(runner, run_id, PANEL[0], cycle=2)
    for column in ("verdict", "completed_at"):  # no UPDATE is granted: completion is the function's
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table"):
            runner.execute(f"UPDATE eval_takes_quality_runs SET {column} = {column} WHERE id = %s", (run_id,))


@pytest.mark.parametrize("table", ["take", "eval_takes_quality_runs", "eval_takes_quality_judge_verdicts"])
def test_append_only_even_for_the_owner(admin, runner, connect_as, table):
    """The owner role holds no UPDATE, DELETE or TRUNCATE (issue 17); the superuser, who holds them,
    meets the append-only guard."""
    run_id = start_run(runner)
    verdict(runner, run_id, PANEL[0])
    runner.execute("INSERT INTO take (take_sha, slug, kind, holder, weight, since, source, claim) "
                   "VALUES (repeat('a', 64), 'a/b', 'take', 'ann', 0.5, '2026', 's', 'c')")
    statements = [f"DELETE FROM {table}", f"TRUNCATE {table} CASCADE"]
    if table != "eval_takes_quality_runs":
        statements.append(f"UPDATE {table} SET created_at = now()" if table != "take" else "UPDATE take SET claim = 'x'")
    for conn, says in ((connect_as("evalledger_owner"), f"permission denied for table {table}"), (admin, "append-only")):
        for statement in statements:
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=says):
                conn.execute(statement)
    assert admin.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1


def test_readers_read_and_agents_get_nothing(runner, connect_as):
    start_run(runner)
    for role in ("evalledger_revops", "evalledger_auditor"):
        assert connect_as(role).execute("SELECT count(*) FROM eval_takes_quality_runs").fetchone()[0] == 1
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            connect_as(role).execute("INSERT INTO take (take_sha, slug, kind, holder, weight, since, source, claim) "
                                     "VALUES (repeat('b', 64), 'a', 'take', 'h', 0.5, '2026', 's', 'c')")
    agent = connect_as("evalledger_agent")  # not even USAGE on the schema: nothing resolves
    refused = (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedTable, psycopg.errors.UndefinedFunction)
    for table in ("take", "eval_takes_quality_runs", "eval_takes_quality_judge_verdicts"):
        with pytest.raises(refused):
            agent.execute(f"SELECT 1 FROM evalledger.{table}")
    with pytest.raises(refused):
        agent.execute("SELECT evalledger.takes_quality_cycle_v2(1, 1)")


def test_ddl_guard_keeps_the_triggers(admin):
    if not admin.execute("SELECT count(*) FROM pg_event_trigger WHERE evtname = 'evalledger_ddl_guard_v1'").fetchone()[0]:
        pytest.skip("event triggers need a superuser")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="ENABLE ALWAYS"):
        admin.execute("ALTER TABLE eval_takes_quality_judge_verdicts DISABLE TRIGGER eval_takes_quality_judge_verdicts_10_admit")


def test_a_judge_of_the_targets_family_is_flagged(runner, admin):
    admin.execute("INSERT INTO target (target_id, kind, display_name, model_family) "
                  "VALUES ('takes-x', 'corpus', 'Takes extracted by an OpenAI model', 'openai')")
    run_id = start_run(runner, target_id="takes-x")
    verdict(runner, run_id, PANEL[0])
    verdict(runner, run_id, PANEL[1])
    flags = runner.execute("SELECT model, family, same_family FROM eval_takes_quality_judge_verdicts "
                           "ORDER BY model").fetchall()
    assert flags == [("anthropic:claude-opus-4-7", "anthropic", False), ("openai:gpt-4o", "openai", True)]


# --- regress, decided by the database ------------------------------------------------------------


def _regression(conn, baseline, run_id, threshold=None):
    return conn.execute("SELECT takes_quality_regression_v1(%s, %s, %s)",
                        (Jsonb(baseline), run_id, threshold)).fetchone()[0]


def test_the_database_decides_a_regression_against_a_baseline(runner):
    """takes_quality_regression_v1 is the one home of seed 000's regress rule: a mean (or the overall)
    dropping by more than the threshold (default 0.5) is a regression, exactly the threshold is not
    (numeric: 7.3 - 7.8 is -0.5, not -0.5000000000000004), and a side without a mean is inconclusive.
    The "now" side is the run as the ledger holds it, whatever the caller says of it."""
    from decimal import Decimal

    run_id = start_run(runner)
    for model in PANEL:
        verdict(runner, run_id, model, {**{d: 8 for d in DIMS}, "accuracy": 7})
    now = runner.execute("SELECT takes_quality_complete_v1(%s)", (run_id,)).fetchone()[0]
    assert now["scores"]["accuracy"]["mean"] == 7 and now["overall_score"] == 7.8
    baseline = {**now, "scores": {d: {**now["scores"][d]} for d in DIMS}}
    same = _regression(runner, baseline, run_id)
    assert (same["outcome"], same["regressed"], same["warnings"], same["threshold"]) == ("ok", [], [], 0.5)
    assert [r["dimension"] for r in same["rows"]] == [*DIMS, "overall"]
    assert runner.execute("SELECT takes_quality_threshold_v1(NULL)").fetchone()[0] == Decimal("0.5")

    baseline["scores"]["accuracy"]["mean"] = 7.5  # a drop of exactly 0.5: not more than the threshold
    baseline["scores"]["signal_density"]["mean"] = 8.6  # 0.6
    baseline["overall_score"] = 8.3
    baseline["prompt_sha8"] = "99999999"
    worse = _regression(runner, baseline, run_id)
    assert worse["outcome"] == "regression" and worse["regressed"] == ["signal_density"]
    assert worse["rows"][0] == {"dimension": "accuracy", "baseline": 7.5, "now": 7, "delta": -0.5, "regressed": False}
    assert worse["rows"][-1]["delta"] == -0.5 and not worse["rows"][-1]["regressed"]
    assert worse["warnings"] == ["prompt_sha8 differs: 99999999 (baseline) vs bbbbbbbb (now)"]
    lenient = _regression(runner, baseline, run_id, Decimal("0.6"))
    assert (lenient["outcome"], lenient["threshold"]) == ("ok", 0.6)
    strict = _regression(runner, baseline, run_id, 0)
    assert strict["regressed"] == ["accuracy", "signal_density", "overall"]

    baseline["scores"]["attribution"]["mean"] = None  # an inconclusive baseline: nothing to compare
    assert _regression(runner, baseline, run_id, Decimal("0.6"))["outcome"] == "inconclusive"
    assert _regression(runner, baseline, run_id)["outcome"] == "regression"  # a drop still says so

    for bad in (Decimal("-0.1"), Decimal("NaN")):
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="regress threshold is a finite number"):
            _regression(runner, baseline, run_id, bad)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="not a takes-quality receipt"):
        _regression(runner, {"scores": [1]}, run_id)
    with pytest.raises(psycopg.errors.NoDataFound, match="no takes-quality run 999999"):
        _regression(runner, baseline, 999999)
