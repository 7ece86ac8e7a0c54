"""The readers' pages in a real headless chromium (Debian's): an auditor, a RevOps login and a
reviewer each sign in and read the dashboards, whose every number is checked against SQL over the
same rows, computed here from the ledger's own tables as that login reads them (not through the
panels' queries); the drill-down from a dashboard to a run, a question, its answer, sources, the
judges' drafts and the review trail; RevOps sees no cold-tier point in any chart; and the report
opens in chromium with the network off and fetches nothing."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path
from uuid import UUID

import psycopg
import pytest
from selenium.webdriver.common.by import By

from evalledger.suites.brain_eval import store as brain_eval
from evalledger.suites.brain_eval.demo import open_demo_run, register_demo, review_and_complete
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.web.conftest import add_demo_version
from tests.cli import run_cli
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, TEST_PASSWORD, ensure_login_role
from tests.db.test_bi_views import recorded_at
from evalledger.web.app import create_app
from tests.web.conftest import AUDITOR_ROLE, Served, needs_chromium, shot
from tests.web.test_review_browser import loaded, sign_in

REVOPS_ROLE = "evalledger_test_web_revops"
DOCS = Path(__file__).resolve().parents[2] / "docs"
SEEN_FIRST = "EVAL-Q01"  # the reviewer looked at the judges' drafts on it before entering anything
LOGINS = {"auditor": AUDITOR_ROLE, "revops": REVOPS_ROLE, "reviewer": REVIEWER_ROLE}


@dataclass
class Ledger:
    base: str
    dsn: str
    reviewed: UUID   # REVIEWER_ROLE's completed harness run
    hot: UUID        # OTHER_REVIEWER_ROLE's completed AGT-901 run, recorded now
    cold: UUID       # a completed run recorded 25 months ago: the cold tier
    failed: UUID     # a run decided fail


def click(driver, selector: str) -> None:
    """Click the link at selector and wait for the page it leads to."""
    loaded(driver, driver.find_element(By.CSS_SELECTOR, selector).click)


@pytest.fixture(scope="module")
def admin(web_admin):
    """The module's superuser connection: every test here reads the one ledger below."""
    return web_admin


@pytest.fixture(scope="module")
def ledger(module_dsn, admin, web_reviewers, tmp_path_factory) -> Ledger:
    """One ledger for the module's tests, which only read it: `evalledger demo` (a completed
    harness run and one left open, takes-quality, work-quality), then REVIEWER_ROLE's harness run
    (it looked at EVAL-Q01's drafts first), another reviewer's AGT-901 runs (one failing), a cold
    run and production traffic; served by an app of its own."""
    dsn, reviewers, tmp_path = module_dsn, web_reviewers, tmp_path_factory.mktemp("ledger")
    ensure_login_role(admin, REVOPS_ROLE, "evalledger_revops")
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    done = run_cli("demo", env={"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")})
    assert done.code == 0, done.err
    register_demo(dsn)
    # The demo left its own run of the demo brain open: this one is of a version of its own (one run
    # of a brain, prompt and catalog is open at a time).
    add_demo_version(dsn, "pipeline_brain_v3_readers")
    reviewed, _ = open_demo_run(dsn, REVIEWER_ROLE, version_label="pipeline_brain_v3_readers")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(REVIEWER_ROLE)))
        brain_eval.show_suggestions(conn, reviewed, SEEN_FIRST)
    review_and_complete(dsn, reviewed, REVIEWER_ROLE)
    runner = psycopg.connect(dsn, autocommit=True)
    runner.execute("SET search_path = evalledger, public")
    runner.execute("SET ROLE evalledger_runner")
    other = reviewers[OTHER_REVIEWER_ROLE]

    def fail_one(number, row):
        if number == 2:
            row["hallucinations_detected"] = 1

    recorded = {}  # each run on a catalog of its own questions, loaded as the owner
    hot = record_run(runner, other, count=6, bend=fail_one, **recorded).eval_run_id
    failing = record_run(runner, other, count=6, bend=lambda n, row: row.update(staleness_correctly_recognized=False)
                         if n == 1 else None, **recorded).eval_run_id
    cold = recorded_at(admin, runner, other, "now() - interval '25 months'", **recorded)
    brain_eval.record_analysis(runner, brain="AGT-902", origin="production", model_id="claude-sonnet-4-6",
                               system_prompt_hash=admin.execute(
                                   "SELECT system_prompt_hash FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                                   (reviewed,)).fetchone()[0],
                               question="a user's question", output="an answer", token_cost_usd="0.0100")
    runner.close()
    served = Served(create_app(dsn))
    try:
        yield Ledger(served.base, dsn, reviewed, hot, cold, failing)
    finally:
        served.stop()


def as_role(dsn: str, login: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET search_path = evalledger, public")
    conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(login)))
    return conn


