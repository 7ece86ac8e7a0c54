"""The guided review in the terminal as a reviewer types into it: `evalledger review RUN` and
`evalledger review queue`, blind to the judges until each question is saved, resumable."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from evalledger.core.paths import package_path
from tests.cli import run_cli
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, ensure_login_role
from tests.e2e.test_harness_cli import demo_file, harness, run_args  # noqa: F401  (fixtures)


@pytest.fixture
def env(dsn):
    return {"DATABASE_URL": dsn}


@pytest.fixture
def run_id(env, harness):
    """A harness run of three questions (recorded answers and judges) waiting for REVIEWER_ROLE:
    EVAL-Q03 (stale fixture, diagnosis), EVAL-Q07 (diagnosis), EVAL-Q24 (breaks the answer contract)."""
    done = run_cli(*run_args(harness, "--questions", "EVAL-Q03,EVAL-Q07,EVAL-Q24"), env=env)
    assert done.code == 0, done.err
    return done.out.split()[1]


def review(run_id, *args, env, input):
    return run_cli("review", run_id, "--as", REVIEWER_ROLE, *args, env=env, input=input)


def lines(*typed: str) -> str:
    return "".join(f"{t}\n" for t in typed)


def scores(admin, run_id) -> dict:
    rows = admin.execute(
        "SELECT question_id, hallucinations_detected, total_claims, staleness_correctly_recognized,"
        "       diagnosis_accuracy_score::float, narrative_coherence_rating, reviewer_comments"
        "  FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s ORDER BY question_id", (run_id,)).fetchall()
    return {r[0]: r[1:] for r in rows}


def trail(admin, run_id) -> list[tuple]:
    return admin.execute(
        "SELECT question_id, field, value, suggestions_shown, acting_role::text FROM evalledger.brain_eval_review_entry"
        " WHERE eval_run_id = %s ORDER BY entry_id", (run_id,)).fetchall()


def sign_offs(admin, run_id) -> list[tuple]:
    return admin.execute(
        "SELECT reviewer_hours_spent::float, calibration_notes FROM evalledger.brain_eval_run_review"
        " WHERE eval_run_id = %s ORDER BY review_id", (run_id,)).fetchall()


def queue(env, role=REVIEWER_ROLE):
    return run_cli("review", "queue", "--as", role, env=env)


UNREGISTERED = "evalledger_test_reviewer_unregistered"
NOT_SCORED = (None, None, None, None, None, None)

Q03 = """\
EVAL-Q03  plan_diagnosis  STALE FIXTURE  (1 of 3)
  question: Why is NA-West at 64% of plan this quarter, and what is the main driver of the gap?
  answer: win rate fell from 24% to 17% after the pricing change the pipeline coverage source is six months old and must not be treated as current. Note: pipeline_coverage_na-west is as of 2025-11-30, so it is stale and treated as indicative only.
  claims: 3 (2 numerical)
    1. [high] Quota attainment, NA-West, quarter to date: {"rep_count": 11, "attainment": 0.64, "quota_usd": 4800000}  <- quota_attainment_na-west
    2. [multi_source] win rate fell from 24% to 17% after the pricing change  <- quota_attainment_na-west, pipeline_coverage_na-west
    3. [inference] The trend is likely to continue next quarter without intervention.  <- no source
  automatic: citation rate 1, confidence high 33.33% / multi-source 33.33% / inference 33.33% / speculation 0%, lever violations 0
"""
Q03_JUDGES = """\
  judge anthropic:claude-opus-4-7 (the brain’s family) (recorded): 3 claims; 0 unsupported; diagnosis 1; staleness recognised: yes
      The narrative follows the sources.
  judge google:gemini-1.5-pro (recorded): 3 claims; 0 unsupported; diagnosis 0.5; staleness recognised: yes
      The narrative follows the sources.
  judge openai:gpt-4o (recorded): 3 claims; 0 unsupported; diagnosis 1; staleness recognised: yes
      The narrative follows the sources.
