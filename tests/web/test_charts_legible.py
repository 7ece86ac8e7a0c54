"""The charts as a reader sees them, in a real headless chromium (issue 36): the trend charts draw
each point's 95% interval as an error bar (the database's, from the suites' intervals views) and a
run's page shows each aggregate's interval; legends and keys are never cut off, the judges' points
in "Judges against reviewers" never hide one another, and threshold labels never sit on a data
point; at 390 px wide the charts' text stays at least ~11 px and every chart stays in its box; and
numbers read rounded, the exact value a hover away. A reviewer with no completed run is told that
is why the panels are empty."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.cli import run_cli
from tests.conftest import OTHER_REVIEWER_ROLE, TEST_PASSWORD
from tests.db.test_plan_from_history import takes_run
from tests.web.conftest import AUDITOR_ROLE, needs_chromium, shot
from tests.web.test_review_browser import sign_in

pytestmark = [pytest.mark.db, needs_chromium]

# Every legibility rule, measured on the page as laid out: a list of what breaks each.
CHECK = """
const out = {small: [], spill: [], cut: [], on_point: [], hidden: [], unrounded: [], no_exact: []};
const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5;
const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
                        * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
for (const svg of document.querySelectorAll('svg.chart')) {
  const box = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal, scale = box.width / vb.width;
  for (const t of svg.querySelectorAll('text')) {
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < 10.5) out.small.push([svg.id, t.textContent, px]);
    if (!inside(t.getBoundingClientRect(), box)) out.cut.push([svg.id, t.textContent]);
  }
  const figure = svg.closest('figure'), panel = svg.closest('section.panel');
  if (!inside(figure.getBoundingClientRect(), panel.getBoundingClientRect())) out.spill.push(svg.id);
  const marks = [...svg.querySelectorAll('g.point')].map(g => ({series: g.dataset.series,
      rect: g.lastElementChild.getBoundingClientRect()}));
  for (const label of svg.querySelectorAll('g.threshold-label text, g.threshold text')) {
    const r = label.getBoundingClientRect();
    if (marks.some(m => overlap(r, m.rect) > 0)) out.on_point.push([svg.id, label.textContent]);
  }
  for (const a of marks) for (const b of marks) {
    if (a.series < b.series && overlap(a.rect, b.rect) > 0.6 * a.rect.width * a.rect.height)
      out.hidden.push([svg.id, a.series, b.series]);
  }
}
for (const td of document.querySelectorAll('table.panel-table td.n')) {
  if (/\\d\\.\\d{5,}/.test(td.textContent)) out.unrounded.push(td.textContent);
  if (td.textContent.trim() !== '—' && /\\./.test(td.dataset.value || '') && td.title !== td.dataset.value)
    out.no_exact.push([td.dataset.column, td.textContent, td.title]);
}
for (const p of document.querySelectorAll('.panel .note, .panel h2, .panel p')) {
  if (/\\d\\.\\d{6,}/.test(p.textContent)) out.unrounded.push(p.textContent);
}
out.page_wider = document.documentElement.scrollWidth > window.innerWidth;
return out;
"""
CLEAN = {"small": [], "spill": [], "cut": [], "on_point": [], "hidden": [], "unrounded": [], "no_exact": [],
         "page_wider": False}


@pytest.fixture(scope="module")
def ledger(web, connect_as_module):
    """The web app's runs (a completed demo run with three judges' drafts, so three series in the
    agreement charts), and two takes-quality runs whose judges disagree (an interval to draw)."""
    runner = connect_as_module("evalledger_runner")
    takes_run(runner, [{"accuracy": 6}, {"accuracy": 7}, {"accuracy": 9}], "cccccc01")
    takes_run(runner, [{"accuracy": 7}, {"accuracy": 8}, {"accuracy": 8}], "cccccc02")
    return web


@pytest.fixture(scope="module")
def connect_as_module(module_dsn):
    import psycopg
    from psycopg import sql

    opened = []

    def connect(role):
        conn = psycopg.connect(module_dsn, autocommit=True)
        conn.execute("SET search_path = evalledger, public")
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


def measured(browser, width: int) -> dict:
    browser.set_window_size(width, 900)
    try:
        return browser.execute_script(CHECK)
    finally:
        browser.set_window_size(1366, 768)


def error_bars(browser) -> list[dict]:
    return browser.execute_script("""
        return [...document.querySelectorAll('svg.chart g.point[data-lo]')].map(g =>
            ({chart: g.closest('svg').id, lo: +g.dataset.lo, hi: +g.dataset.hi, value: +g.dataset.value,
              bar: !!g.querySelector('.error-bar'), title: g.querySelector('title').textContent}));""")


def test_the_dashboards_draw_error_bars_and_read_at_390_px(ledger, browser, admin_module):
    sign_in(browser, ledger.base, AUDITOR_ROLE, TEST_PASSWORD)
    browser.get(f"{ledger.base}/dashboards")
    bars = error_bars(browser)
    # Every aggregate of the completed run, and each takes-quality run's overall, with its interval.
    intervals = {(str(r[0]), r[1]): (r[2], r[3]) for r in admin_module.execute(
        "SELECT eval_run_id, aggregate, ci95_lo, ci95_hi FROM evalledger.brain_eval_intervals_v1")}
    trend = [b for b in bars if b["chart"].startswith("trend-")]
    assert len(trend) == len(intervals) and all(b["bar"] and b["lo"] <= b["value"] <= b["hi"] for b in bars)
    assert {(b["lo"], b["hi"]) for b in trend} == set(intervals.values())
    takes = admin_module.execute("SELECT ci95_lo, ci95_hi FROM evalledger.takes_quality_intervals_v1 "
                                 "WHERE dimension = 'overall'").fetchall()
    assert sorted((b["lo"], b["hi"]) for b in bars if b["chart"] == "takes-chart") == sorted(map(tuple, takes))
    assert all("(95% CI " in b["title"] for b in bars)
    for width in (1366, 390):
        assert measured(browser, width) == CLEAN, width
    browser.set_window_size(390, 2400)
    shot(browser, "dashboards-390")
    browser.set_window_size(1366, 768)


def test_the_report_reads_at_390_px(ledger, browser, tmp_path):
    out = tmp_path / "report.html"
    assert run_cli("report", "--out", str(out), env={"DATABASE_URL": ledger.dsn}).code == 0
    browser.get(out.as_uri())
    assert [b for b in error_bars(browser) if b["chart"] == "takes-chart"]
    for width in (1366, 390):
        assert measured(browser, width) == CLEAN, width


def test_a_runs_page_shows_each_aggregates_interval(ledger, browser, admin_module):
    sign_in(browser, ledger.base, AUDITOR_ROLE, TEST_PASSWORD)
    browser.get(f"{ledger.base}/runs/{ledger.completed_a}")
    rows = browser.find_elements(By.CSS_SELECTOR, "#intervals tbody tr")
    stored = {r[0]: (r[1], r[2], r[3]) for r in admin_module.execute(
        "SELECT aggregate, estimate, ci95_lo, ci95_hi FROM evalledger.brain_eval_intervals_v1 WHERE eval_run_id = %s",
        (ledger.completed_a,))}
    assert {r.get_attribute("data-key") for r in rows} == set(stored)
    for row in rows:
        estimate, lo, hi = stored[row.get_attribute("data-key")]
        cells = row.find_elements(By.TAG_NAME, "td")
        assert cells[1].text == f"{estimate:.4f}" and cells[1].get_attribute("title") == str(estimate)
        assert cells[2].text == f"{lo:.4f} – {hi:.4f}"
    # A takes-quality run's page: each dimension's interval over the judges, the exact bounds its title.
    takes = admin_module.execute("SELECT max(run_id) FROM evalledger.takes_quality_intervals_v1").fetchone()[0]
    browser.get(f"{ledger.base}/read/takes-quality/{takes}")
    stored = {r[0]: (r[1], r[2]) for r in admin_module.execute(
        "SELECT dimension, ci95_lo, ci95_hi FROM evalledger.takes_quality_intervals_v1 WHERE run_id = %s", (takes,))}
    rows = browser.find_elements(By.CSS_SELECTOR, "#dimensions tbody tr")
    assert {r.get_attribute("data-key") for r in rows} == set(stored) - {"overall"}
    for row in rows:
        lo, hi = stored[row.get_attribute("data-key")]
        cell = row.find_elements(By.TAG_NAME, "td")[2]
        assert cell.text == f"{lo:.2f} – {hi:.2f}" and cell.get_attribute("title") == f"{lo} – {hi}"


def test_a_reviewer_without_a_completed_run_is_told_why_the_panels_are_empty(ledger, browser):
    sign_in(browser, ledger.base, OTHER_REVIEWER_ROLE, TEST_PASSWORD)
    browser.get(f"{ledger.base}/dashboards")
    empty = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "td.empty")}
    assert empty == {"No completed run you may read yet: the panels count completed runs only (1 of yours is "
                     "still open: review and complete one to see it here)."}
    assert browser.find_element(By.ID, "coverage").text.startswith(
        f"Showing every brain; every month; every trigger, as {OTHER_REVIEWER_ROLE} reads them. No completed run")
    assert "No rows for these filters" not in browser.page_source


@pytest.fixture(scope="module")
def admin_module(web_admin):
    return web_admin



def test_prompt_drift_and_agreement_legends_fit_however_long(browser, tmp_path):
    """The charts of "Prompt drift" and "Judges against reviewers" with every state and long judge
    names: each key and legend wraps inside the chart, and two judges' points at the same value are
    both seen, at 1366 and 390 px."""
    from evalledger.bi import charts, panels, render

    months = [f"2026-{m:02d}" for m in range(1, 13)]
    cells = {(r, c): ((r + c) % 3, ("same", "DRIFT", "—")[(r + c) % 3], {}) for r in range(2) for c in range(12)}
    drift = charts.grid_chart("drift-chart", "Prompt drift by month", "test", ["AGT-901", "AGT-902"], months, cells,
                              panels.DRIFT_STATES, width=700)
    judges = [f"{j} (AGT-90{b})" for j in ("anthropic:claude-opus-4-7", "google:gemini-1.5-pro", "openai:gpt-4o")
              for b in (1, 2)]
    series = [charts.Series(name, [charts.Point(q, 1.0, f"{name} {q}") for q in range(3)]) for name in judges]
    agreement = charts.line_chart("agreement-unsupported", "Unsupported claims: Cohen's kappa (bins 0/1/2+)", "test",
                                  ["2026-Q2", "2026-Q3", "2026-Q4"], series, y_min=-1, y_max=1,
                                  lines=[charts.Line(0, "chance (0)")], width=420, height=200)
    page = tmp_path / "charts.html"
    page.write_text(f"<!doctype html><html><head><meta name='viewport' content='width=device-width'>"
                    f"<style>{render.stylesheet()}</style></head><body><main><section class='panel'>"
                    f"<div class='charts charts-1'><figure>{drift}</figure></div>"
                    f"<div class='charts charts-2'><figure>{agreement}</figure><figure>{agreement}</figure></div>"
                    f"</section></main></body></html>")
    browser.get(page.as_uri())
    assert len(browser.find_elements(By.CSS_SELECTOR, "g.key")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "g.legend")) == 2 * len(judges)
    for width in (1366, 390):
        assert measured(browser, width) == CLEAN, width