def tables_of(driver, panel: str) -> list[list[dict]]:
    """Every table of a panel, each a list of rows {column: exact value}."""
    return driver.execute_script("""
        return [...document.querySelectorAll(`#panel-${arguments[0]} table.panel-table`)].map(t =>
            [...t.querySelectorAll('tbody tr')].filter(r => !r.querySelector('td.empty')).map(r =>
                Object.fromEntries([...r.querySelectorAll('td')].map(c => [c.dataset.column, c.dataset.value]))));
    """, panel)


def marks(driver) -> list[dict]:
    """Every mark of every chart on the page, as its data-* attributes."""
    return driver.execute_script("""
        return [...document.querySelectorAll('svg.chart [data-value], svg.chart [data-state]')].map(m =>
            ({chart: m.closest('svg').id, ...m.dataset}));
    """)


def rows(conn, query, *params):
    return [tuple(r) for r in conn.execute(query, params).fetchall()]


def d(value) -> str:
    """A value as the pages' data-value holds it."""
    return "" if value is None else format(value, "f") if isinstance(value, Decimal) else str(value)


# -- the numbers, against SQL over the same rows ----------------------------------------------------

def aggregated_runs(conn, every_month: bool) -> str:
    """The completed runs a reader's aggregates count: all it reads (auditor), or those recorded in the
    hot tier's whole months (RevOps, a reviewer)."""
    return ("SELECT eval_run_id FROM evalledger.brain_eval_log WHERE completed_at IS NOT NULL" +
            ("" if every_month else " AND created_at >= evalledger.whole_hot_months_from_v1()::timestamp AT TIME ZONE 'UTC'"))


def kappa(cells: dict) -> tuple[Fraction, Fraction] | None:
    """Cohen's kappa and the observed agreement of a 3x3 table {(judge, reviewer): n}, by hand."""
    n = sum(cells.values())
    if not n:
        return None
    po = Fraction(sum(cells.get((k, k), 0) for k in range(3)), n)
    pe = sum(Fraction(sum(cells.get((k, j), 0) for j in range(3)) * sum(cells.get((i, k), 0) for i in range(3)), n * n)
             for k in range(3))
    return ((po - pe) / (1 - pe) if pe != 1 else None), po


def expected_agreement(conn, every_month: bool) -> dict:
    """(brain, judge) -> (unsupported pairs, kappa) over the whole range, from the rows: each
    contributing draft beside the reviewer's final value, counted where the trail's last entry of
    hallucinations_detected says the drafts had not been shown, and no showing is as old as it."""
    found = rows(conn, f"""
        SELECT l.brain_under_test, s.model, least(jsonb_array_length(s.unsupported_claims), 2),
               least(q.hallucinations_detected, 2),
               (SELECT NOT e.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at > e.entered_at)
                  FROM evalledger.brain_eval_review_entry e
                 WHERE e.eval_run_id = q.eval_run_id AND e.question_id = q.question_id AND e.field = 'hallucinations_detected'
                 ORDER BY e.entered_at DESC, e.entry_id DESC LIMIT 1)
          FROM evalledger.brain_eval_judge_suggestion s
          JOIN evalledger.brain_eval_question_score q USING (eval_run_id, question_id)
          JOIN evalledger.brain_eval_log l USING (eval_run_id)
          LEFT JOIN evalledger.brain_eval_suggestion_shown w USING (eval_run_id, question_id)
         WHERE s.contributes AND l.eval_run_id IN ({aggregated_runs(conn, every_month)})""")
    tables: dict = {}
    for brain, model, judge, reviewer, blind in found:
        if blind:
            cells = tables.setdefault((brain, model), {})
            cells[(judge, reviewer)] = cells.get((judge, reviewer), 0) + 1
    return {key: (sum(cells.values()), kappa(cells)[0]) for key, cells in tables.items()}


