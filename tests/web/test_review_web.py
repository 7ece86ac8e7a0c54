"""The review web app in a real headless chromium (Debian's), and raw HTTP for what a browser
would not send: a reviewer signs in as their own login, sees only their runs, scores blind and
sees the judges afterwards; every refusal (another reviewer's question, a forged or missing CSRF
token, a completed run, a wrong password) leaves the ledger as it was, re-read as the superuser."""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.wait import WebDriverWait

from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, TEST_PASSWORD
from tests.web.conftest import AUDITOR_ROLE, needs_chromium, question_rows, shot

README_SHOT = Path(__file__).resolve().parents[2] / "docs" / "review-web.png"
QUESTION = "EVAL-Q01"  # plan_diagnosis: the form asks for diagnosis accuracy too


def sign_in(driver, base: str, login: str = REVIEWER_ROLE, password: str = TEST_PASSWORD) -> None:
    driver.get(f"{base}/sign-in")
    driver.delete_all_cookies()
    driver.get(f"{base}/sign-in")
    driver.find_element(By.ID, "login-field").send_keys(login)
    driver.find_element(By.ID, "password-field").send_keys(password)
    click(driver, "#sign-in button")


def submitting(driver, action) -> None:
    """Do action (a click, a key) and wait until the page it leads to has loaded: the old page's
    marker is gone and the new document is complete (a check that lands mid-navigation retries)."""
    driver.execute_script("window.__old_page = true;")
    action()

    def loaded(d) -> bool:
        try:
            return d.execute_script("return !window.__old_page && document.readyState === 'complete';")
        except WebDriverException:
            return False

    WebDriverWait(driver, 10).until(loaded)


def click(driver, selector: str) -> None:
    """Click the button or link at selector and wait for the next page."""
    submitting(driver, driver.find_element(By.CSS_SELECTOR, selector).click)


def text(driver) -> str:
    return driver.find_element(By.TAG_NAME, "body").text


def fill(driver, **values) -> None:
    """Type into the question form: numbers and the comment replace what is there; radios by value."""
    for name, value in values.items():
        if name in ("staleness_correctly_recognized", "diagnosis_accuracy_score"):
            driver.find_element(By.CSS_SELECTOR, f"input[type=radio][name={name}][value='{value}']").click()
            continue
        field = driver.find_element(By.ID, name)
        field.clear()
        field.send_keys(str(value))


# -- in the browser ---------------------------------------------------------------------------------


@needs_chromium
def test_a_reviewer_sees_only_their_own_open_runs(web, browser):
    sign_in(browser, web.base)
    assert browser.current_url == f"{web.base}/queue"
    listed = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#queue a.run-link")]
    assert listed == [str(web.open_a)]  # not B's run, not A's completed one
    assert REVIEWER_ROLE in browser.find_element(By.ID, "login").text
    shot(browser, "queue")
    click(browser, "#queue a.run-link")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#questions a.question-link")) == 30
    assert "30 of 30 questions still to score" in text(browser)
    shot(browser, "run")


@needs_chromium
def test_scores_are_saved_blind_and_the_suggestions_follow(web, browser):
    sign_in(browser, web.base)
    browser.get(f"{web.base}/runs/{web.open_a}/questions/{QUESTION}")
    assert browser.find_elements(By.ID, "blind") and not browser.find_elements(By.CSS_SELECTOR, ".suggestion")
    assert browser.find_elements(By.CSS_SELECTOR, "#sources article.source")  # the cited sources beside the answer
    before = question_rows(web.admin, web.open_a)

    # Invalid: more hallucinations than claims, a coherence of 7: shown again with the errors, nothing stored.
    fill(browser, hallucinations_detected=5, total_claims=3, diagnosis_accuracy_score="1", narrative_coherence_rating=7)
    click(browser, "#save")
    assert browser.find_element(By.ID, "problem-hallucinations_detected").text.endswith(
        "5 hallucinations but 3 claims: a hallucination is one of the claims")
    assert browser.find_element(By.ID, "problem-narrative_coherence_rating").text.endswith(
        "'7': a rating is a whole number from 1 (incoherent) to 5")
    assert browser.find_element(By.ID, "narrative_coherence_rating").get_attribute("value") == "7"
    assert not browser.find_elements(By.CSS_SELECTOR, ".suggestion")
    shot(browser, "question-invalid")
    assert question_rows(web.admin, web.open_a) == before

    # Valid, saved with Ctrl+Enter from the comment field: then, and only then, the suggestions.
    fill(browser, hallucinations_detected=0, total_claims=4, narrative_coherence_rating=4,
         reviewer_comments="Names the coverage gap.")
    submitting(browser, lambda: browser.find_element(By.ID, "reviewer_comments").send_keys(Keys.CONTROL, Keys.ENTER))
    assert "Saved" in browser.find_element(By.ID, "flash").text
    assert browser.find_elements(By.CSS_SELECTOR, "#suggestions .suggestion")
    assert not browser.find_elements(By.ID, "blind")
    shot(browser, "question-saved")
    browser.set_window_size(1366, 1000)  # the README's picture: the suggestions in view too
    readme = shot(browser, "readme")
    browser.set_window_size(1366, 768)
    if os.environ.get("EVALLEDGER_UPDATE_SCREENSHOT"):  # docs/review-web.png, refreshed on request only
        shutil.copyfile(readme, README_SHOT)
    stored = web.admin.execute("SELECT hallucinations_detected, total_claims, diagnosis_accuracy_score::float, "
                           "narrative_coherence_rating, reviewer_comments FROM evalledger.brain_eval_question_score "
                           "WHERE eval_run_id = %s AND question_id = %s", (web.open_a, QUESTION)).fetchone()
    assert stored == (0, 4, 1.0, 4, "Names the coverage gap.")
    entries = web.admin.execute("SELECT DISTINCT acting_role::text, suggestions_shown FROM evalledger.brain_eval_review_entry "
                            "WHERE eval_run_id = %s AND question_id = %s", (web.open_a, QUESTION)).fetchall()
    assert entries == [(REVIEWER_ROLE, False)]  # entered as the login itself, before any suggestion was shown
    assert web.admin.execute("SELECT count(*) FROM evalledger.brain_eval_suggestion_shown WHERE eval_run_id = %s "
                         "AND question_id = %s", (web.open_a, QUESTION)).fetchone()[0] == 1

    # j goes to the next question, k back.
    submitting(browser, lambda: browser.find_element(By.TAG_NAME, "body").send_keys("j"))
    assert browser.current_url.endswith("/questions/EVAL-Q02")
    assert browser.find_elements(By.ID, "blind")
    submitting(browser, lambda: browser.find_element(By.TAG_NAME, "body").send_keys("k"))
    assert browser.current_url.endswith(f"/questions/{QUESTION}")


