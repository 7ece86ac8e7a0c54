"""Issue 36, item 3: each brain-eval run's uncertainty is stored once, when the run completes
(brain_eval_run_uncertainty, migration 0148), computed by the database from the run's stored question
rows and rubric: what the trend's error bars and a run's page read (brain_eval_intervals_v1) instead of
running the statistics functions for every run at every read. The stored object is exactly what the
statistics functions give; no role supplies or alters it (the superuser's UPDATE and DELETE are refused
too); the recompute (ledger_recompute_v3, and `ledger verify --recompute` with the package's code)
re-derives it and names a rewritten one. `brain-eval show --json` shows the stored object, never the
functions asked again (one home: what was decided at completion is what is shown). Tried as the real
logins (docs/guards.md, "Verdicts with their uncertainty")."""

from __future__ import annotations

import json

import pytest
from psycopg import errors

from evalledger.suites.brain_eval import store as brain_eval
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.cli import run_cli
from tests.db.insider_logins import LOGINS, logins, refused  # noqa: F401 (fixture)
from tests.db.test_trend_error_bars_are_each_runs_uncertainty import varied
from tests.ledger_forge import kinds, triggers_lifted, verified

pytestmark = pytest.mark.db


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def stored(admin, run) -> dict | None:
    found = admin.execute("SELECT uncertainty FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s",
                          (run,)).fetchone()
    return found[0] if found else None


def computed(admin, run) -> dict:
    return admin.execute("SELECT coalesce(evalledger.brain_eval_uncertainty_v1(%s), '{}'::jsonb)", (run,)).fetchone()[0]


def test_a_run_stores_at_its_completion_exactly_what_the_statistics_functions_give(admin, connect_as, logins,
                                                                                  reviewer_id):
    runner = connect_as("evalledger_runner")
    runs = [record_run(runner, reviewer_id, brain=brain, bend=varied(k)).eval_run_id
            for k, brain in ((1, "AGT-901"), (2, "AGT-902"), (3, "AGT-902"))]
    open_run = record_run(runner, reviewer_id, brain="AGT-901", bend=varied(4), complete=False)
    assert stored(admin, open_run) is None  # nothing before completion
    with runner.transaction():  # stored in the completion's own transaction
        brain_eval.complete_run(runner, open_run)
        assert runner.execute("SELECT count(*) FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s",
                              (open_run,)).fetchone()[0] == 1
    # A run cancelled before its review stores what the function gives it too (the reviewer's scores unmeasured).
    cancelled = record_run(runner, reviewer_id, brain="AGT-901", count=2, complete=False, review=False)
    brain_eval.cancel_run(runner, cancelled, "operator error")
    for run in [*runs, open_run, cancelled]:
        assert stored(admin, run) == computed(admin, run), run
    whole = stored(admin, runs[1])
    assert set(whole) == {"citation_rate", "hallucination_rate", "staleness_recognition_rate", "diagnosis_accuracy_mean",
                          "lever_mapping_correctness", "confidence_calibration_in_band", "narrative_coherence_mean"}
    # Held to the statistics functions themselves, from the question rows: the citation rate's clustered
    # standard error by question type, the hallucination rate's ratio estimator clustered by question.
    citation, hallucination = admin.execute("""
        SELECT (evalledger.clustered_stderr_v1(array_agg(s.citation_rate::float8 ORDER BY s.question_id),
                                               array_agg(s.question_type::text ORDER BY s.question_id))).stderr,
               (evalledger.ratio_stderr_v1(array_agg(s.hallucinations_detected::float8 ORDER BY s.question_id),
                                           array_agg(s.total_claims::float8 ORDER BY s.question_id),
                                           array_agg(s.question_id::text ORDER BY s.question_id))).stderr
          FROM evalledger.brain_eval_question_score s WHERE s.eval_run_id = %s""", (runs[1],)).fetchone()
    assert whole["citation_rate"]["stderr"] == pytest.approx(citation, rel=1e-12)
    assert whole["hallucination_rate"]["stderr"] == pytest.approx(hallucination, rel=1e-12)
    assert whole["hallucination_rate"]["method"] == "ratio" and whole["hallucination_rate"]["criterion"]["op"] == "<="
    # The view reads the stored object, aggregate by aggregate, for each reader as before.
    for reader in ("auditor", "revops", "reviewer"):
        rows = logins(reader).execute("SELECT aggregate, estimate, stderr, ci95_lo, ci95_hi, n, clusters, method "
                                      "FROM evalledger.brain_eval_intervals_v1 WHERE eval_run_id = %s",
                                      (runs[1],)).fetchall()
        assert {r[0]: r[1:] for r in rows} == {
            key: (u["estimate"], u["stderr"], u["ci95"][0], u["ci95"][1], u["n"], u["clusters"], u["method"])
            for key, u in whole.items() if u is not None}, reader