def check_dashboards(driver, conn, role: str) -> None:
    """Each panel's table against SQL over the same rows, as the same login."""
    every_month = role == "auditor"
    counted = aggregated_runs(conn, every_month)

    trend = tables_of(driver, "trend")[0]
    expected = rows(conn, """
        SELECT eval_run_id, aggregated_scores ->> 'citation_rate' FROM (
            SELECT l.*, row_number() OVER (PARTITION BY brain_under_test ORDER BY started_at DESC, eval_run_id DESC) AS k
              FROM evalledger.brain_eval_log l WHERE run_trigger = 'quarterly' AND completed_at IS NOT NULL) x
         WHERE k <= 8 ORDER BY brain_under_test, k""")
    assert [(r["eval_run_id"], r["citation_rate"]) for r in trend] == [(str(a), b) for a, b in expected]

    if role != "reviewer":
        shown = tables_of(driver, "most-failing")[0]
        truth = {(b, c, q): (seen, failed) for b, c, q, seen, failed in rows(conn, f"""
            SELECT l.brain_under_test, l.question_catalog_version, q.question_id, count(*), count(*) FILTER (WHERE NOT q.question_passed)
              FROM evalledger.brain_eval_question_score q JOIN evalledger.brain_eval_log l USING (eval_run_id)
             WHERE l.eval_run_id IN ({counted}) GROUP BY 1, 2, 3""")}
        assert shown and len(shown) == min(20, len(truth))
        for r in shown:
            seen, failed = truth[(r["brain_under_test"], r["question_catalog_version"], r["question_id"])]
            assert (r["runs_seen"], r["runs_failed"]) == (str(seen), str(failed))
            assert Decimal(r["fail_pct"]) == round(Decimal(100 * failed) / seen, 2)
        lowest = min(Decimal(r["fail_pct"]) for r in shown)
        assert sum(1 for seen, failed in truth.values() if round(Decimal(100 * failed) / seen, 2) > lowest) <= len(shown)

    per_run, misses = tables_of(driver, "stale-fixture")
    expected = rows(conn, """
        SELECT l.eval_run_id, count(*) FILTER (WHERE q.uses_stale_fixture),
               count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized),
               count(*) FILTER (WHERE q.uses_stale_fixture AND NOT q.staleness_correctly_recognized)
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.completed_at IS NOT NULL GROUP BY l.eval_run_id, l.started_at ORDER BY l.started_at DESC, l.eval_run_id DESC
         LIMIT 40""")
    assert [(r["eval_run_id"], r["stale_questions"], r["stale_recognised"], r["stale_missed"]) for r in per_run] == [
        (str(a), str(b), str(c), str(e)) for a, b, c, e in expected]
    assert {r["eval_run_id"] for r in misses} == {str(a) for a, _, _, e in expected if e}

    calibration = tables_of(driver, "calibration")[0]
    truth = {str(who): tuple(str(x) for x in counts) for who, *counts in rows(conn, f"""
        SELECT l.reviewer_user_id, count(DISTINCT l.eval_run_id),
               {", ".join(f"count(*) FILTER (WHERE q.narrative_coherence_rating = {k})" for k in range(1, 6))}
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.eval_run_id IN ({counted}) GROUP BY 1""")}
    names = dict(rows(conn, "SELECT reviewer_user_id::text, display_name FROM evalledger.reviewer")) \
        if role != "revops" else {}
    assert {r["reviewer"]: tuple(r[k] for k in ("runs_reviewed", "rating_1", "rating_2", "rating_3", "rating_4",
                                                "rating_5")) for r in calibration} == {
        names.get(k, k): v for k, v in truth.items()}

    cost = tables_of(driver, "cost")[0]
    truth = rows(conn, f"""
        SELECT date_trunc('month', started_at AT TIME ZONE 'UTC')::date, brain_under_test, count(*), sum(token_cost_usd),
               sum(reviewer_hours_spent)
          FROM evalledger.brain_eval_log WHERE eval_run_id IN ({counted}) GROUP BY 1, 2 ORDER BY 1, 2""")
    assert [(r["started_month"], r["brain_under_test"], r["runs"], Decimal(r["token_cost_usd"]),
             Decimal(r["reviewer_hours_spent"])) for r in cost] == [
        (str(m), b, str(n), Decimal(c), Decimal(h or 0)) for m, b, n, c, h in truth]

    failed = tables_of(driver, "failed")[0]
    assert [r["eval_run_id"] for r in failed] == [str(r[0]) for r in rows(conn, """
        SELECT eval_run_id FROM evalledger.brain_eval_log WHERE decision = 'fail' ORDER BY started_at DESC, eval_run_id DESC
         LIMIT 20""")]

    if role == "reviewer":
        for panel in ("most-failing", "drift", "beside", "agreement", "takes-quality", "work-quality"):
            assert driver.find_element(By.CSS_SELECTOR, f"#panel-{panel} .unavailable").text.startswith("not shown")
        return

    agreement = tables_of(driver, "agreement")[0]
    by_quarter = {}
    for r in agreement:
        by_quarter.setdefault((r["brain_under_test"], r["judge_model"]), []).append(r)
    truth = expected_agreement(conn, every_month)
    assert set(by_quarter) == set(truth) and truth
    for key, (pairs, k) in truth.items():
        quarters = by_quarter[key]
        assert sum(int(r["unsupported_pairs"]) for r in quarters) == pairs
        if len(quarters) == 1:
            assert quarters[0]["unsupported_kappa"] == ("" if k is None else str(
                (Decimal(k.numerator) / Decimal(k.denominator)).quantize(Decimal("0.0001"), ROUND_HALF_UP)))

    drift = tables_of(driver, "drift")[0]
    latest = [r for r in drift if r["month"] == max(x["month"] for x in drift) and r["brain_under_test"] == "AGT-902"]
    production = rows(conn, "SELECT system_prompt_hash FROM evalledger.brain_analysis_log WHERE brain = 'AGT-902' AND "
                            "origin = 'production' ORDER BY produced_at DESC LIMIT 1")
    assert [r["production_prompt_hash"] for r in latest] == [production[0][0]]

    takes = tables_of(driver, "takes-quality")[0]
    assert [(r["run_id"], r["overall_score"]) for r in takes] == [(str(a), d(b)) for a, b in rows(conn, """
        SELECT id, overall_score FROM evalledger.eval_takes_quality_runs WHERE completed_at IS NOT NULL
         ORDER BY started_at DESC, id DESC LIMIT 40""")]
    work = tables_of(driver, "work-quality")[0]
    assert [r["snapshot_id"] for r in work] == [str(r[0]) for r in rows(conn, """
        SELECT snapshot_id FROM evalledger.eval_work_quality_snapshots WHERE completed_at IS NOT NULL
         ORDER BY at DESC, snapshot_id DESC LIMIT 40""")]


