"""The ledger commands as an operator and a reviewer use them: record, review, complete, show."""

import json
import re

import pytest

from evalledger.suites.brain_eval.demo import fixture_path
from tests.cli import recorded_demo_file, run_cli
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE


@pytest.fixture
def env(dsn):
    return {"DATABASE_URL": dsn}


@pytest.fixture
def fixture_file(tmp_path, env):
    """The demo run's file, its brain version registered first (a run's prompt must be its brain's)."""
    return recorded_demo_file(tmp_path, env)


def test_target_add_and_list(env):
    added = run_cli("target", "add", "AGT-903", "--name", "Renewals brain", env=env)
    assert (added.code, added.out) == (0, "registered AGT-903\n")
    listed = run_cli("target", "list", env=env)
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    assert re.fullmatch(
        "target_id  kind   display_name                                  model_family  created_at\n"
        f"AGT-901    brain  Pipeline brain \\(diagnosis\\)                    anthropic     {stamp}\n"
        f"AGT-902    brain  Action brain \\(diagnosis and proposed levers\\)  anthropic     {stamp}\n"
        f"AGT-903    brain  Renewals brain                                -             {stamp}\n", listed.out), listed.out
    again = run_cli("target", "add", "AGT-903", "--name", "x", env=env)
    assert (again.code, again.err) == (3, "evalledger: error: AGT-903 is already registered with another display_name "
                                          "(display_name 'Renewals brain'): targets are not edited\n")
    same = run_cli("target", "add", "AGT-903", "--name", "Renewals brain", env=env)
    assert (same.code, same.out) == (0, "already registered: AGT-903\n")


def test_reviewer_add_is_idempotent(env, reviewers):
    # A role that exists and is a reviewer already (the fixture's): checked, registered, and again unchanged.
    first = run_cli("reviewer", "add", REVIEWER_ROLE, "--name", "Dana", env=env)
    assert first.code == 0, first.err
    assert first.out == f"role {REVIEWER_ROLE}: exists, member of evalledger_reviewer\n{reviewers[REVIEWER_ROLE]}\n"
    assert run_cli("reviewer", "add", REVIEWER_ROLE, "--name", "Dana", env=env).out == first.out


def review_file(tmp_path, bend=None):
    """The demo run's reviewer numbers as a .jsonl file, optionally bent."""
    rows = [json.loads(line) for line in
            fixture_path().with_name("brain_eval_demo_review.jsonl").read_text().splitlines()]
    if bend:
        bend(rows)
    path = tmp_path / "review.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_review_finish_is_made_once(env, reviewers, fixture_file, tmp_path, admin):
    """Issue 39, item 3: refused before the numbers (naming them); the same command again is
    recognised as done (exit 0, no second row); other values are a correction, recorded."""
    recorded = run_cli("brain-eval", "record", str(fixture_file), "--reviewer", REVIEWER_ROLE, env=env)
    run_id = re.search(r"recorded run ([0-9a-f-]{36})", recorded.out).group(1)
    finish = ("review", "finish", run_id, "--hours", "3.5", "--note", "citation_rate=cite the as-of date",
              "--as", REVIEWER_ROLE)

    early = run_cli(*finish, env=env)
    assert early.code == 3 and early.out == ""
    [line] = early.err.splitlines()
    assert line.startswith(f"evalledger: error: run {run_id} cannot be signed off before its questions are scored: "
                           "EVAL-Q01: hallucinations_detected, total_claims, ")
    assert line.endswith(f"; enter them first (evalledger review {run_id}), then sign off [SQLSTATE 23514]")

    assert run_cli("review", "score", run_id, "--from", str(review_file(tmp_path)), "--as", REVIEWER_ROLE,
                   env=env).code == 0
    first = run_cli(*finish, env=env)
    assert (first.code, first.out) == (0, f"run {run_id}: signed off (3.5 hours, notes on 1 dimension); complete "
                                          f"it with `evalledger brain-eval complete {run_id}`\n"), first.err
    # Run again (the reviewer could not tell whether the first committed), with the note or without
    # (an earlier note is carried): the same sign-off.
    for again in (run_cli(*finish, env=env), run_cli(*finish[:5], "--as", REVIEWER_ROLE, env=env)):
        assert again.code == 0, again.err
        assert re.fullmatch(rf"run {run_id}: already signed off with these values \(3\.5 hours, notes on 1 dimension\) "
                            r"at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: nothing more recorded; complete it with "
                            rf"`evalledger brain-eval complete {run_id}`\n", again.out), again.out
    assert admin.execute("SELECT count(*) FROM brain_eval_run_review WHERE eval_run_id = %s",
                         (run_id,)).fetchone() == (1,)
    corrected = run_cli(*finish[:4], "4", "--as", REVIEWER_ROLE, env=env)
    assert corrected.code == 0, corrected.err
    assert corrected.out == (f"run {run_id}: sign-off corrected (4 hours, notes on 1 dimension; was 3.5 hours): "
                             "completion copies the latest, and the earlier stays in the ledger; complete it with "
                             f"`evalledger brain-eval complete {run_id}`\n")
    assert admin.execute("SELECT reviewer_hours_spent FROM brain_eval_run_review WHERE eval_run_id = %s "
                         "ORDER BY review_id", (run_id,)).fetchall() == [(3.5,), (4,)]
    assert run_cli("brain-eval", "complete", run_id, env=env).code in (0, 1, 2)
    assert admin.execute("SELECT reviewer_hours_spent FROM brain_eval_log WHERE eval_run_id = %s",
                         (run_id,)).fetchone() == (4,)