"""
Q07 = """\
EVAL-Q07  coverage_gap  (2 of 3)
  question: Where is SMB short of pipeline for next quarter, by how much, and which lever closes the gap fastest?
  answer: SMB is short of about $450,000 of pipeline against a 3x target.
  claims: 3 (2 numerical)
    1. [high] Coverage target, SMB, next quarter: {"segment": "SMB", "target_coverage": 3.0}  <- crm_export_2025
    2. [multi_source] SMB is short of about $450,000 of pipeline against a 3x target  <- coverage_target_3, open_pipeline_3
    3. [inference] The trend is likely to continue next quarter without intervention.  <- no source
    action add_pipeline_generation: The lever that addresses the main driver.
  automatic: citation rate 0.5, confidence high 33.33% / multi-source 33.33% / inference 33.33% / speculation 0%, lever violations 0
"""
Q07_JUDGES = """\
  judge anthropic:claude-opus-4-7 (the brain’s family) (recorded): 3 claims; 1 unsupported; diagnosis 1
      “Coverage target, SMB, next quarter: {"segment": "SMB", "target_coverage": 3.0}”
      A claim cites a source the brain was not given. The narrative follows the sources.
  judge google:gemini-1.5-pro (recorded): 3 claims; 1 unsupported; diagnosis 1
      “Coverage target, SMB, next quarter: {"segment": "SMB", "target_coverage": 3.0}”
      A claim cites a source the brain was not given. The narrative follows the sources.
  judge openai:gpt-4o (recorded): 3 claims; 1 unsupported; diagnosis 1
      “Coverage target, SMB, next quarter: {"segment": "SMB", "target_coverage": 3.0}”
      A claim cites a source the brain was not given. The narrative follows the sources.
"""
Q24 = """\
EVAL-Q24  expansion_qualification  (3 of 3)
  question: Is Woodgrove Energy qualified for an expansion this half? Give the evidence and the proposed next action.
  answer breaks the contract (not a JSON document): I could not find enough in the sources to answer this one confidently; the seat data looks fine.
  automatic: citation rate 0, confidence high 0% / multi-source 0% / inference 0% / speculation 0%, lever violations 1
"""
Q03_REF = """\
  the reference answer (now that your numbers are saved; recorded):
    expected: win rate fell from 24% to 17% after the pricing change
    expected: the pipeline coverage source is six months old and must not be treated as current
    pass criteria: at most 0 hallucinations; citation rate at least 0.9; diagnosis accuracy at least 0.5; coherence at least 3
"""
Q07_REF = """\
  the reference answer (now that your numbers are saved; recorded):
    expected: SMB is short of about $450,000 of pipeline against a 3x target
    pass criteria: at most 0 hallucinations; at most 0 lever violations; citation rate at least 0.9; diagnosis accuracy \
at least 0.5; coherence at least 3
"""
Q24_REF = """\
  the reference answer (now that your numbers are saved; recorded):
    expected: Woodgrove Energy uses more than 90% of its seats and is trialling the analytics module
    pass criteria: at most 0 hallucinations; at most 0 lever violations; citation rate at least 0.9; coherence at least 3
"""
SAVED = "  the judges' suggestions (now that your numbers are saved):\n"
FIRST = "  the judges' suggestions (shown first: --show-suggestions):\n"
NOTES = """\
calibration notes per rubric dimension (Enter for none):
  citation_rate: {}
  hallucination_rate: {}
  staleness_recognition_rate: {}
  diagnosis_accuracy_mean: {}
  lever_mapping_correctness: {}
  confidence_calibration_in_band: {}
  narrative_coherence_mean: {}