@needs_chromium
@pytest.mark.parametrize("role", ["auditor", "revops", "reviewer"])
def test_each_dashboard_shows_what_sql_gives_its_reader(ledger, browser, role):
    sign_in(browser, ledger.base, LOGINS[role], TEST_PASSWORD)
    browser.get(f"{ledger.base}/dashboards")
    assert browser.find_element(By.ID, "login").text == LOGINS[role]
    with as_role(ledger.dsn, LOGINS[role]) as conn:
        check_dashboards(browser, conn, role)
    # Filtered: one brain, and the same numbers for it.
    browser.get(f"{ledger.base}/dashboards?brain=AGT-901")
    assert {r["brain_under_test"] for r in tables_of(browser, "cost")[0]} <= {"AGT-901"}
    assert not browser.find_elements(By.ID, "error")
    browser.get(f"{ledger.base}/dashboards?from=2026-13")
    assert browser.find_element(By.ID, "error").text.startswith("from '2026-13' is not a month")
    if role == "auditor":
        browser.get(f"{ledger.base}/dashboards")
        browser.set_window_size(1366, 1400)
        picture = shot(browser, "dashboards")
        browser.set_window_size(1366, 768)
        if os.environ.get("EVALLEDGER_UPDATE_SCREENSHOT"):
            shutil.copyfile(picture, DOCS / "dashboards.png")


