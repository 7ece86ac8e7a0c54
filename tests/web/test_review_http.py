"""The reviewer's pages over raw HTTP (the browser tests are in test_review_browser.py): the queue
and the run page say what waits; a save goes on to the next question needing work and shows the
saved one's reference answer, recorded; nothing typed is lost to an invalid entry, a question
someone changed meanwhile, an ended session, a restarted app or a database out of reach; and every
refusal (another reviewer's question, a forged or missing CSRF token, a completed run) leaves the
ledger as it was, re-read as the superuser."""

from __future__ import annotations

import html
import re
import time

import pytest

from evalledger.suites.brain_eval import store
from evalledger.core import db
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE
from tests.web.conftest import Client, csrf_of, question_rows, refused_connections

DIAGNOSIS = "EVAL-Q01"  # plan_diagnosis: asks diagnosis accuracy too
PLAIN = "EVAL-Q23"  # expansion_qualification: hallucinations, claims, coherence
NUMBERS = {"hallucinations_detected": "0", "total_claims": "3", "diagnosis_accuracy_score": "1",
           "narrative_coherence_rating": "4", "reviewer_comments": ""}


def path_of(run_id, question: str) -> str:
    return f"/runs/{run_id}/questions/{question}"


def form_fields(page: str) -> dict:
    """The hidden fields of a question page's score form, and what its inputs hold."""
    form = page[page.index('id="score"'):page.index("</form>", page.index('id="score"'))]
    found = {m[0]: html.unescape(m[1]) for m in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form)}
    found.update({m[0]: html.unescape(m[1]) for m in re.findall(r'name="(\w+)" id="\w+" value="([^"]*)"', form)})
    return found


def post_save(client: Client, run_id, question: str, page: str | None = None, **values):
    """Submit question's form as its page showed it (or as `page` did), with values typed in."""
    page = page if page is not None else client.http.get(path_of(run_id, question)).text
    fields = {**form_fields(page), **NUMBERS, **values}
    return client.http.post("/review/save", data={k: v for k, v in fields.items() if v is not None})


def stored(admin, run_id, question: str) -> tuple:
    return admin.execute("SELECT hallucinations_detected, total_claims, diagnosis_accuracy_score::float, "
                         "narrative_coherence_rating, reviewer_comments FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s AND question_id = %s", (run_id, question)).fetchone()


def test_the_queue_and_the_run_page_say_what_waits(web, signed_in):
    queue = signed_in.http.get("/queue").text
    assert "AGT-902 · quarterly · catalog v28-2026Q2</a>" in queue  # the run by what it is, not its id
    assert re.search(r"<b>\d+ of 30</b> questions scored", queue)
    assert "What each question still needs" in queue
    assert re.search(r"EVAL-Q\d+</a>: hallucinations detected, total claims, staleness correctly recognized", queue)
    assert str(web.open_b) not in queue and str(web.completed_a) not in queue
    run = signed_in.http.get(f"/runs/{web.open_a}").text
    assert "Why is EMEA at 71% of plan this quarter" in run  # each question's text
    assert 'id="next-needed"' in run


