"""The review web app in a real headless chromium (Debian's), where the browser is the point: a
whole 30-question run reviewed by keyboard alone, its keystrokes counted; where the focus goes
after a save and after a failed one; one-key shortcuts that can be turned off and never fire in a
link, a field or a scrolled region; the layouts at 390, 1024 and 1366 px (screenshots); and
axe-core on every kind of page, at a phone's width and a laptop's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.wait import WebDriverWait

from tests.conftest import REVIEWER_ROLE, TEST_PASSWORD
from tests.web import axe
from tests.web.conftest import AUDITOR_ROLE, shot

DOCS = Path(__file__).resolve().parents[2] / "docs"
WIDTHS = {390: 844, 1024: 768, 1366: 768}


def loaded(driver, action) -> None:
    """Do action (a click, a key) and wait until the page it leads to has loaded."""
    driver.execute_script("window.__old_page = true;")
    action()

    def done(d) -> bool:
        try:
            return d.execute_script("return !window.__old_page && document.readyState === 'complete';")
        except WebDriverException:
            return False

    WebDriverWait(driver, 15).until(done)


def sign_in(driver, base: str, login: str = REVIEWER_ROLE, password: str = TEST_PASSWORD) -> None:
    driver.get(f"{base}/sign-in")
    driver.delete_all_cookies()
    driver.get(f"{base}/sign-in")
    driver.find_element(By.ID, "login-field").send_keys(login)
    driver.find_element(By.ID, "password-field").send_keys(password)
    loaded(driver, driver.find_element(By.CSS_SELECTOR, "#sign-in button").click)


def flash(driver) -> str:
    """The status message, once keys.js has put it back into the live region (to be announced)."""
    return WebDriverWait(driver, 5).until(lambda d: d.execute_script(
        "const f = document.getElementById('flash'); return f && f.textContent;"))


class Keyboard:
    """Keys sent to whatever has the focus, as a person types them, each counted (a chord is one)."""

    def __init__(self, driver) -> None:
        self.driver = driver
        self.count = 0

    def press(self, *keys: str, chord: str | None = None) -> None:
        for key in keys:
            chain = ActionChains(self.driver)
            if chord:
                chain.key_down(chord).send_keys(key).key_up(chord)
            else:
                chain.send_keys(key)
            chain.perform()
            self.count += 1

    def focused(self) -> str:
        return self.driver.switch_to.active_element.get_attribute("id") or ""


@pytest.fixture(scope="module")
def reviewer(browser, web):
    """The module's browser, signed in as reviewer A."""
    sign_in(browser, web.base)
    return browser


@pytest.fixture(scope="module")
def axe_script() -> str:
    return axe.source()


def test_a_whole_run_by_keyboard_takes_at_most_8_keystrokes_a_question(reviewer, web):
    run_id = web.another_run()
    reviewer.set_window_size(1366, 768)
    reviewer.get(f"{web.base}/runs/{run_id}")
    keys = Keyboard(reviewer)
    loaded(reviewer, lambda: keys.press("n"))  # the first question needing work
    per_question = []
    for position in range(1, 31):
        assert reviewer.current_url.split("?")[0].endswith(f"/questions/EVAL-Q{position:02d}")
        assert keys.focused() == "hallucinations_detected"  # the first field needing a value
        before = keys.count
        keys.press("0")
        scales = [f.get_attribute("data-keys") for f in reviewer.find_elements(By.CSS_SELECTOR, "fieldset.scale")]
        for scale in scales:
            keys.press(Keys.TAB)
            keys.press({"y:yes n:no": "y", "0:0 5:0.5 1:1": "1"}.get(scale, "4"))  # number (or y/n) keys choose
        loaded(reviewer, lambda: keys.press(Keys.ENTER, chord=Keys.CONTROL))
        per_question.append(keys.count - before)
    assert "every question of this run has your numbers" in flash(reviewer)
    total = keys.count
    print(f"\nkeyboard-only review of 30 questions: {total} keystrokes, {total / 30:.2f} a question, "
          f"at most {max(per_question)} on one (counts {sorted(set(per_question))})")
    assert max(per_question) <= 8 and total / 30 <= 8
    stored = web.admin.execute(
        "SELECT count(*) FILTER (WHERE hallucinations_detected = 0 AND narrative_coherence_rating = 4), "
        "count(*) FILTER (WHERE cardinality(evalledger.question_needs_v2(q, r.definition, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash))) > 0) "
        "FROM evalledger.brain_eval_question_score q JOIN evalledger.brain_eval_log l USING (eval_run_id) "
        "JOIN evalledger.rubric r USING (rubric_id) WHERE q.eval_run_id = %s", (run_id,)).fetchone()
    assert stored == (30, 0)
    shown = web.admin.execute("SELECT count(*) FROM evalledger.brain_eval_reference_shown WHERE eval_run_id = %s",
                              (run_id,)).fetchone()[0]
    assert shown == 30