@needs_chromium
def test_revops_sees_no_cold_tier_point_in_any_chart(ledger, browser, admin):
    sign_in(browser, ledger.base, REVOPS_ROLE, TEST_PASSWORD)
    browser.get(f"{ledger.base}/dashboards")
    seen = marks(browser)
    assert seen, "the charts have marks"
    start, whole = admin.execute("SELECT (now() - interval '24 months'), "
                                 "evalledger.whole_hot_months_from_v1()").fetchone()
    assert str(ledger.cold) not in {m.get("run") for m in seen}
    for mark in seen:
        if "started" in mark:
            assert mark["started"] >= (start.isoformat()[:10]), mark
        if "month" in mark and mark["chart"].startswith("cost"):
            assert mark["month"] >= whole.isoformat()[:7], mark
    assert str(ledger.cold) not in browser.page_source
    # The cold run is there, for the auditor, and hidden from RevOps by the tables' own policies.
    with as_role(ledger.dsn, "evalledger_revops") as revops, as_role(ledger.dsn, "evalledger_auditor") as auditor:
        assert rows(revops, "SELECT count(*) FROM brain_eval_log WHERE eval_run_id = %s", ledger.cold) == [(0,)]
        assert rows(auditor, "SELECT count(*) FROM stale_fixture_pass_rate_v2 WHERE eval_run_id = %s", ledger.cold) == [(1,)]