def test_a_save_goes_on_to_the_next_question_and_shows_the_reference_it_recorded(web, signed_in):
    page = signed_in.http.get(path_of(web.open_a, DIAGNOSIS)).text
    assert "Expected findings" not in page and 'class="findings"' not in page  # blind
    assert 'id="blind"' in page
    assert 'value="3"' in page and "the answer lists 3" in page  # the claims count, filled in
    assert re.search(r'id="hallucinations_detected" value=""[^>]*autofocus', page)
    saved = post_save(signed_in, web.open_a, DIAGNOSIS, page, reviewer_comments="Names the coverage gap.")
    assert saved.status_code == 303
    assert saved.headers["location"] == f"{path_of(web.open_a, 'EVAL-Q02')}?m=saved&saved={DIAGNOSIS}"
    following = signed_in.http.get(saved.headers["location"]).text
    assert f'Just saved: <a href="{path_of(web.open_a, DIAGNOSIS)}" id="saved-link">{DIAGNOSIS}</a>, which is complete' \
        in following
    assert '<ul class="findings"><li>pipeline coverage of 2.1x is below the 3x plan assumption</li></ul>' in following
    assert "citation rate at least 0.9" in following
    assert stored(web.admin, web.open_a, DIAGNOSIS) == (0, 3, 1.0, 4, "Names the coverage gap.")
    shown = web.admin.execute("SELECT shown_by::text FROM evalledger.brain_eval_reference_shown WHERE eval_run_id = %s "
                              "AND question_id = %s", (web.open_a, DIAGNOSIS)).fetchall()
    assert shown == [(REVIEWER_ROLE,)]
    again = signed_in.http.get(path_of(web.open_a, DIAGNOSIS)).text
    assert 'id="reference"' in again and "Expected findings" in again
    # A saved panel names only a question of the run: no text is reflected from the URL.
    assert "Just saved" not in signed_in.http.get(f"{path_of(web.open_a, 'EVAL-Q03')}?m=saved&saved=<script>").text


def test_a_claim_citing_a_source_not_given_is_marked_and_each_number_says_what_it_came_from(web, signed_in):
    page = signed_in.http.get(path_of(web.open_a, "EVAL-Q07")).text
    assert "crm_export_2025: not given for this question" in page
    assert 'href="#src-crm_export_2025"' not in page  # no link that leads nowhere
    assert re.search(r"over numerical claims: \d+ of \d+ \(claims", page)
    assert "each label's share of the" in page
    assert "proposed actions outside the brain's levers (add_pipeline_generation" in page


def test_an_invalid_save_keeps_everything_typed_and_focuses_the_first_error(web, signed_in):
    before = question_rows(web.admin, web.open_a)
    long = "A comment that runs on. " * 200
    refused = post_save(signed_in, web.open_a, "EVAL-Q03", hallucinations_detected="5", total_claims="3",
                        narrative_coherence_rating="7", reviewer_comments=long)
    assert refused.status_code == 400
    text = refused.text
    assert "5 hallucinations but 3 claims: a hallucination is one of the claims" in text
    assert "&#39;7&#39;: a rating is a whole number from 1 (incoherent) to 5" in text
    assert f"{len(long)} characters: a comment is at most 4000 (shorten it by {len(long) - 4000})" in text
    assert html.escape(long, quote=False) in text  # the comment, whole
    assert re.search(r'id="hallucinations_detected" value="5"[^>]*aria-invalid="true"[^>]*autofocus', text)
    assert question_rows(web.admin, web.open_a) == before


def test_a_question_changed_since_it_was_shown_is_not_overwritten(web, signed_in, client):
    other_window = client(web.base)
    other_window.sign_in(REVIEWER_ROLE)
    mine = signed_in.http.get(path_of(web.open_a, "EVAL-Q04")).text
    # 4 claims, one of them unsupported: no more supported claims than the answer lists.
    theirs = post_save(other_window, web.open_a, "EVAL-Q04", narrative_coherence_rating="2", total_claims="4",
                       hallucinations_detected="1")
    assert theirs.status_code == 303
    refused = post_save(signed_in, web.open_a, "EVAL-Q04", mine, narrative_coherence_rating="5", total_claims="3")
    assert refused.status_code == 409
    assert "not saved: EVAL-Q04 changed since it was shown to you: " in refused.text
    assert f"total claims 4 by {REVIEWER_ROLE} at" in refused.text
    assert "stored now: 4" in refused.text  # beside the field
    assert stored(web.admin, web.open_a, "EVAL-Q04")[1:4] == (4, 1.0, 2)
    again = post_save(signed_in, web.open_a, "EVAL-Q04", refused.text, narrative_coherence_rating="5",
                      total_claims="3")
    assert again.status_code == 303  # shown what is stored, the reviewer chose to replace it
    assert stored(web.admin, web.open_a, "EVAL-Q04")[1:4] == (3, 1.0, 5)