"""


def header(run_id, to_score, blind=True):
    said = ("blind: each question's judge suggestions show once your numbers are saved" if blind else
            "the judges' suggestions on --show-suggestions: each question's suggestions show before you score it")
    return (f"run {run_id}: AGT-902, catalog v28-2026Q2, 3 questions, {to_score} to score\n"
            f"{said}; type s at a number prompt for the text of the sources the answer cites; Ctrl-C stops, and "
            "what is saved stays saved\n")


def test_a_whole_review_typed_in_blind_with_refused_values_asked_again(env, admin, run_id):
    before = queue(env)
    assert before.code == 0, before.err
    [first, waiting, how] = before.out.splitlines()
    assert re.fullmatch(rf"{run_id}  AGT-902  quarterly  catalog v28-2026Q2  started \S+ \S+: 3 questions, "
                        "3 to score, not signed off", first), first
    assert (waiting, how) == ("  waiting: EVAL-Q03, EVAL-Q07, EVAL-Q24", f"  evalledger review {run_id}")

    typed = lines(
        "0", "", "yes", "1", "4", "",                         # EVAL-Q03: Enter keeps the answer's 3 claims
        "s", "5", "2", "1", "", "0.7", "0.5", "6", "3",       # EVAL-Q07: sources; 5 of 2 claims refused
        "levers ok",
        "0", "0", "x", "", "1", "",                           # EVAL-Q24: coherence x and nothing refused
        "EVAL-Q99", "eval-q07", "", "", "", "4", "",          # revisit EVAL-Q07, coherence 3 -> 4
        "",                                                   # then sign off
        "", "cite the as-of date", "", "", "", "", "",         # a note on hallucination_rate
        "-1", "1.5")                                          # hours: -1 refused
    done = review(run_id, env=env, input=typed)
    assert (done.code, done.err) == (0, "")
    assert done.out == (
        header(run_id, 3) + "\n" + Q03
        + "hallucinations detected: 0\ntotal claims [3]: \nstaleness recognised (yes/no): yes\n"
          "diagnosis accuracy (0, 0.5 or 1): 1\nnarrative coherence (1-5): 4\ncomments (optional): \n"
          "  saved EVAL-Q03: complete\n" + SAVED + Q03_JUDGES + Q03_REF
        + "\n" + Q07
        + "hallucinations detected: s\n"
          "  source crm_export_2025: not one of the question's sources\n"
          "  source coverage_target_3: Coverage target, SMB, next quarter (as of 2026-05-31)\n"
          '    {"segment": "SMB", "target_coverage": 3.0}\n'
          "  source open_pipeline_3: Open pipeline created in the last 90 days, SMB (as of 2026-05-31)\n"
          '    {"needed_usd": 5400000, "open_pipeline_usd": 4950000, "segment": "SMB"}\n'
          "hallucinations detected: 5\ntotal claims [3]: 2\n"
          "  not saved: 5 hallucinations but 2 claims: a hallucination is one of the claims; enter both again\n"
          "hallucinations detected: 1\ntotal claims [3]: \n"
          "diagnosis accuracy (0, 0.5 or 1): 0.7\n"
          "  not saved: '0.7': diagnosis accuracy is 0 (wrong), 0.5 (partly right) or 1 (right); enter it again\n"
          "diagnosis accuracy (0, 0.5 or 1): 0.5\n"
          "narrative coherence (1-5): 6\n"
          "  not saved: '6': a rating is a whole number from 1 (incoherent) to 5; enter it again\n"
          "narrative coherence (1-5): 3\ncomments (optional): levers ok\n"
          "  saved EVAL-Q07: complete\n" + SAVED + Q07_JUDGES + Q07_REF
        + "\n" + Q24
        + "hallucinations detected: 0\ntotal claims: 0\nnarrative coherence (1-5): x\n"
          "  not saved: 'x': a rating is a whole number from 1 (incoherent) to 5; enter it again\n"
          "narrative coherence (1-5): \n  not saved: an answer is needed; enter it again\n"
          "narrative coherence (1-5): 1\ncomments (optional): \n"
          "  saved EVAL-Q24: complete\n" + SAVED + "  judges: no suggestions on this question\n" + Q24_REF
        + "\nrevisit a question (its id; Enter to sign off): EVAL-Q99\n  no question EVAL-Q99 in this run\n"
        + "\nrevisit a question (its id; Enter to sign off): eval-q07\n\n" + Q07
        + "hallucinations detected [1]: \ntotal claims [3]: \ndiagnosis accuracy (0, 0.5 or 1) [0.5]: \n"
          "narrative coherence (1-5) [3]: 4\ncomments (optional) [levers ok]: \n"
          "  saved EVAL-Q07: complete\n" + SAVED + Q07_JUDGES + Q07_REF
        + "\nrevisit a question (its id; Enter to sign off): \n"
        + NOTES.format("", "cite the as-of date", "", "", "", "", "")
        + re.search(r"time spent on this run, hours \[\d+\.\d\d\]: ", done.out).group(0) + "-1\n"
          "  not saved: '-1': expected hours from 0 to 999.99; enter it again\n"
        + re.findall(r"time spent on this run, hours \[\d+\.\d\d\]: ", done.out)[1] + "1.5\n"
        + f"run {run_id}: signed off (1.5 hours, notes on 1 dimension)\n"
          f"every question is scored: the runner completes it with `evalledger brain-eval complete {run_id}`\n")

    # Saved as typed; the refused values left nothing behind.
    assert scores(admin, run_id) == {
        "EVAL-Q03": (0, 3, True, 1.0, 4, None),
        "EVAL-Q07": (1, 3, None, 0.5, 4, "levers ok"),
        "EVAL-Q24": (0, 0, None, None, 1, None)}
    # Blind: every value of the first pass was entered before that question's suggestions were
    # shown; the revisited coherence after.
    assert trail(admin, run_id) == [
        ("EVAL-Q03", "hallucinations_detected", 0, False, REVIEWER_ROLE),
        ("EVAL-Q03", "total_claims", 3, False, REVIEWER_ROLE),
        ("EVAL-Q03", "staleness_correctly_recognized", True, False, REVIEWER_ROLE),
        ("EVAL-Q03", "diagnosis_accuracy_score", 1, False, REVIEWER_ROLE),
        ("EVAL-Q03", "narrative_coherence_rating", 4, False, REVIEWER_ROLE),
        ("EVAL-Q07", "hallucinations_detected", 1, False, REVIEWER_ROLE),
        ("EVAL-Q07", "total_claims", 3, False, REVIEWER_ROLE),
        ("EVAL-Q07", "diagnosis_accuracy_score", 0.5, False, REVIEWER_ROLE),
        ("EVAL-Q07", "narrative_coherence_rating", 3, False, REVIEWER_ROLE),
        ("EVAL-Q07", "reviewer_comments", "levers ok", False, REVIEWER_ROLE),
        ("EVAL-Q24", "hallucinations_detected", 0, False, REVIEWER_ROLE),
        ("EVAL-Q24", "total_claims", 0, False, REVIEWER_ROLE),
        ("EVAL-Q24", "narrative_coherence_rating", 1, False, REVIEWER_ROLE),
        ("EVAL-Q07", "narrative_coherence_rating", 4, True, REVIEWER_ROLE)]
    assert sign_offs(admin, run_id) == [(1.5, {"hallucination_rate": "cite the as-of date"})]

    after = queue(env)
    [first, how] = after.out.splitlines()
    assert first.endswith(": 3 questions, 0 to score, signed off") and how == "  the runner completes it"

    # Walking it again: nothing to score; the earlier notes and hours (plus this session) are the defaults.
    again = review(run_id, env=env, input=lines("", "", "", "", "", "", "", "", ""))
    assert again.code == 0, again.err
    assert again.out.startswith(header(run_id, 0) + "\nrevisit a question (its id; Enter to sign off): \n"
                                + "calibration notes per rubric dimension (Enter for none):\n  citation_rate: \n"
                                  "  hallucination_rate [cite the as-of date]: \n")
    assert re.search(r"time spent on this run, hours \[1\.5\d\]: \n", again.out), again.out
    *_, (hours, notes) = made = sign_offs(admin, run_id)
    assert 1.5 <= hours < 1.6 and notes == {"hallucination_rate": "cite the as-of date"}
    # A walk quicker than the hours' last digit signs off the same values: the same sign-off (issue 39).
    assert len(made) == (1 if hours == 1.5 else 2)



def test_an_interrupted_review_loses_nothing_and_resumes_where_it_stopped(env, admin, run_id):
    # EVAL-Q03 whole, then EVAL-Q07 half answered when the input ends (as Ctrl-C or Ctrl-D would).
    stopped = review(run_id, env=env, input=lines("0", "", "yes", "1", "4", "fine", "1", "3"))
    assert stopped.code == 2
    assert stopped.out.endswith("total claims [3]: 3\ndiagnosis accuracy (0, 0.5 or 1): ")
    assert stopped.err == (f"\nstopped: 1 question saved this session, and nothing is lost; `evalledger review "
                           f"{run_id} --as {REVIEWER_ROLE}` resumes at the first question still needing your numbers\n")
    assert scores(admin, run_id) == {"EVAL-Q03": (0, 3, True, 1.0, 4, "fine"), "EVAL-Q07": NOT_SCORED,
                                     "EVAL-Q24": NOT_SCORED}
    [first, waiting, _] = queue(env).out.splitlines()
    assert first.endswith(": 3 questions, 2 to score, not signed off") and waiting == "  waiting: EVAL-Q07, EVAL-Q24"

    # The same command resumes at EVAL-Q07 and asks only the rest; --show-suggestions shows the
    # judges first, and the trail says so.
    resumed = review(run_id, "--show-suggestions", env=env, input=lines(
        "1", "", "0.5", "3", "", "0", "0", "2", "", "", *[""] * 7, ""))
    assert (resumed.code, resumed.err) == (0, "")
    assert resumed.out.startswith(
        header(run_id, 2, blind=False) + "\n" + Q07 + FIRST + Q07_JUDGES
        + "hallucinations detected: 1\ntotal claims [3]: \ndiagnosis accuracy (0, 0.5 or 1): 0.5\n"
          "narrative coherence (1-5): 3\ncomments (optional): \n  saved EVAL-Q07: complete\n" + Q07_REF
        + "\n" + Q24 + FIRST + "  judges: no suggestions on this question\n"
          "hallucinations detected: 0\ntotal claims: 0\nnarrative coherence (1-5): 2\ncomments (optional): \n"
          "  saved EVAL-Q24: complete\n" + Q24_REF
        + "\nrevisit a question (its id; Enter to sign off): \n" + NOTES.format(*[""] * 7))
    assert re.search(r"\ntime spent on this run, hours \[\d+\.\d\d\]: \n"
                     rf"run {run_id}: signed off \(\d+\.\d+ hours\)\n", resumed.out), resumed.out
    assert "EVAL-Q03" not in resumed.out
    assert [(q, f, shown) for q, f, _, shown, _ in trail(admin, run_id)] == [
        ("EVAL-Q03", "hallucinations_detected", False), ("EVAL-Q03", "total_claims", False),
        ("EVAL-Q03", "staleness_correctly_recognized", False), ("EVAL-Q03", "diagnosis_accuracy_score", False),
        ("EVAL-Q03", "narrative_coherence_rating", False), ("EVAL-Q03", "reviewer_comments", False),
        ("EVAL-Q07", "hallucinations_detected", True), ("EVAL-Q07", "total_claims", True),
        ("EVAL-Q07", "diagnosis_accuracy_score", True), ("EVAL-Q07", "narrative_coherence_rating", True),
        ("EVAL-Q24", "hallucinations_detected", True), ("EVAL-Q24", "total_claims", True),
        ("EVAL-Q24", "narrative_coherence_rating", True)]
    [(hours, notes)] = sign_offs(admin, run_id)
    assert 0 < hours < 1 and notes is None


def test_another_reviewers_run_is_refused(env, admin, run_id):
    for args in ([], ["--show-suggestions"]):
        refused = run_cli("review", run_id, "--as", OTHER_REVIEWER_ROLE, *args, env=env, input=lines("0", "3"))
        assert (refused.code, refused.out, refused.err) == (
            3, "", f"evalledger: error: no run {run_id} that you review (as {OTHER_REVIEWER_ROLE})\n")
    assert queue(env, OTHER_REVIEWER_ROLE).out == f"no open run waits for {OTHER_REVIEWER_ROLE}\n"
    assert scores(admin, run_id)["EVAL-Q03"] == NOT_SCORED and trail(admin, run_id) == []
    shown = admin.execute("SELECT count(*) FROM evalledger.brain_eval_suggestion_shown").fetchone()[0]
    assert shown == 0


def test_review_run_from_a_file_is_review_score_from_it(env, admin, run_id, tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text(
        '{"question_id": "EVAL-Q03", "hallucinations_detected": 0, "total_claims": 3, '
        '"staleness_correctly_recognized": true, "diagnosis_accuracy_score": 1, "narrative_coherence_rating": 4}\n'
        '{"question_id": "EVAL-Q07", "hallucinations_detected": 4, "total_claims": 3}\n')
    refused = review(run_id, "--from", str(path), env=env, input="")
    assert refused.code == 3 and refused.err.startswith(f"evalledger: error: {path}:2: EVAL-Q07: "), refused.err
    assert scores(admin, run_id)["EVAL-Q03"] == NOT_SCORED
    path.write_text(path.read_text().replace('"hallucinations_detected": 4', '"hallucinations_detected": 1'))
    done = review(run_id, "--from", str(path), env=env, input="")
    assert (done.code, done.out) == (0, "EVAL-Q03: complete\nEVAL-Q07: incomplete (still needs diagnosis_accuracy_score, narrative_coherence_rating)\n"), done.err
    assert scores(admin, run_id)["EVAL-Q07"] == (1, 3, None, None, None, None)
    [first, waiting, _] = queue(env).out.splitlines()
    assert waiting == "  waiting: EVAL-Q07, EVAL-Q24"


def test_queue_as_json_and_csv(env, admin, run_id):
    found = run_cli("review", "queue", "--as", REVIEWER_ROLE, "--json", env=env)
    assert found.code == 0, found.err
    document = json.loads(found.out)
    schema = json.loads(package_path("suites", "brain_eval", "schemas", "review_queue.v1.schema.json").read_text())
    jsonschema.validate(document, schema, format_checker=jsonschema.FormatChecker())
    [row] = document["rows"]
    assert (row["eval_run_id"], row["question_count"], row["questions_to_score"], row["signed_off"],
            row["questions_waiting"]) == (run_id, 3, 3, False, ["EVAL-Q03", "EVAL-Q07", "EVAL-Q24"])
    csv = run_cli("review", "queue", "--as", REVIEWER_ROLE, "--format", "csv", env=env)
    assert csv.out.splitlines()[0] == ("eval_run_id,brain_under_test,run_trigger,question_catalog_version,started_at,"
                                       "question_count,questions_to_score,signed_off,questions_waiting")
    assert csv.out.splitlines()[1].endswith(',3,3,False,"[""EVAL-Q03"", ""EVAL-Q07"", ""EVAL-Q24""]"'), csv.out
    empty = run_cli("review", "queue", "--as", OTHER_REVIEWER_ROLE, "--json", env=env)
    assert json.loads(empty.out) == {"schema_version": 1, "kind": "review_queue", "rows": []}
    ensure_login_role(admin, UNREGISTERED, "evalledger_reviewer")
    stranger = run_cli("review", "queue", "--as", UNREGISTERED, "--json", env=env)
    assert (stranger.code, stranger.out, stranger.err) == (
        3, "", f"evalledger: error: {UNREGISTERED} is not a registered reviewer (evalledger reviewer add "
               f"{UNREGISTERED} --name ...), so no run waits for it: connect as your own login, or give --as ROLE\n")


def test_review_run_is_told_apart_from_the_review_commands(env, run_id):
    helped = run_cli("review", "--help", env=env)
    assert helped.code == 0 and "Usage: evalledger review [OPTIONS] RUN | COMMAND [ARGS]..." in helped.out
    assert "`evalledger review RUN` walks RUN" in " ".join(helped.out.split())
    walk = run_cli("review", run_id, "--help", env=env)
    assert walk.code == 0 and walk.out.startswith("Usage: evalledger review RUN [OPTIONS]\n\n  Walk RUN question")
    for option in ("--as ROLE", "--show-suggestions", "--from FILE", "--database-url URL"):
        assert option in walk.out
    bad = run_cli("review", "EVAL-Q03", env=env)
    assert (bad.code, bad.err) == (3, "evalledger: error: RUN (or a review command: queue, score, show, finish) "
                                      "'EVAL-Q03' is not a UUID\n")


def test_the_walk_command_has_help_for_every_option():
    import click

    from evalledger.suites.brain_eval.cli import review_walk

    assert review_walk.help and "RUN" in review_walk.help
    for param in review_walk.params:
        if isinstance(param, click.Option):
            assert param.help and param.help.strip(), param.opts


def test_a_completed_run_is_no_longer_walked(env, harness):
    """The whole demo run, scored from the demo's review file through `review RUN --from`, signed
    off and completed: its review is final, and the queue is empty."""

    done = run_cli(*run_args(harness), env=env)
    run_id = done.out.split()[1]
    review_file = package_path("suites", "brain_eval", "fixtures", "harness_demo_review.jsonl")
    scored = review(run_id, "--from", str(review_file), env=env, input="")
    assert scored.code == 0, scored.err
    finished = review(run_id, env=env, input=lines("", *[""] * 7, "2"))
    assert finished.code == 0 and "every question is scored" in finished.out, finished.out + finished.err
    completed = run_cli("brain-eval", "complete", run_id, env=env)
    assert completed.code != 3, completed.err
    final = review(run_id, env=env, input="")
    assert (final.code, final.out, final.err) == (
        3, "", f"evalledger: error: run {run_id} is complete: its review is final\n")
    assert queue(env).out == f"no open run waits for {REVIEWER_ROLE}\n"


def test_a_run_recorded_elsewhere_is_walked_from_its_analyses(env, reviewers, tmp_path):
    """A run `brain-eval record` stored (no catalog): the walk shows each recorded analysis; there
    is no source text to show."""
    from evalledger.suites.brain_eval.demo import fixture_path
    from tests.cli import recorded_demo_file

    path = recorded_demo_file(tmp_path, env)
    recorded = run_cli("brain-eval", "record", str(path), "--reviewer", REVIEWER_ROLE, env=env)
    run_id = re.search(r"recorded run ([0-9a-f-]{36})", recorded.out).group(1)
    first = json.loads(fixture_path().read_text())["questions"][0]
    stopped = review(run_id, env=env, input=lines("s"))
    assert stopped.code == 2, stopped.err
    shown = stopped.out.split("\n\n", 1)[1]
    assert shown.startswith(f"{first['analysis']['question_id']}  {first['score']['question_type']}")
    assert f"  answer: {first['analysis']['output']}\n" in shown
    claims = first["analysis"]["claims"]
    assert f"  claims: {len(claims)} ({sum(1 for c in claims if c.get('numerical'))} numerical)\n" in shown
    assert shown.endswith("hallucinations detected: s\n  no source text is stored for this question (the run was "
                          "recorded elsewhere)\nhallucinations detected: ")