@needs_chromium
def test_an_auditor_drills_from_a_dashboard_to_the_reviewers_entry(ledger, browser, admin):
    sign_in(browser, ledger.base, AUDITOR_ROLE, TEST_PASSWORD)
    browser.get(f"{ledger.base}/dashboards")
    click(browser, f"#panel-stale-fixture a.run-link[href='/runs/{ledger.reviewed}']")
    assert browser.find_element(By.ID, "decision").text == admin.execute(
        "SELECT decision::text FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (ledger.reviewed,)).fetchone()[0]
    criteria = browser.find_elements(By.CSS_SELECTOR, "#criteria tbody tr")
    assert len(criteria) == 7  # the rubric's 3 hard and 4 soft criteria, each against the run's exact value
    exact = dict(rows(admin, "SELECT key, (aggregated_scores ->> key)::numeric FROM evalledger.brain_eval_log, "
                             "jsonb_object_keys(aggregated_scores) key WHERE eval_run_id = %s", ledger.reviewed))
    for row in criteria:
        value = row.find_element(By.CSS_SELECTOR, "td[data-value]").get_attribute("data-value")
        assert Decimal(value) == exact[row.get_attribute("data-key")]
    entered_by, hours = admin.execute("SELECT entered_by, reviewer_hours_spent FROM evalledger.brain_eval_run_review "
                                      "WHERE eval_run_id = %s", (ledger.reviewed,)).fetchone()
    assert browser.find_element(By.ID, "sign-off").text.startswith(f"{hours} hours, entered by {entered_by}")
    assert browser.find_elements(By.CSS_SELECTOR, "#agreement tbody tr")
    documented(browser, "read-run", "run-page")
    click(browser, f"#questions a.question-link[href$='/{SEEN_FIRST}']")
    assert browser.current_url.endswith(f"/read/runs/{ledger.reviewed}/questions/{SEEN_FIRST}")
    assert browser.find_element(By.ID, "narrative").text
    claims = admin.execute("SELECT jsonb_array_length(b.claims) FROM evalledger.brain_eval_question_score q JOIN "
                           "evalledger.brain_analysis_log b ON b.analysis_id = q.brain_analysis_id "
                           "WHERE q.eval_run_id = %s AND q.question_id = %s", (ledger.reviewed, SEEN_FIRST)).fetchone()[0]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#claims li")) == claims
    assert browser.find_elements(By.CSS_SELECTOR, "#sources article.source")
    drafts = rows(admin, "SELECT model FROM evalledger.brain_eval_judge_suggestion WHERE eval_run_id = %s AND "
                         "question_id = %s ORDER BY model", ledger.reviewed, SEEN_FIRST)
    assert [a.get_attribute("data-model") for a in browser.find_elements(By.CSS_SELECTOR, "#drafts .draft")] == [
        m for (m,) in drafts]
    trail = rows(admin, "SELECT field, entered_by, suggestions_shown FROM evalledger.brain_eval_review_entry "
                        "WHERE eval_run_id = %s AND question_id = %s ORDER BY entered_at, entry_id",
                 ledger.reviewed, SEEN_FIRST)
    shown_rows = browser.find_elements(By.CSS_SELECTOR, "#trail tbody tr")
    assert len(shown_rows) == len(trail) > 0
    for row, (_, entered_by, _) in zip(shown_rows, trail):
        cells = row.find_elements(By.TAG_NAME, "td")
        assert cells[2].text == entered_by and "after seeing them" in cells[5].text  # it looked first
    assert "first shown" in browser.find_element(By.ID, "shown").text
    documented(browser, "read-question", "drill-down")
    # Another question of the same run, entered blind.
    browser.get(f"{ledger.base}/read/runs/{ledger.reviewed}/questions/EVAL-Q02")
    assert all("blind" in r.find_elements(By.TAG_NAME, "td")[5].text
               for r in browser.find_elements(By.CSS_SELECTOR, "#trail tbody tr"))
    # Over time, the takes-quality and work-quality drill-downs.
    browser.get(f"{ledger.base}/read/questions/{SEEN_FIRST}?brain=AGT-902")
    assert browser.find_elements(By.CSS_SELECTOR, "#history tbody tr a")
    takes = admin.execute("SELECT max(id) FROM evalledger.eval_takes_quality_runs").fetchone()[0]
    browser.get(f"{ledger.base}/read/takes-quality/{takes}")
    assert browser.find_element(By.ID, "verdict").text in ("pass", "fail", "inconclusive")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".draft")) == admin.execute(
        "SELECT count(*) FROM evalledger.eval_takes_quality_judge_verdicts WHERE run_id = %s", (takes,)).fetchone()[0]
    documented(browser, "read-takes", "takes-quality-run")
    snapshot = admin.execute("SELECT max(snapshot_id) FROM evalledger.eval_work_quality_snapshots").fetchone()[0]
    browser.get(f"{ledger.base}/read/work-quality/{snapshot}")
    assert "verdict" in browser.find_element(By.ID, "comparison").text
    assert browser.find_elements(By.CSS_SELECTOR, ".draft")
    documented(browser, "read-work", "work-quality-snapshot")


def documented(browser, name: str, picture: str) -> None:
    """A screenshot of the page at 1366 wide; docs/<picture>.png is replaced by it on request only."""
    browser.set_window_size(1366, 1100)
    taken = shot(browser, name)
    if os.environ.get("EVALLEDGER_UPDATE_SCREENSHOT"):
        shutil.copyfile(taken, DOCS / f"{picture}.png")
    browser.set_window_size(1366, 768)


