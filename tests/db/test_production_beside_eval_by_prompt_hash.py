"""Production beside eval (issue 40, item 3): a catalog question production also asked is matched to
the captured queries by prompt hash (prompt_normal_hash_v1 of the question's text and of the
captured query: spelling differences the normal form removes still match, a change of case or
wording does not), one row per prompt hash and brain version from its latest run; the overlap is
the replay's own recall, Jaccard and rank-biased overlap as the database computes them, against
production's latest captured row; the eval's verdict shows only once the run is decided. Each role
reads it as the other production-versus-eval panel: auditors everything retained, RevOps the hot
tier, a reviewer, the runner and an agent nothing; the dashboards show the panel or say why not."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from fractions import Fraction

import psycopg
import pytest

from tests.builders import SHA_A, prompt_hash, record_run
from tests.conftest import capture_times_since, make_capture_partition
from tests.db.insider_logins import logins  # noqa: F401 (a fixture)
from tests.db.test_replay_drift_computed_by_the_database import close, jaccard, rbo, recall

SHA_OTHER = prompt_hash("You are the test brain. Prompt beside.")
CAPTURE = ("INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, vector_enabled, "
           "expansion_applied, latency_ms, remote, capture_key, created_at) "
           "VALUES ('query', %s, %s, true, false, 10, true, gen_random_uuid(), %s) RETURNING id")
COLUMNS = ("question_id, brain_under_test, system_prompt_hash, eval_runs, eval_run_id, production_asks, capture_id, "
           "production_slugs, eval_sources, recall, jaccard, rbo, run_decision, question_passed, prompt_hash")


def fail_q02(number, row):
    if number == 2:
        row["hallucinations_detected"] = 1


@pytest.fixture
def ledger(admin, connect_as, reviewer_id):
    """Two brain versions asked questions Q01-Q03 (their texts `question EVAL-Qnn`): AGT-901 on prompt A
    twice (the latest run completed, Q02 failed), on another prompt once, left open; production
    asked Q01 once, Q02 twice spelt otherwise, Q03 only 25 months ago (cold), and `question
    eval-q03` (another case) and something else now."""
    runner = connect_as("evalledger_runner")
    since = capture_times_since(admin, 4)
    cold_month = (datetime.now(timezone.utc) - timedelta(days=760)).date().replace(day=1)
    make_capture_partition(admin, cold_month)
    record_run(runner, reviewer_id, count=3, started_at=datetime.now(timezone.utc) - timedelta(hours=3))
    latest = record_run(runner, reviewer_id, count=3, bend=fail_q02).eval_run_id
    still_open = record_run(runner, reviewer_id, count=3, complete=False, system_prompt_hash=SHA_OTHER)
    ids = {
        "q01": admin.execute(CAPTURE, ("question EVAL-Q01", ["src-given", "src-stale"], since)).fetchone()[0],
        "q02_old": admin.execute(CAPTURE, ("question EVAL-Q02", ["x"], since + timedelta(minutes=1))).fetchone()[0],
        # A no-break space, a zero-width space and a trailing tab: the same prompt in normal form.
        "q02": admin.execute(CAPTURE, ("question\u00a0EVAL-\u200bQ02\t", ["wiki", "src-stale", "src-given"],
                                       since + timedelta(minutes=2))).fetchone()[0],
        "q03_cold": admin.execute(CAPTURE, ("question EVAL-Q03", ["src-given"],
                                            datetime(cold_month.year, cold_month.month, 2, tzinfo=timezone.utc))
                                  ).fetchone()[0],
    }
    admin.execute(CAPTURE, ("question eval-q03", ["src-given"], since + timedelta(minutes=3)))
    admin.execute(CAPTURE, ("what changed in pipeline?", ["src-given"], since + timedelta(minutes=4)))
    decision = admin.execute("SELECT decision::text FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                             (latest,)).fetchone()[0]
    return {"latest": latest, "open": still_open, "decision": decision, **ids}


def seen(conn) -> dict:
    return {(r[0], r[2]): r for r in conn.execute(f"SELECT {COLUMNS} FROM evalledger.production_beside_eval_v1")}


def test_a_question_production_asked_stands_beside_its_eval_by_prompt_hash(ledger, logins):  # noqa: F811
    rows = seen(logins("auditor"))
    assert set(rows) == {(q, sha) for q in ("EVAL-Q01", "EVAL-Q02", "EVAL-Q03") for sha in (SHA_A, SHA_OTHER)}
    given = ["src-given", "src-stale"]  # the catalog's sources of a stale-fixture question, in order
    q01, q02, q03 = rows[("EVAL-Q01", SHA_A)], rows[("EVAL-Q02", SHA_A)], rows[("EVAL-Q03", SHA_A)]
    # The latest run of the version, of two that asked it; production's latest captured row.
    assert q01[3:9] == (2, ledger["latest"], 1, ledger["q01"], given, given)
    assert q02[3:9] == (2, ledger["latest"], 2, ledger["q02"], ["wiki", "src-stale", "src-given"], given)
    assert q03[5:7] == (1, ledger["q03_cold"])
    for row in (q01, q02, q03):
        production, catalog = row[7], row[8]
        assert close(row[9], recall(production, catalog)) and close(row[10], jaccard(production, catalog))
        assert close(row[11], rbo(production, catalog))
    assert close(q02[9], Fraction(2, 3)) and close(q02[10], Fraction(2, 3))  # 2 of production's 3 slugs, of 3 in all
    # The verdict where judged: the completed run's decision and each question's; the open run's none.
    assert (q01[12], q01[13]) == (ledger["decision"], True)
    assert (q02[12], q02[13]) == (ledger["decision"], False)
    assert rows[("EVAL-Q01", SHA_OTHER)][4] == ledger["open"]
    assert rows[("EVAL-Q01", SHA_OTHER)][12:14] == (None, None)
    # One prompt hash for the catalog's text and production's, the database's.
    assert q02[14] == logins("auditor").execute("SELECT prompt_normal_hash_v1('question EVAL-Q02')").fetchone()[0]


def test_a_change_of_case_or_wording_is_another_question(ledger, logins):  # noqa: F811
    rows = seen(logins("auditor"))
    assert {r[5] for k, r in rows.items() if k[0] == "EVAL-Q03"} == {1}  # `question eval-q03` is not counted
    assert all(r[6] != ledger["q02_old"] for r in rows.values())


def test_revops_reads_the_hot_tier_and_the_reviewer_runner_and_agent_nothing(ledger, logins):  # noqa: F811
    revops = seen(logins("revops"))
    # The only capture of Q03 is cold: RevOps sees no production side for it, so no row.
    assert set(revops) == {(q, sha) for q in ("EVAL-Q01", "EVAL-Q02") for sha in (SHA_A, SHA_OTHER)}
    assert revops[("EVAL-Q02", SHA_A)][:14] == seen(logins("auditor"))[("EVAL-Q02", SHA_A)][:14]
    for role in ("reviewer", "runner", "agent"):
        conn = logins(role)
        for statement in ("SELECT * FROM evalledger.production_beside_eval_v1",
                          "SELECT * FROM evalledger.production_beside_eval_rows_v1(NULL, NULL, NULL, NULL)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)


def test_the_filters_narrow_the_runs_and_the_lookup_is_an_index_probe(ledger, admin, logins):  # noqa: F811
    auditor = logins("auditor")
    assert auditor.execute("SELECT count(*) FROM production_beside_eval_rows_v1('AGT-902', NULL, NULL, NULL)"
                           ).fetchone()[0] == 0
    assert auditor.execute("SELECT count(*) FROM production_beside_eval_rows_v1('AGT-901', NULL, NULL, 'quarterly')"
                           ).fetchone()[0] == 6
    with admin.transaction():
        admin.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in admin.execute(
            "EXPLAIN SELECT * FROM evalledger.eval_candidates c "
            "WHERE evalledger.prompt_normal_hash_v1(c.query) = evalledger.prompt_normal_hash_v1('question EVAL-Q01')"))
    assert "prompt_normal_hash_v1_idx" in plan, plan


def test_the_dashboards_show_the_panel_or_say_why_not(ledger, logins):  # noqa: F811
    from evalledger.bi import panels
    from evalledger.bi.filters import Filters

    for role in ("auditor", "revops"):
        conn = logins(role, autocommit=False)
        board = panels.load(conn, Filters())
        conn.rollback()
        panel = next(p for p in board.panels if p.key == "beside")
        assert panel.unavailable is None and len(panel.tables[0].rows) == (6 if role == "auditor" else 4), role
        # The furthest from production first: Q03 (Jaccard 1/2) where its cold capture is read, else Q02 (2/3).
        assert panel.tables[0].rows[0]["question_id"] == ("EVAL-Q03" if role == "auditor" else "EVAL-Q02"), role
    conn = logins("reviewer", autocommit=False)
    board = panels.load(conn, Filters())
    conn.rollback()
    panel = next(p for p in board.panels if p.key == "beside")
    assert panel.unavailable == "not shown to a reviewer: production traffic is none of a reviewer's"