@needs_chromium
def test_show_suggestions_first_is_recorded(web, browser):
    sign_in(browser, web.base)
    browser.get(f"{web.base}/runs/{web.open_a}/questions/EVAL-Q02")
    click(browser, "#reveal button")
    assert browser.find_elements(By.CSS_SELECTOR, "#suggestions .suggestion")
    fill(browser, hallucinations_detected=1, total_claims=5, narrative_coherence_rating=3)
    if browser.find_elements(By.CSS_SELECTOR, "input[name=diagnosis_accuracy_score]"):
        fill(browser, diagnosis_accuracy_score="0.5")
    click(browser, "#save")
    assert "Saved" in browser.find_element(By.ID, "flash").text
    shown = web.admin.execute("SELECT DISTINCT suggestions_shown FROM evalledger.brain_eval_review_entry "
                          "WHERE eval_run_id = %s AND question_id = 'EVAL-Q02'", (web.open_a,)).fetchall()
    assert shown == [(True,)]


@needs_chromium
def test_another_reviewers_question_is_refused_by_url_and_by_form_field(web, browser, client):
    before = question_rows(web.admin, web.open_b)
    hidden = f"no run {web.open_b} that you may see"  # row-level security shows A nothing of B's run
    sign_in(browser, web.base)
    browser.get(f"{web.base}/runs/{web.open_b}/questions/{QUESTION}")
    assert hidden in browser.find_element(By.ID, "error").text
    browser.get(f"{web.base}/runs/{web.open_b}")
    assert hidden in browser.find_element(By.ID, "error").text
    raw = client(web.base)
    raw.sign_in(REVIEWER_ROLE)
    assert raw.http.get(f"/runs/{web.open_b}/questions/{QUESTION}").status_code == 404
    shot(browser, "other-reviewer-url")

    browser.get(f"{web.base}/runs/{web.open_a}/questions/{QUESTION}")
    browser.execute_script("document.querySelector('#score input[name=eval_run_id]').value = arguments[0];",
                           str(web.open_b))
    fill(browser, hallucinations_detected=0, total_claims=2, diagnosis_accuracy_score="1", narrative_coherence_rating=5)
    click(browser, "#save")
    assert hidden in browser.find_element(By.ID, "error").text
    shot(browser, "other-reviewer-form")
    assert question_rows(web.admin, web.open_b) == before


@needs_chromium
def test_a_completed_run_cannot_change(web, browser):
    before = question_rows(web.admin, web.completed_a)
    sign_in(browser, web.base)
    browser.get(f"{web.base}/runs/{web.completed_a}/questions/{QUESTION}")
    assert browser.find_elements(By.ID, "completed")
    fill(browser, narrative_coherence_rating=1, reviewer_comments="changed after completion")
    click(browser, "#save")
    error = browser.find_element(By.ID, "error").text
    assert error.startswith("refused by the database:") and "SQLSTATE" in error
    shot(browser, "completed-run")
    browser.get(f"{web.base}/runs/{web.completed_a}/sign-off")
    browser.find_element(By.ID, "hours").send_keys("9")
    click(browser, "#sign-off button")
    assert "is complete" in browser.find_element(By.ID, "error").text
    assert question_rows(web.admin, web.completed_a) == before


