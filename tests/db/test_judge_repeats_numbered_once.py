"""Judge repeats (issue 36, item 4) in the database: each repeat a numbered verdict row, once, within
the run's K, tried as the runner; a judge's score is its mean over its repeats; the judges' noise
told from the items' variance against a Python reference; a straddling item flagged by the
rubric's own threshold."""

from __future__ import annotations

import random
import statistics

import psycopg
import pytest
from psycopg.types.json import Jsonb

PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]


def start_run(conn, repeats: int, **overrides) -> int:
    values = {"corpus_source": "db", "sample_limit": 10, "seed": 1, "n_takes": 3, "corpus_sha8": "aaaaaaaa",
              "prompt_sha8": "bbbbbbbb", "models": PANEL, "repeats": repeats, **overrides}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_takes_quality_runs ({cols}) VALUES ({marks}) RETURNING id",
                        values).fetchone()[0]


def verdict(conn, run_id, model, repeat_no, scores=None, cycle=1):
    values = {"run_id": run_id, "cycle": cycle, "model": model, "recorded": False, "repeat_no": repeat_no,
              "response_json": Jsonb({"scores": {d: 8 for d in DIMS} if scores is None else scores,
                                      "feedback": "fine", "improvements": []})}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_takes_quality_judge_verdicts ({cols}) VALUES ({marks}) "
                        "RETURNING contributes", values).fetchone()[0]


def complete(conn, run_id) -> dict:
    return conn.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,)).fetchone()[0]


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def test_a_repeat_outside_the_runs_k_is_refused(runner):
    run_id = start_run(runner, 3)
    for bad in (0, 4, -1):
        with pytest.raises(psycopg.errors.CheckViolation, match="asks each judge 3 time"):
            verdict(runner, run_id, PANEL[0], bad)
    one = start_run(runner, 1, prompt_sha8="cccccccc")
    with pytest.raises(psycopg.errors.CheckViolation, match="repeat 2 is not one of them"):
        verdict(runner, one, PANEL[0], 2)
    with pytest.raises(psycopg.errors.CheckViolation):
        start_run(runner, 11, prompt_sha8="dddddddd")
    with pytest.raises(psycopg.errors.CheckViolation):
        start_run(runner, 0, prompt_sha8="eeeeeeee")


def test_each_repeat_is_answered_once(runner, admin):
    run_id = start_run(runner, 3)
    assert verdict(runner, run_id, PANEL[0], 2) is True
    with pytest.raises(psycopg.errors.CheckViolation, match=r"has its verdict in cycle 1 \(repeat 2\)"):
        verdict(runner, run_id, PANEL[0], 2, {d: 3 for d in DIMS})
    # The first repeat of the same judge is a verdict of its own, and refused once answered too.
    assert verdict(runner, run_id, PANEL[0], 1) is True
    with pytest.raises(psycopg.errors.CheckViolation, match=r"has its verdict in cycle 1 of"):
        verdict(runner, run_id, PANEL[0], 1)
    # The widened unique key holds (run, cycle, model, repeat, retry) once (raced below).
    other = admin.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                          "WHERE conname = 'eval_takes_quality_judge_verdicts_once'").fetchone()[0]
    assert other == "UNIQUE (run_id, cycle, model, repeat_no, retry_no)"
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        runner.execute("UPDATE eval_takes_quality_judge_verdicts SET repeat_no = 3 WHERE run_id = %s", (run_id,))
    assert admin.execute("SELECT array_agg(repeat_no ORDER BY repeat_no) FROM eval_takes_quality_judge_verdicts "
                         "WHERE run_id = %s", (run_id,)).fetchone()[0] == [1, 2]


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_two_sessions_racing_to_answer_one_repeat_store_one(connect_as, admin, isolation):
    """Two runner sessions, each in its own time zone and at the isolation level named, answer the
    same repeat at once: the second waits on the first, and once the first commits it is refused;
    one row is stored, with the first's scores."""
    import threading

    first, second = connect_as("evalledger_runner"), connect_as("evalledger_runner")
    run_id = start_run(first, 3)
    outcome = {}
    for conn, zone in ((first, "Pacific/Kiritimati"), (second, "America/Adak")):
        conn.execute(f"SET TimeZone = '{zone}'")
    with first.transaction():
        first.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
        verdict(first, run_id, PANEL[0], 2, {d: 9 for d in DIMS})

        def race():
            try:
                with second.transaction():
                    second.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                    verdict(second, run_id, PANEL[0], 2, {d: 2 for d in DIMS})
                outcome["stored"] = True
            except psycopg.Error as exc:
                outcome["refused"] = exc.sqlstate

        thread = threading.Thread(target=race)
        thread.start()
        thread.join(1.0)
        assert thread.is_alive(), "the second answer did not wait for the first"
    thread.join(30)
    # Refused as a second answer: the unique key (23505) or, at repeatable read, a serialization failure.
    assert outcome.get("refused") in ("23505", "40001"), outcome
    assert admin.execute("SELECT count(*), min((response_json -> 'scores' ->> 'accuracy')::int) "
                         "FROM eval_takes_quality_judge_verdicts WHERE run_id = %s AND repeat_no = 2",
                         (run_id,)).fetchone() == (1, 9)