def test_readers_open_what_their_tier_shows_and_nothing_else(ledger, client):
    auditor, revops = client(ledger.base), client(ledger.base)
    assert auditor.sign_in(AUDITOR_ROLE).status_code == 303
    assert revops.sign_in(REVOPS_ROLE).status_code == 303
    question = f"/read/runs/{ledger.reviewed}/questions/{SEEN_FIRST}"
    assert auditor.http.get(question).status_code == 200       # a completed run's question: no longer 403
    assert revops.http.get(question).status_code == 200
    cold = f"/read/runs/{ledger.cold}/questions/EVAL-Q01"
    assert auditor.http.get(cold).status_code == 200
    refused = revops.http.get(cold)
    assert refused.status_code == 404 and f"no run {ledger.cold} that you may see" in refused.text
    assert revops.http.get(f"/runs/{ledger.cold}").status_code == 404
    assert auditor.http.get("/read/takes-quality/x").status_code == 404
    css = auditor.http.get("/readers.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    # The drill-down shows question verdicts, which no reviewer reads: even of its own completed run.
    reviewer = client(ledger.base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    for path in (question, f"/read/questions/{SEEN_FIRST}", "/read/takes-quality/1", "/read/work-quality/1"):
        page = reviewer.http.get(path)
        assert page.status_code == 403 and f"{REVIEWER_ROLE} is not a reader (RevOps or an auditor)" in page.text, path
    assert reviewer.http.get(f"/runs/{ledger.reviewed}").status_code == 200  # its run's own page


@needs_chromium
def test_the_report_opens_with_the_network_off_and_fetches_nothing(ledger, browser, tmp_path, admin):
    out = tmp_path / "report.html"
    sealed = run_cli("ledger", "seal", env={"DATABASE_URL": ledger.dsn})
    assert sealed.code == 0, sealed.err
    block, block_hash = admin.execute("SELECT block_id, encode(block_hash, 'hex') FROM evalledger.ledger_block "
                                      "ORDER BY block_id DESC LIMIT 1").fetchone()
    done = run_cli("report", "--out", str(out), env={"DATABASE_URL": ledger.dsn})
    assert done.code == 0, done.err
    assert done.out.startswith(f"wrote {out}: 11 panels as evalledger_auditor")
    html = out.read_text("utf-8")
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                            {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    try:
        opened_offline(browser, out, html, ledger, block, block_hash)
    finally:  # the module's browser serves the tests after this one
        browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                                {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    revops = run_cli("report", "--as", "revops", "--brain", "AGT-901", env={"DATABASE_URL": ledger.dsn})
    assert revops.code == 0 and str(ledger.cold) not in revops.out and "evalledger_revops" in revops.out
    bad = run_cli("report", "--since", "2026-13", env={"DATABASE_URL": ledger.dsn})
    assert (bad.code, bad.err.strip()) == (3, "evalledger: error: --since '2026-13' is not a month (YYYY-MM) or a "
                                               "date (YYYY-MM-DD)")


@needs_chromium
def test_axe_core_finds_nothing_on_the_readers_pages(ledger, browser, admin):
    from tests.web import axe

    script = axe.source()
    takes = admin.execute("SELECT max(id) FROM evalledger.eval_takes_quality_runs").fetchone()[0]
    snapshot = admin.execute("SELECT max(snapshot_id) FROM evalledger.eval_work_quality_snapshots").fetchone()[0]
    pages = {"dashboards": "/dashboards", "dashboards (one brain)": "/dashboards?brain=AGT-901",
             "dashboards (a wrong filter)": "/dashboards?from=2026-13", "runs": "/runs",
             "run": f"/runs/{ledger.reviewed}", "question": f"/read/runs/{ledger.reviewed}/questions/{SEEN_FIRST}",
             "question over time": f"/read/questions/{SEEN_FIRST}?brain=AGT-902",
             "takes-quality run": f"/read/takes-quality/{takes}", "work-quality snapshot": f"/read/work-quality/{snapshot}"}
    sign_in(browser, ledger.base, AUDITOR_ROLE, TEST_PASSWORD)
    found = {}
    for name, path in pages.items():
        browser.get(ledger.base + path)
        problems = axe.violations(browser, script)
        if problems:
            found[name] = problems
    assert found == {}


def opened_offline(browser, out, html, ledger, block, block_hash) -> None:
    """The report file opened in the offline browser: everything there, nothing fetched."""
    browser.get(out.as_uri())
    assert browser.find_element(By.TAG_NAME, "h1").text == "evalledger report"
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart")) == html.count('<svg class="chart"') > 10
    assert browser.find_element(By.ID, "reader").text == "evalledger_auditor"
    # The journal's latest sealed block, as the ledger holds it.
    assert browser.find_element(By.ID, "block-id").text.startswith(f"{block} (")
    assert browser.find_element(By.ID, "block-hash").text == block_hash
    assert str(ledger.cold) in html  # the auditor's report holds the cold tier
    browser.set_window_size(1366, 1100)
    picture = shot(browser, "report")
    if os.environ.get("EVALLEDGER_UPDATE_SCREENSHOT"):
        shutil.copyfile(picture, DOCS / "report.png")