@needs_chromium
def test_sql_typed_into_a_comment_is_stored_as_text(web, browser):
    comment = "x'); DROP TABLE evalledger.brain_eval_question_score; -- \" <script>alert(1)</script>"
    sign_in(browser, web.base)
    browser.get(f"{web.base}/runs/{web.open_a}/questions/{QUESTION}")
    fill(browser, hallucinations_detected=0, total_claims=4, diagnosis_accuracy_score="1",
         narrative_coherence_rating=4, reviewer_comments=comment)
    click(browser, "#save")
    assert "Saved" in browser.find_element(By.ID, "flash").text
    assert browser.find_element(By.ID, "reviewer_comments").get_attribute("value") == comment
    assert web.admin.execute("SELECT reviewer_comments FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s "
                         "AND question_id = %s", (web.open_a, QUESTION)).fetchone()[0] == comment
    assert web.admin.execute("SELECT count(*) FROM evalledger.brain_eval_question_score").fetchone()[0] == 90


@needs_chromium
def test_signing_off_records_hours_and_notes(web, browser):
    sign_in(browser, web.base)
    browser.get(f"{web.base}/runs/{web.open_a}/sign-off")
    browser.find_element(By.ID, "hours").send_keys("many")
    click(browser, "#sign-off button")
    assert browser.find_element(By.ID, "error").text.endswith("hours: 'many': expected hours, e.g. 1.5")
    browser.find_element(By.ID, "hours").clear()
    browser.find_element(By.ID, "hours").send_keys("2.5")
    browser.find_element(By.NAME, "note_citation_rate").send_keys("cite the as-of date")
    click(browser, "#sign-off button")
    assert "Signed off" in browser.find_element(By.ID, "flash").text
    assert web.admin.execute("SELECT reviewer_hours_spent::float, calibration_notes FROM evalledger.brain_eval_run_review "
                         "WHERE eval_run_id = %s", (web.open_a,)).fetchall() == [(2.5, {"citation_rate": "cite the as-of date"})]


@needs_chromium
def test_an_auditor_reads_every_run_and_cannot_score(web, browser, client):
    sign_in(browser, web.base, AUDITOR_ROLE)
    assert browser.current_url == f"{web.base}/runs"
    listed = {a.text for a in browser.find_elements(By.CSS_SELECTOR, "#runs a.run-link")}
    assert listed == {str(web.open_a), str(web.completed_a), str(web.open_b)}
    browser.get(f"{web.base}/runs/{web.completed_a}")
    assert browser.find_element(By.ID, "decision").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#questions tbody tr")) == 30
    assert not browser.find_elements(By.TAG_NAME, "textarea")
    shot(browser, "auditor-run")
    browser.get(f"{web.base}/runs/{web.open_a}/questions/{QUESTION}")
    assert "is not a reviewer" in browser.find_element(By.ID, "error").text


# -- raw HTTP: what a browser would not send -------------------------------------------------------------


def _save_form(run_id, **extra) -> dict:
    return {"eval_run_id": str(run_id), "question_id": QUESTION, "hallucinations_detected": "0", "total_claims": "3",
            "diagnosis_accuracy_score": "1", "narrative_coherence_rating": "5", "reviewer_comments": "forged",
            **extra}


def test_a_missing_or_forged_csrf_token_is_refused(web, client):
    reviewer = client(web.base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    page = reviewer.http.get(f"/runs/{web.open_a}/questions/{QUESTION}")
    assert page.status_code == 200
    before = question_rows(web.admin, web.open_a)
    for token in ({}, {"csrf_token": ""}, {"csrf_token": "forged-" + "x" * 40}):
        for path, form in (("/review/save", _save_form(web.open_a)),
                           ("/review/suggestions", {"eval_run_id": str(web.open_a), "question_id": QUESTION}),
                           (f"/runs/{web.open_a}/sign-off", {"hours": "1"}), ("/sign-out", {})):
            refused = reviewer.http.post(path, data={**form, **token})
            assert refused.status_code == 403, (path, token)
            assert "CSRF token is missing or wrong" in refused.text
    assert question_rows(web.admin, web.open_a) == before
    assert reviewer.http.get("/queue").status_code == 200  # still signed in: sign-out was refused too

    # Another session's token is not this session's.
    other = client(web.base)
    other.sign_in(OTHER_REVIEWER_ROLE)
    theirs = other.http.get(f"/runs/{web.open_b}/questions/{QUESTION}")
    from tests.web.conftest import csrf_of

    refused = reviewer.http.post("/review/save", data={**_save_form(web.open_a), "csrf_token": csrf_of(theirs.text)})
    assert refused.status_code == 403
    assert question_rows(web.admin, web.open_a) == before

    # The sign-in form has its own token: a cross-site sign-in without it is refused.
    stranger = client(web.base)
    assert stranger.http.post("/sign-in", data={"login": REVIEWER_ROLE, "password": TEST_PASSWORD}).status_code == 403

    # With the token the same save goes through.
    saved = reviewer.http.post("/review/save", data={**_save_form(web.open_a), "csrf_token": csrf_of(page.text)})
    assert saved.status_code == 303
    assert web.admin.execute("SELECT reviewer_comments FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s "
                         "AND question_id = %s", (web.open_a, QUESTION)).fetchone()[0] == "forged"