def test_rows_stored_before_are_repeat_1_of_a_run_of_1(runner, admin):
    run_id = start_run(runner, 1)
    runner.execute("INSERT INTO eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, response_json) "
                   "VALUES (%s, 1, %s, false, %s)", (run_id, PANEL[0], Jsonb({d: 8 for d in DIMS})))
    assert admin.execute("SELECT r.repeats, v.repeat_no FROM eval_takes_quality_runs r "
                         "JOIN eval_takes_quality_judge_verdicts v ON v.run_id = r.id").fetchone() == (1, 1)


def test_a_run_is_whole_only_with_every_repeat(runner):
    run_id = start_run(runner, 3)
    for model in PANEL:
        for k in (1, 2):
            verdict(runner, run_id, model, k)
    verdict(runner, run_id, PANEL[1], 3)
    with pytest.raises(psycopg.errors.CheckViolation,
                       match="is not whole: cycle 1 lacks openai:gpt-4o repeat 3, google:gemini-1.5-pro repeat 3"):
        complete(runner, run_id)


def test_a_judges_score_is_its_mean_over_its_repeats(runner):
    run_id = start_run(runner, 3)
    # gpt-4o scores accuracy 4, 6 and 8 (mean 6); the others 8 every time: the dimension mean is
    # (6 + 8 + 8) / 3 = 7.33 and its minimum the judge mean 6, not the single 4 (a pass).
    for k, acc in enumerate((4, 6, 8), start=1):
        verdict(runner, run_id, PANEL[0], k, {**{d: 8 for d in DIMS}, "accuracy": acc})
    for model in PANEL[1:]:
        for k in (1, 2, 3):
            verdict(runner, run_id, model, k)
    receipt = complete(runner, run_id)
    assert receipt["verdict"] == "pass" and receipt["repeats"] == 3
    assert receipt["successes_per_cycle"] == [3]
    assert receipt["scores"]["accuracy"] == {"mean": 7.33, "min": 6, "max": 8, "scores": [6, 8, 8],
                                             "per_model": dict(zip(PANEL, [6, 8, 8]))}
    assert receipt["verdictMessage"] == "PASS: every dim mean >=7 and min >=5 (3 of 3 models contributed; overall 7.87)"
    # Unequal repeats, shown to 4 decimals, decided on the exact mean.
    run_2 = start_run(runner, 3, corpus_sha8="ffffffff")
    for k, acc in enumerate((7, 7, 6), start=1):
        verdict(runner, run_2, PANEL[0], k, {**{d: 7 for d in DIMS}, "accuracy": acc})
        verdict(runner, run_2, PANEL[1], k, {d: 7 for d in DIMS})
        verdict(runner, run_2, PANEL[2], k, {d: 7 for d in DIMS})
    receipt = complete(runner, run_2)
    assert receipt["scores"]["accuracy"]["per_model"][PANEL[0]] == 6.6667
    assert receipt["verdict"] == "fail"
    assert receipt["verdictMessage"].startswith("FAIL: accuracy mean 6.89 < 7 ")


def _record_runs(runner, noisy: dict[int, list[list[list[float]]]]) -> list[int]:
    """Completed runs of K repeats: noisy[i][judge][repeat] is the accuracy score (others 8)."""
    ids = []
    for i, judges in noisy.items():
        run_id = start_run(runner, len(judges[0]), corpus_sha8=f"{i:08x}")
        for model, repeats in zip(PANEL, judges):
            for k, score in enumerate(repeats, start=1):
                verdict(runner, run_id, model, k, {**{d: 8 for d in DIMS}, "accuracy": score})
        complete(runner, run_id)
        ids.append(run_id)
    return ids