def test_a_save_after_the_session_ended_is_saved_after_signing_in_again(web, serve, client):
    base = serve(idle_minutes=1 / 60)
    reviewer = client(base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    page = reviewer.http.get(path_of(web.open_a, "EVAL-Q05")).text
    time.sleep(1.5)
    kept = post_save(reviewer, web.open_a, "EVAL-Q05", page, reviewer_comments="typed before lunch")
    assert kept.status_code == 401
    assert f"Sign in again as {REVIEWER_ROLE}: it is kept, and saved once you are signed in" in kept.text
    assert stored(web.admin, web.open_a, "EVAL-Q05")[4] is None
    back = reviewer.http.post("/sign-in", data={"csrf_token": csrf_of(kept.text), "login": REVIEWER_ROLE,
                                                "password": "evalledger-test-password",
                                                "kept": re.search(r'name="kept" value="([^"]+)"', kept.text).group(1),
                                                "next": path_of(web.open_a, "EVAL-Q05")})
    assert back.status_code == 303
    assert back.headers["location"] == f"{path_of(web.open_a, 'EVAL-Q06')}?saved=EVAL-Q05&m=resumed"
    assert stored(web.admin, web.open_a, "EVAL-Q05") == (0, 3, 1.0, 4, "typed before lunch")


def test_a_form_sent_without_a_session_is_offered_back_unsaved(web, client):
    before = question_rows(web.admin, web.open_a)
    stranger = client(web.base)  # as after the app restarted: the browser's session is unknown here
    page = stranger.http.get("/sign-in")
    fields = {"csrf_token": "from-a-session-this-app-never-had", "eval_run_id": str(web.open_a),
              "question_id": "EVAL-Q06", "shown_entry": "0", **NUMBERS, "reviewer_comments": "typed, then a restart"}
    kept = stranger.http.post("/review/save", data=fields, headers={"Origin": web.base})
    assert kept.status_code == 401
    assert "what you typed is offered back on its page, not saved yet" in kept.text
    back = stranger.http.post("/sign-in", data={"csrf_token": csrf_of(kept.text), "login": REVIEWER_ROLE,
                                                "password": "evalledger-test-password",
                                                "kept": re.search(r'name="kept" value="([^"]+)"', kept.text).group(1)})
    assert back.headers["location"] == f"{path_of(web.open_a, 'EVAL-Q06')}?m=kept"
    offered = stranger.http.get(back.headers["location"]).text
    assert "Not saved yet: what you typed before is filled in below" in offered
    assert ">typed, then a restart</textarea>" in offered
    assert question_rows(web.admin, web.open_a) == before  # offered, not saved
    assert "typed, then a restart" not in stranger.http.get(path_of(web.open_a, "EVAL-Q06")).text  # offered once
    # A forged cross-site POST is neither kept nor offered.
    forged = client(web.base).http.post("/review/save", data=fields, headers={"Origin": "https://attacker.example"})
    assert forged.status_code == 403 and 'name="kept"' not in forged.text
    del page


def test_a_save_while_the_database_is_out_of_reach_keeps_the_form_and_the_session(web, client):
    reviewer = client(web.base)
    assert reviewer.sign_in(REVIEWER_ROLE).status_code == 303
    page = reviewer.http.get(path_of(web.open_a, "EVAL-Q08")).text
    with refused_connections(web.admin, REVIEWER_ROLE):
        lost = post_save(reviewer, web.open_a, "EVAL-Q08", page, reviewer_comments="kept through a restart")
        assert lost.status_code == 503
        assert "the database is not reachable just now" in lost.text and "nothing was saved" in lost.text
        assert ">kept through a restart</textarea>" in lost.text
        assert reviewer.http.get("/queue").status_code == 503  # still signed in
    again = post_save(reviewer, web.open_a, "EVAL-Q08", lost.text, reviewer_comments="kept through a restart")
    assert again.status_code == 303
    assert stored(web.admin, web.open_a, "EVAL-Q08")[4] == "kept through a restart"


def test_a_completed_run_shows_its_form_read_only_and_refuses_a_save(web, signed_in):
    before = question_rows(web.admin, web.completed_a)
    page = signed_in.http.get(path_of(web.completed_a, DIAGNOSIS)).text
    assert 'id="completed"' in page and 'id="save"' not in page
    assert re.search(r'id="hallucinations_detected" value="\d+"[^>]* disabled', page)
    refused = post_save(signed_in, web.completed_a, DIAGNOSIS, page, narrative_coherence_rating="1")
    assert refused.status_code == 403 and "refused by the database:" in refused.text and "is complete" in refused.text
    sign_off = signed_in.http.get(f"/runs/{web.completed_a}/sign-off").text
    assert re.search(r'id="hours"[^>]* disabled', sign_off) and "its review is final" in sign_off
    assert question_rows(web.admin, web.completed_a) == before


def test_signing_off_again_starts_from_the_last_sign_off_and_completion_keeps_its_notes(web, signed_in, client):
    run_id = web.another_run()
    form_page = signed_in.http.get(f"/runs/{run_id}/sign-off").text
    token = csrf_of(form_page)
    comma = signed_in.http.post(f"/runs/{run_id}/sign-off", data={"csrf_token": token, "eval_run_id": str(run_id),
                                                                   "hours": "3,5"})
    assert comma.status_code == 400 and "hours: &#39;3,5&#39;: write hours with a dot, e.g. 3.5" in comma.text
    assert 'value="3,5"' in comma.text
    early = signed_in.http.post(f"/runs/{run_id}/sign-off", data={"csrf_token": token, "eval_run_id": str(run_id),
                                                                   "hours": "2.5"})
    assert early.status_code == 409 and "cannot be signed off before its questions are scored: EVAL-Q01: " in early.text
    # Every question scored (as the demo reviewer would): a sign-off comes after the numbers.
    from evalledger.suites.brain_eval import reviewing
    from evalledger.suites.brain_eval.demo import review_path

    with db.transaction(None, web.dsn) as conn:
        db.set_local_role(conn, REVIEWER_ROLE)
        reviewing.apply_scores(conn, run_id, review_path(), reviewing.read_scores(review_path()))
    first = signed_in.http.post(f"/runs/{run_id}/sign-off", data={
        "csrf_token": token, "eval_run_id": str(run_id), "hours": "2.5",
        "note_citation_rate": "cite the as-of date", "note_hallucination_rate": "two invented figures"})
    assert first.status_code == 303
    again = signed_in.http.get(f"/runs/{run_id}/sign-off").text
    assert 'value="2.5"' in again and ">cite the as-of date</textarea>" in again
    fields = dict(re.findall(r'<textarea name="(note_\w+)" id="\w+" rows="2">([^<]*)</textarea>', again))
    resent = signed_in.http.post(f"/runs/{run_id}/sign-off", data={
        "csrf_token": token, "eval_run_id": str(run_id), "hours": "3", **{k: html.unescape(v) for k, v in fields.items()}})
    assert resent.status_code == 303
    # The same sign-off sent again (a double submit) is the one already made: no second row.
    twice = signed_in.http.post(f"/runs/{run_id}/sign-off", data={
        "csrf_token": token, "eval_run_id": str(run_id), "hours": "3", **{k: html.unescape(v) for k, v in fields.items()}})
    assert twice.status_code == 303
    assert web.admin.execute("SELECT count(*) FROM evalledger.brain_eval_run_review WHERE eval_run_id = %s",
                             (run_id,)).fetchone()[0] == 2
    with db.transaction("runner", web.dsn) as conn:
        store.complete_run(conn, run_id)
    notes, hours = web.admin.execute("SELECT calibration_notes, reviewer_hours_spent::float FROM "
                                     "evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()
    assert hours == 3.0
    assert notes == {"citation_rate": "cite the as-of date", "hallucination_rate": "two invented figures"}


def test_another_reviewers_question_is_refused_by_url_and_by_form_field(web, signed_in):
    before = question_rows(web.admin, web.open_b)
    hidden = f"no run {web.open_b} that you may see"
    for path in (path_of(web.open_b, DIAGNOSIS), f"/runs/{web.open_b}", f"/runs/{web.open_b}/sign-off"):
        refused = signed_in.http.get(path)
        assert refused.status_code == 404 and hidden in refused.text
    page = signed_in.http.get(path_of(web.open_a, "EVAL-Q09")).text
    forged = post_save(signed_in, web.open_a, "EVAL-Q09", page, eval_run_id=str(web.open_b))
    assert forged.status_code == 404 and hidden in forged.text
    assert question_rows(web.admin, web.open_b) == before


def test_showing_the_suggestions_first_is_recorded(web, signed_in):
    page, token = signed_in.form_of(path_of(web.open_a, "EVAL-Q10"))
    shown = signed_in.http.post("/review/suggestions", data={"csrf_token": token, "eval_run_id": str(web.open_a),
                                                             "question_id": "EVAL-Q10"})
    assert shown.status_code == 303
    revealed = signed_in.http.get(path_of(web.open_a, "EVAL-Q10")).text
    assert 'class="suggestion"' in revealed and 'id="reference"' not in revealed  # the reference waits for the numbers
    assert post_save(signed_in, web.open_a, "EVAL-Q10", revealed, diagnosis_accuracy_score="0.5").status_code == 303
    entries = web.admin.execute("SELECT DISTINCT suggestions_shown FROM evalledger.brain_eval_review_entry "
                                "WHERE eval_run_id = %s AND question_id = 'EVAL-Q10'", (web.open_a,)).fetchall()
    assert entries == [(True,)]


def test_a_missing_or_forged_csrf_token_is_refused(web, signed_in, client):
    page = signed_in.http.get(path_of(web.open_a, "EVAL-Q11")).text
    before = question_rows(web.admin, web.open_a)
    form = {**form_fields(page), **NUMBERS}
    for token in ({"csrf_token": None}, {"csrf_token": ""}, {"csrf_token": "forged-" + "x" * 40}):
        for path, fields in (("/review/save", form),
                             ("/review/suggestions", {"eval_run_id": str(web.open_a), "question_id": "EVAL-Q11"}),
                             (f"/runs/{web.open_a}/sign-off", {"hours": "1", "eval_run_id": str(web.open_a)}),
                             ("/sign-out", {})):
            sent = {k: v for k, v in {**fields, **token}.items() if v is not None}
            refused = signed_in.http.post(path, data=sent)
            assert refused.status_code == 403, (path, token)
            assert "CSRF token is missing or wrong" in refused.text
    assert question_rows(web.admin, web.open_a) == before
    assert signed_in.http.get("/queue").status_code == 200  # still signed in: sign-out was refused too
    other = client(web.base)
    other.sign_in(OTHER_REVIEWER_ROLE)
    theirs = csrf_of(other.http.get(path_of(web.open_b, DIAGNOSIS)).text)
    assert signed_in.http.post("/review/save", data={**form, "csrf_token": theirs}).status_code == 403
    assert client(web.base).http.post("/sign-in", data={"login": REVIEWER_ROLE, "password": "x"}).status_code == 403
    assert question_rows(web.admin, web.open_a) == before


def test_sql_and_markup_typed_into_a_comment_are_stored_as_text(web, signed_in):
    comment = "x'); DROP TABLE evalledger.brain_eval_question_score; -- \" <script>alert(1)</script>"
    assert post_save(signed_in, web.open_a, PLAIN, reviewer_comments=comment).status_code == 303
    assert stored(web.admin, web.open_a, PLAIN)[4] == comment
    page = signed_in.http.get(path_of(web.open_a, PLAIN)).text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_an_auditor_reads_every_run_and_cannot_score(web, client):
    auditor = client(web.base)
    auditor.sign_in("evalledger_test_web_auditor")
    runs = auditor.http.get("/runs").text
    for run_id in (web.open_a, web.completed_a, web.open_b):
        assert str(run_id) in runs
    assert 'id="decision"' in auditor.http.get(f"/runs/{web.completed_a}").text
    refused = auditor.http.get(path_of(web.open_a, DIAGNOSIS))
    assert refused.status_code == 403 and "is not a reviewer" in refused.text


@pytest.mark.parametrize("body", ["x" * (1024 * 1024 + 10)])
def test_a_comment_past_a_megabyte_is_refused_with_what_was_typed(web, signed_in, body):
    refused = post_save(signed_in, web.open_a, "EVAL-Q12", reviewer_comments=body)
    assert refused.status_code == 400
    assert f"{len(body)} characters: a comment is at most 4000" in refused.text
    assert body in refused.text


def repeated_run(web, repeats: int, question: str) -> "UUID":
    """An open run of reviewer A over one question of the demo catalog whose judges each drafted
    `repeats` times on its answer (--repeats K), of a version of the demo brain of its own."""
    from uuid import uuid4

    from psycopg.types.json import Jsonb

    from evalledger.judges.panel import run_sync
    from evalledger.judges.pricing import Budget
    from evalledger.suites.brain_eval import brains, contracts, harness
    from evalledger.suites.brain_eval.demo import DEMO_BRAIN, views_path
    from tests.web.conftest import add_demo_version

    label = f"demo_{uuid4().hex[:12]}"
    add_demo_version(web.dsn, label)
    with db.transaction("runner", web.dsn) as conn:
        brain = brains.resolve(conn, DEMO_BRAIN["target_id"], label)
        planned = harness.plan(conn, brain, "v28-2026Q2", [question], REVIEWER_ROLE, "on_demand",
                               contracts.from_folder(views_path()), "recorded", repeats)
        run_id, resumed, answered = harness.start_or_resume(conn, planned)
    run_sync(harness.execute(planned, run_id, answered, url=web.dsn, concurrency=1, timeout_s=60, max_retries=0,
                             budget=Budget(None), progress=None, resumed=resumed))
    with db.transaction("runner", web.dsn) as conn:
        for n in range(1, repeats + 1):
            conn.execute("INSERT INTO evalledger.brain_eval_judge_suggestion (eval_run_id, question_id, model, recorded, "
                         "response_json, repeat_no) VALUES (%s, %s, 'openai:gpt-4o', false, %s, %s)",
                         (run_id, question, Jsonb({"total_claims": 3, "unsupported_claims": ["x"] * (n % 2),
                                                   "diagnosis_accuracy": 1, "notes": f"asking {n}"}), n))
    return run_id


def test_each_draft_of_a_repeated_run_says_which_repeat_it_is(web, signed_in):
    """In a run of K > 1 repeats, each judge's draft on the question page (and on the page after a
    save) says "repeat N of K", in the order asked; a run of one repeat's drafts say nothing new."""
    question = "EVAL-Q01"
    run_id = repeated_run(web, 3, question)
    _, token = signed_in.form_of(path_of(run_id, question))
    assert signed_in.http.post("/review/suggestions", data={"csrf_token": token, "eval_run_id": str(run_id),
                                                            "question_id": question}).status_code == 303
    page = signed_in.http.get(path_of(run_id, question)).text
    labels = re.findall(r"openai:gpt-4o <span class=\"badge repeat\">repeat (\d) of (\d)</span>", page)
    assert labels == [("1", "3"), ("2", "3"), ("3", "3")], page
    assert [html.unescape(n) for n in re.findall(r"asking \d", page)] == ["asking 1", "asking 2", "asking 3"]
    saved = post_save(signed_in, run_id, question, page, diagnosis_accuracy_score="1")
    assert saved.status_code == 303
    after = signed_in.http.get(saved.headers["location"]).text
    assert after.count("repeat 2 of 3") == 1, after
    # A run of one repeat: its drafts as before, no repeat named.
    single = web.another_run()
    _, token = signed_in.form_of(path_of(single, question))
    signed_in.http.post("/review/suggestions", data={"csrf_token": token, "eval_run_id": str(single),
                                                     "question_id": question})
    page = signed_in.http.get(path_of(single, question)).text
    assert 'class="suggestion"' in page and "repeat " not in page and 'class="badge repeat"' not in page