def test_a_failed_save_focuses_the_first_error_and_says_so_where_it_is_read(reviewer, web):
    reviewer.set_window_size(390, 844)
    reviewer.get(f"{web.base}/runs/{web.open_a}/questions/EVAL-Q14")
    keys = Keyboard(reviewer)
    keys.press("9")  # more hallucinations than the claims, and no coherence
    loaded(reviewer, lambda: keys.press(Keys.ENTER, chord=Keys.CONTROL))
    assert keys.focused() == "hallucinations_detected"
    alert = reviewer.find_element(By.ID, "messages")
    assert alert.get_attribute("role") == "alert"
    assert "not saved: correct the fields marked below" in alert.text
    assert "Coherence" in alert.text and "required" in alert.text
    message = reviewer.find_element(By.ID, "problem-hallucinations_detected")
    top, bottom = reviewer.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom];",
                                          message)
    assert 0 <= top and bottom <= reviewer.execute_script("return window.innerHeight")  # in view, at a phone's width
    assert reviewer.find_element(By.ID, "hallucinations_detected").get_attribute("value") == "9"
    shot(reviewer, "question-invalid-390")
    reviewer.set_window_size(1366, 768)


def test_one_key_shortcuts_can_be_turned_off_and_never_fire_in_a_link_a_field_or_a_scrolled_region(reviewer, web):
    page = f"{web.base}/runs/{web.open_a}/questions/EVAL-Q15"
    reviewer.get(page)
    keys = Keyboard(reviewer)
    reviewer.execute_script("document.activeElement.blur();")
    for key in (Keys.ARROW_RIGHT, Keys.ARROW_LEFT):
        keys.press(key)
        assert reviewer.current_url == page  # arrows scroll, they never change the question
    for where in ("#run-link", "#sources", "#total_claims", "#reviewer_comments"):
        reviewer.execute_script("document.querySelector(arguments[0]).focus();", where)
        keys.press("j")
        keys.press("n")
        assert reviewer.current_url == page, where
    assert reviewer.find_element(By.ID, "reviewer_comments").get_attribute("value") == "jn"  # typed, not obeyed
    toggle = reviewer.find_element(By.ID, "shortcuts-toggle")
    assert toggle.is_displayed() and toggle.get_attribute("aria-pressed") == "true"
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false" and toggle.text == "Keyboard shortcuts: off"
    reviewer.get(page)  # remembered
    reviewer.execute_script("document.activeElement.blur();")
    keys.press("n")
    assert reviewer.current_url == page
    assert not reviewer.find_element(By.ID, "keys-help").is_displayed()
    reviewer.find_element(By.ID, "shortcuts-toggle").click()
    reviewer.execute_script("document.activeElement.blur();")
    loaded(reviewer, lambda: keys.press("n"))
    assert reviewer.current_url.split("?")[0] != page