def test_the_variance_split_matches_a_python_reference(runner, connect_as):
    rng = random.Random(36)
    # Items (runs) differ by up to 2 points; each judge repeats with noise of about 0.7.
    noisy = {i: [[round(min(10, max(1, base + rng.gauss(0, 0.7))), 1) for _ in range(3)] for _ in PANEL]
             for i, base in enumerate((6.0, 7.0, 8.0, 7.5), start=1)}
    _record_runs(runner, noisy)
    groups = [repeats for judges in noisy.values() for repeats in judges]
    judge_variance = (sum((len(g) - 1) * statistics.variance(g) for g in groups)
                      / sum(len(g) - 1 for g in groups))
    item_variance = statistics.variance([statistics.fmean([s for g in judges for s in g])
                                         for judges in noisy.values()])
    row = connect_as("evalledger_revops").execute(
        "SELECT items, calls, max_repeats, judge_variance, item_variance FROM evalledger.takes_quality_repeat_variance_v1 "
        "WHERE dimension = 'accuracy'").fetchone()
    assert row[:3] == (4, 36, 3)
    assert row[3] == pytest.approx(judge_variance, rel=1e-12)
    assert row[4] == pytest.approx(item_variance, rel=1e-12)
    # A dimension every judge scored 8 every time: no noise, no spread between items.
    flat = connect_as("evalledger_auditor").execute(
        "SELECT judge_variance, item_variance FROM evalledger.takes_quality_repeat_variance_v1 "
        "WHERE dimension = 'attribution'").fetchone()
    assert flat == (0, 0)


def test_an_item_whose_repeats_straddle_the_rubrics_threshold_is_flaky(runner, connect_as, admin):
    mean_at_least, min_at_least = admin.execute(
        "SELECT (definition -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric, "
        "(definition -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric "
        "FROM rubric WHERE rubric_id = active_rubric_v1('takes-quality')").fetchone()
    below, above = float(mean_at_least) - 0.5, float(mean_at_least) + 0.5
    ids = _record_runs(runner, {
        1: [[below, above, above], [8, 8, 8], [8, 8, 8]],            # straddles the mean threshold
        2: [[above, above, above + 1], [8, 8, 8], [9, 9, 9]],        # steady
        3: [[float(min_at_least) - 1, float(min_at_least), 8], [8, 8, 8], [8, 8, 8]],  # straddles both
    })
    rows = connect_as("evalledger_revops").execute(
        "SELECT run_id, dimension, judge_model, cycle, repeats, rule, threshold FROM evalledger.takes_quality_flaky_v1 "
        "ORDER BY run_id, rule").fetchall()
    assert rows == [(ids[0], "accuracy", PANEL[0], 1, 3, "every_dim_mean_at_least", mean_at_least),
                    (ids[2], "accuracy", PANEL[0], 1, 3, "every_dim_mean_at_least", mean_at_least),
                    (ids[2], "accuracy", PANEL[0], 1, 3, "every_dim_min_at_least", min_at_least)]
    assert connect_as("evalledger_auditor").execute(
        "SELECT flaky_items FROM evalledger.takes_quality_repeat_variance_v1 WHERE dimension = 'accuracy'"
    ).fetchone()[0] == 2
    # The runner reads no BI view.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        runner.execute("SELECT * FROM evalledger.takes_quality_flaky_v1")


# --- work-quality ----------------------------------------------------------------------------


def test_work_quality_repeats_are_numbered_once_within_k_and_averaged_per_judge(runner):
    from tests.db.test_work_quality_db import DIMS as WQ_DIMS, PANEL as WQ_PANEL, complete as wq_complete, reply, start
    from tests.db.test_work_quality_db import verdict as wq_verdict

    sid = start(runner, repeats=2)
    for bad in (0, 3):
        with pytest.raises(psycopg.errors.CheckViolation, match="asks each judge 2 time"):
            wq_verdict(runner, sid, WQ_PANEL[0], repeat_no=bad)
    wq_verdict(runner, sid, WQ_PANEL[0], reply(0.6), repeat_no=1)
    with pytest.raises(psycopg.errors.CheckViolation, match="has its verdict"):
        wq_verdict(runner, sid, WQ_PANEL[0], reply(0.9), repeat_no=1)
    wq_verdict(runner, sid, WQ_PANEL[0], reply(0.8), repeat_no=2)
    wq_verdict(runner, sid, WQ_PANEL[1], reply(0.9), repeat_no=1)
    with pytest.raises(psycopg.errors.CheckViolation, match="lacks a verdict from anthropic:claude-opus-4-7 repeat 2"):
        wq_complete(runner, sid)
    wq_verdict(runner, sid, WQ_PANEL[1], reply(0.9), repeat_no=2)
    document = wq_complete(runner, sid)
    # gpt-4o's mean 0.7 and claude's 0.9: the mean 0.8 and the spread 0.2 are over the judges' means.
    assert document["aggregate"]["mean_scores"] == {d: 0.8 for d in WQ_DIMS}
    assert document["aggregate"]["disagreement"] == {d: 0.2 for d in WQ_DIMS}
    assert [v["model"] for v in document["aggregate"]["verdicts"]] == [WQ_PANEL[0]] * 2 + [WQ_PANEL[1]] * 2
    with pytest.raises(psycopg.errors.CheckViolation):
        start(runner, run_id="r2", repeats=11)