def test_record_review_complete_show(env, reviewers, fixture_file, tmp_path, admin):
    recorded = run_cli("brain-eval", "record", str(fixture_file), "--reviewer", REVIEWER_ROLE, env=env)
    assert recorded.code == 2, recorded.err
    run_id = re.search(r"recorded run ([0-9a-f-]{36}) \(30 questions\)", recorded.out).group(1)

    early = run_cli("brain-eval", "complete", run_id, env=env)
    assert early.code == 3
    assert early.err.startswith(f"evalledger: error: run {run_id} is not complete: EVAL-Q01: hallucinations_detected, "
                                "total_claims, ")
    assert "the reviewer's sign-off (hours spent: evalledger review finish)" in early.err

    scored = run_cli("review", "score", run_id, "--from", str(review_file(tmp_path)), "--as", REVIEWER_ROLE, env=env)
    assert scored.code == 0, scored.err
    assert scored.out.splitlines()[0] == "EVAL-Q01: complete" and len(scored.out.splitlines()) == 30
    one = run_cli("review", "score", run_id, "EVAL-Q01", "--coherence", "2", "--comment", "muddled",
                  "--as", REVIEWER_ROLE, env=env)
    assert (one.code, one.out) == (0, "EVAL-Q01: complete\n")  # not whether it passes: the run's, once complete
    assert admin.execute("SELECT question_passed FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s "
                         "AND question_id = 'EVAL-Q01'", (run_id,)).fetchone()[0] is False  # coherence 2

    stranger = run_cli("review", "score", run_id, "EVAL-Q01", "--coherence", "5", "--as", OTHER_REVIEWER_ROLE, env=env)
    assert stranger.code == 3
    assert stranger.err == f"evalledger: error: no question EVAL-Q01 in run {run_id} that you review\n"
    not_signed = run_cli("brain-eval", "complete", run_id, env=env)
    assert not_signed.err == (f"evalledger: error: run {run_id} is not complete: the reviewer's sign-off (hours spent: "
                              "evalledger review finish) (constraint brain_eval_log_complete_run_is_whole); the run's "
                              "reviewer enters what is missing (evalledger review), then complete it again "
                              "[SQLSTATE 23514]\n")

    finished = run_cli("review", "finish", run_id, "--hours", "3.5", "--note", "citation_rate=cite the as-of date",
                       "--as", REVIEWER_ROLE, env=env)
    assert finished.code == 0, finished.err
    completed = run_cli("brain-eval", "complete", run_id, env=env)
    assert completed.code == 0, completed.err
    assert "  decision  pass_with_notes\n" in completed.out  # from its answers: 8 of 30 run hot on confidence
    assert admin.execute("SELECT reviewer_hours_spent, calibration_notes FROM brain_eval_log WHERE eval_run_id = %s",
                         (run_id,)).fetchone() == (3.5, {"citation_rate": "cite the as-of date"})
    trail = admin.execute("SELECT field, value, acting_role FROM brain_eval_review_entry WHERE eval_run_id = %s "
                          "AND question_id = 'EVAL-Q01' ORDER BY entry_id", (run_id,)).fetchall()
    assert trail[-2:] == [("narrative_coherence_rating", 2, REVIEWER_ROLE), ("reviewer_comments", "muddled", REVIEWER_ROLE)]

    late = run_cli("review", "score", run_id, "EVAL-Q02", "--coherence", "1", "--as", REVIEWER_ROLE, env=env)
    assert late.code == 3
    assert f"run {run_id} is complete: its question rows are final" in late.err

    shown = run_cli("brain-eval", "show", run_id, env=env)
    assert shown.code == 0 and shown.out == completed.out