@pytest.mark.parametrize("role", ["runner", "reviewer", "revops", "auditor", "owner", "agent", "retention"])
def test_no_role_supplies_or_alters_a_runs_uncertainty(admin, connect_as, logins, reviewer_id, role):
    run = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied(1)).eval_run_id
    other = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied(2), complete=False)
    conn = logins(role)
    made_up = json.dumps({"citation_rate": {"estimate": 1, "stderr": 0, "ci95": [1, 1]}})
    for statement, params in (
            ("INSERT INTO evalledger.brain_eval_run_uncertainty (eval_run_id, uncertainty, reviewer_user_id, "
             "run_created_at) VALUES (%s, %s, %s, now())", (other, made_up, reviewer_id)),
            ("UPDATE evalledger.brain_eval_run_uncertainty SET uncertainty = %s WHERE eval_run_id = %s", (made_up, run)),
            ("DELETE FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s", (run,))):
        with refused(admin, errors.InsufficientPrivilege,
                     r"permission denied for (table brain_eval_run_uncertainty|schema evalledger)"):
            conn.execute(statement, params)
    assert stored(admin, run) == computed(admin, run)


def test_the_superuser_neither_rewrites_nor_deletes_it(admin, connect_as, reviewer_id):
    run = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied(1)).eval_run_id
    for statement, says in (
            ("UPDATE evalledger.brain_eval_run_uncertainty SET uncertainty = '{}' WHERE eval_run_id = %s",
             r"evalledger: brain_eval_run_uncertainty is append-only: UPDATE refused"),
            ("DELETE FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s",
             r"evalledger: brain_eval_run_uncertainty is append-only: DELETE refused")):
        with refused(admin, errors.InsufficientPrivilege, says):
            admin.execute(statement, (run,))
    # A second one for the run: its key is the run.
    with refused(admin, errors.UniqueViolation, r'duplicate key value violates unique constraint .*',
                 "brain_eval_run_uncertainty_pkey"):
        admin.execute("INSERT INTO evalledger.brain_eval_run_uncertainty (eval_run_id, uncertainty, reviewer_user_id, "
                      "run_created_at) VALUES (%s, '{}', %s, now())", (run, reviewer_id))
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = 'brain_eval_run_uncertainty' "
                         "AND strpos(row_key, %s) > 0", (str(run),)).fetchone()[0] == 1


def test_the_recompute_rederives_it_and_names_a_rewritten_one(admin, dsn, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    run = record_run(runner, reviewer_id, bend=varied(1)).eval_run_id
    record_run(runner, reviewer_id, brain="AGT-902", bend=varied(2))
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0
    # The superuser rewrites the stored interval past the guards (the journal lifted too): narrower bars.
    with admin.transaction(), triggers_lifted(admin, "brain_eval_run_uncertainty"):
        admin.execute("UPDATE evalledger.brain_eval_run_uncertainty SET uncertainty = jsonb_set(uncertainty, "
                      "'{citation_rate,ci95}', '[0.8, 0.81]') WHERE eval_run_id = %s", (run,))
    key = json.dumps({"eval_run_id": str(run)}, separators=(",", ":"))
    assert admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        ("brain_eval_run_uncertainty", key, "uncertainty")]
    report = verified(dsn, recompute=True)  # the package's code, not the database's
    assert ("recomputed", "brain_eval_run_uncertainty", key, ("uncertainty",)) in kinds(report)


def test_show_json_reads_the_stored_uncertainty_and_an_open_run_shows_none(admin, dsn, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    run = record_run(runner, reviewer_id, bend=varied(1)).eval_run_id
    open_run = record_run(runner, reviewer_id, brain="AGT-902", bend=varied(2), complete=False)
    env = {"DATABASE_URL": dsn}

    def shown(run_id) -> dict:
        return json.loads(run_cli("brain-eval", "show", str(run_id), "--json", env=env).out)["uncertainty"]

    # Exactly the stored row, to the last bit.
    assert json.dumps(shown(run), sort_keys=True) == json.dumps(stored(admin, run), sort_keys=True)
    # And it is the stored row that is read, not the functions asked again: a stored row the superuser
    # rewrote past the guards (restored after) is what show prints, where the functions would say otherwise.
    original = json.dumps(stored(admin, run))
    rewrite = ("UPDATE evalledger.brain_eval_run_uncertainty SET uncertainty = %s::jsonb WHERE eval_run_id = %s")
    marked = dict(stored(admin, run), citation_rate=dict(stored(admin, run)["citation_rate"], stderr=0.125))
    with admin.transaction(), triggers_lifted(admin, "brain_eval_run_uncertainty"):
        admin.execute(rewrite, (json.dumps(marked), run))
    try:
        assert shown(run)["citation_rate"]["stderr"] == 0.125
        assert computed(admin, run)["citation_rate"]["stderr"] != 0.125
    finally:
        with admin.transaction(), triggers_lifted(admin, "brain_eval_run_uncertainty"):
            admin.execute(rewrite, (original, run))
    assert json.dumps(stored(admin, run)) == original
    # An open run has no decision, and no uncertainty beside it.
    assert shown(open_run) is None