def _rect(driver, selector: str) -> dict:
    return driver.execute_script("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                                 "return {left: r.left, right: r.right, top: r.top + window.scrollY, "
                                 "bottom: r.bottom + window.scrollY, width: r.width};", selector)


def test_layouts_at_a_phones_a_laptops_and_a_wide_screens_width(reviewer, web):
    page = f"{web.base}/runs/{web.open_a}/questions/EVAL-Q07"
    try:
        for width, height in WIDTHS.items():
            reviewer.set_window_size(width, height)
            reviewer.get(page)
            answer, score, sources = (_rect(reviewer, s) for s in (".col.answer", ".col.score", ".col.sources"))
            viewport = reviewer.execute_script("return document.documentElement.clientWidth")
            assert reviewer.execute_script("return document.documentElement.scrollWidth") <= viewport  # no sideways
            sign_out = _rect(reviewer, ".bar form.inline button")
            assert 0 <= sign_out["left"] and sign_out["right"] <= viewport  # nothing clipped in the header
            if width < 700:  # one column: the answer, then the form, then the sources
                assert answer["left"] == score["left"] == sources["left"]
                assert answer["bottom"] <= score["top"] < sources["top"]
                assert answer["width"] > 0.85 * viewport
            elif width <= 1100:  # the form beside the answer, the sources below the answer
                assert score["left"] >= answer["right"] and sources["top"] >= answer["bottom"]
                assert score["top"] < height  # the form in view without scrolling
            else:  # three side by side: answer, sources, form
                assert answer["right"] <= sources["left"] and sources["right"] <= score["left"]
                assert score["top"] < height
            name = f"review-question-{width}"
            path = shot(reviewer, name)
            if os.environ.get("EVALLEDGER_UPDATE_SCREENSHOT"):  # the README's pictures, on request only
                shutil.copyfile(path, DOCS / f"{name}.png")
                if width == 1366:
                    shutil.copyfile(path, DOCS / "review-web.png")
    finally:
        reviewer.set_window_size(1366, 768)


def _pages_as_reviewer(web, saved_run) -> dict[str, str]:
    return {
        "queue": "/queue",
        "run": f"/runs/{web.open_a}",
        "question (blind)": f"/runs/{web.open_a}/questions/EVAL-Q16",
        "question (after a save, reference shown)": f"/runs/{saved_run}/questions/EVAL-Q02?m=saved&saved=EVAL-Q01",
        "question (reference of its own)": f"/runs/{saved_run}/questions/EVAL-Q01",
        "question (completed run)": f"/runs/{web.completed_a}/questions/EVAL-Q01",
        "sign-off": f"/runs/{web.open_a}/sign-off",
        "not found": "/runs/not-a-run",
    }


def _axe_each(driver, base: str, pages: dict, script: str, width: int) -> dict:
    found = {}
    driver.set_window_size(width, WIDTHS[width])
    for name, path in pages.items():
        driver.get(base + path)
        problems = axe.violations(driver, script)
        if problems:
            found[f"{name} at {width}px"] = problems
    return found


def test_axe_core_finds_nothing_on_any_kind_of_page(browser, web, axe_script):
    run_id = web.another_run()
    found = {}
    try:
        browser.delete_all_cookies()
        for width in (1366, 390):
            found.update(_axe_each(browser, web.base, {"sign-in": "/sign-in"}, axe_script, width))
        browser.get(f"{web.base}/sign-in")
        browser.find_element(By.ID, "login-field").send_keys(REVIEWER_ROLE)
        browser.find_element(By.ID, "password-field").send_keys("wrong")
        loaded(browser, browser.find_element(By.CSS_SELECTOR, "#sign-in button").click)
        problems = axe.violations(browser, axe_script)
        if problems:
            found["sign-in refused"] = problems
        sign_in(browser, web.base)
        # One question saved by keyboard, so the next page shows its reference; one refused as invalid.
        browser.get(f"{web.base}/runs/{run_id}/questions/EVAL-Q01")
        keys = Keyboard(browser)
        keys.press("0", Keys.TAB, "1", Keys.TAB, "4")
        loaded(browser, lambda: keys.press(Keys.ENTER, chord=Keys.CONTROL))
        pages = _pages_as_reviewer(web, run_id)
        for width in (1366, 390):
            found.update(_axe_each(browser, web.base, pages, axe_script, width))
            browser.get(f"{web.base}/runs/{run_id}/questions/EVAL-Q03")
            keys.press("7")
            loaded(browser, lambda: keys.press(Keys.ENTER, chord=Keys.CONTROL))
            problems = axe.violations(browser, axe_script)
            if problems:
                found[f"question (refused save) at {width}px"] = problems
        sign_in(browser, web.base, AUDITOR_ROLE)
        for width in (1366, 390):
            found.update(_axe_each(browser, web.base, {"runs (readers)": "/runs",
                                                        "run (readers)": f"/runs/{web.completed_a}"}, axe_script, width))
    finally:
        browser.set_window_size(1366, 768)
        sign_in(browser, web.base)
    # The check itself can fail: a picture without its text is found on the same pages.
    browser.get(f"{web.base}/queue")
    browser.execute_script("document.querySelector('main').insertAdjacentHTML('beforeend', '<img src=\"/static/x.png\">');")
    assert "image-alt" in {v["id"] for v in axe.violations(browser, axe_script)}
    assert not found, "\n".join(f"{page}: {v['id']} ({v['impact']}): {v['help']}: {v['nodes'][:3]}"
                                for page, problems in found.items() for v in problems)