@pytest.mark.parametrize("bend, says", [
    (lambda rows: rows[2].update(total_claims="many"), "review.jsonl:3: EVAL-Q03: total_claims: 'many': expected a whole number"),
    (lambda rows: rows[4].update(narrative_coherence_rating=6), "review.jsonl:5: EVAL-Q05: narrative_coherence_rating: "
                                                              "6: a rating is a whole number from 1 (incoherent) to 5"),
    (lambda rows: rows[1].update(colour="red"), "review.jsonl:2: EVAL-Q02: unknown field 'colour'"),
    (lambda rows: rows.append(dict(rows[0])), "review.jsonl:31: EVAL-Q01 is scored twice (first on line 1)"),
    (lambda rows: rows[6].update(hallucinations_detected=50), "review.jsonl:7: EVAL-Q07: new row for relation "),
])
def test_review_from_a_file_is_all_or_nothing(env, reviewers, fixture_file, tmp_path, admin, bend, says):
    run_id = re.search(r"recorded run ([0-9a-f-]{36})", run_cli(
        "brain-eval", "record", str(fixture_file), "--reviewer", REVIEWER_ROLE, env=env).out).group(1)
    path = review_file(tmp_path, bend)
    result = run_cli("review", "score", run_id, "--from", str(path), "--as", REVIEWER_ROLE, env=env)
    assert (result.code, result.out) == (3, "")
    assert result.err.startswith(f"evalledger: error: {tmp_path}/{says}") and result.err.count("\n") == 1
    assert admin.execute("SELECT count(*) FROM brain_eval_review_entry").fetchone()[0] == 0
    assert admin.execute("SELECT count(*) FROM brain_eval_question_score WHERE total_claims IS NOT NULL").fetchone()[0] == 0


def test_record_refuses_a_prompt_tuner_as_reviewer(env, reviewers, fixture_file, admin):
    admin.execute("INSERT INTO prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)", (reviewers[REVIEWER_ROLE],))
    result = run_cli("brain-eval", "record", str(fixture_file), "--reviewer", REVIEWER_ROLE, env=env)
    assert result.code == 3
    assert f"reviewer {reviewers[REVIEWER_ROLE]} is not independent of this run's system prompt" in result.err
    assert admin.execute("SELECT count(*) FROM brain_eval_log").fetchone()[0] == 0


def test_a_bad_question_leaves_nothing_written(env, reviewers, fixture_file, admin):
    data = json.loads(fixture_file.read_text())
    data["questions"][17]["score"]["citation_rate"] = 2
    fixture_file.write_text(json.dumps(data))
    result = run_cli("brain-eval", "record", str(fixture_file), "--reviewer", REVIEWER_ROLE, env=env)
    assert result.code == 3
    assert "brain_eval_question_score_automatic_scores_computed" in result.err
    assert result.err.count("\n") == 1
    for table in ("brain_eval_log", "brain_eval_question_score", "brain_analysis_log"):
        assert admin.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_record_names_a_broken_file_and_line(env, reviewers, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"run": {},\n "questions": [,]}')
    result = run_cli("brain-eval", "record", str(broken), "--reviewer", REVIEWER_ROLE, env=env)
    assert (result.code, result.err) == (3, f"evalledger: error: {broken}:2: column 16: not JSON: Expecting value\n")


def test_record_needs_a_registered_reviewer(env, fixture_file):
    result = run_cli("brain-eval", "record", str(fixture_file), "--reviewer", "nobody", env=env)
    assert result.code == 3
    assert result.err == ("evalledger: error: --reviewer 'nobody' is not a registered reviewer "
                          "(evalledger reviewer add)\n")
