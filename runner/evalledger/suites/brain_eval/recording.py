"""`brain-eval record FILE`: a recorded run checked field by field, then written once.

Every refusal names the file, the line, the JSON path and the question id, like `corpus load`
and `catalog load`: unknown fields and fields the database computes are refused, and so is a
score whose question_id is not its analysis'. A file recorded again is the run recorded before:
the run id, when the file gives none, is derived from the file's bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

import psycopg

from evalledger.core.db import explain, set_local_role
from evalledger.core import reader
from evalledger.core.errors import EvalledgerError

from . import store
from .catalog import json_lines, json_path

# Run ids of recorded files: uuid5 of this namespace and the file's SHA-256.
RECORDING_NAMESPACE = uuid.UUID("0b8e3c1e-6a51-4f0e-9a57-2f1c9d6e4b21")

NUMBER, INTEGER, BOOLEAN, TEXT, OBJECT, LIST = "a number", "an integer", "true or false", "text", "an object", "a list"
RUN_FIELDS = {
    "eval_run_id": TEXT, "run_trigger": TEXT, "brain_under_test": TEXT, "model_id": TEXT, "system_prompt_hash": TEXT,
    "system_prompt_version_label": TEXT, "brain_view_contracts_hash": TEXT, "question_catalog_version": TEXT,
    "started_at": TEXT, "rubric_id": INTEGER,
}
RUN_REQUIRED = ("run_trigger", "brain_under_test", "model_id", "system_prompt_hash", "brain_view_contracts_hash",
                "question_catalog_version")
ANALYSIS_FIELDS = {
    "origin": TEXT, "question_id": TEXT, "question": TEXT, "output": TEXT, "sources_read": LIST, "claims": LIST,
    "proposed_actions": LIST, "input_tokens": INTEGER, "output_tokens": INTEGER, "token_cost_usd": NUMBER,
    "produced_at": TEXT,
}
SCORE_FIELDS = {
    "question_id": TEXT, "question_type": TEXT, "uses_stale_fixture": BOOLEAN, "citation_rate": NUMBER,
    "lever_mapping_violations": INTEGER, "confidence_distribution": OBJECT,
}
# The automatic scores may be left out: the database computes them from the analysis (its claims, the
# sources the run's catalog gives the question, its proposed actions) and refuses a given one that differs.
SCORE_REQUIRED = ("question_id", "question_type", "uses_stale_fixture")
# What the run's reviewer enters, never the runner: refused with where it goes instead.
REVIEWER = {
    "run": ("calibration_notes", "reviewer_hours_spent"),
    "score": ("hallucinations_detected", "total_claims", "staleness_correctly_recognized", "diagnosis_accuracy_score",
              "narrative_coherence_rating", "reviewer_comments"),
    "analysis": (),
}
# What the database computes: supplying any of it is refused, never silently dropped.
COMPUTED = {
    "run": ("question_count", "reviewer_user_id", "completed_at", "reviewer_independence_verified",
            "aggregated_scores", "hard_criteria_passed", "soft_criteria_passed_count", "decision",
            "decision_rationale", "token_cost_usd", "created_at"),
    "score": ("question_passed", "eval_run_id", "brain_analysis_id", "question_score_id", "created_at"),
    "analysis": ("analysis_id", "brain", "model_id", "system_prompt_hash", "created_at"),
}


def _kind_ok(value, kind: str) -> bool:
    if value is None:
        return True
    if kind == NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == BOOLEAN:
        return isinstance(value, bool)
    if kind == TEXT:
        return isinstance(value, str)
    return isinstance(value, dict if kind == OBJECT else list)


class Recording:
    """A checked file: its document, the run id it records, and where each question starts."""

    def __init__(self, path: Path, text: str, document: dict):
        self.path, self.document = path, document
        self.lines = json_lines(text)
        given = document["run"].get("eval_run_id")
        self.run_id = uuid.UUID(given) if given else uuid.uuid5(
            RECORDING_NAMESPACE, hashlib.sha256(text.encode("utf-8")).hexdigest())

    def where(self, *path) -> str:
        """FILE:LINE: $.json.path for the nearest value the path reaches."""
        found = tuple(path)
        while found not in self.lines:
            found = found[:-1]
        return f"{self.path}:{self.lines[found]}: {json_path(path)}"


def check(path: Path) -> Recording:
    """The file's run, or an EvalledgerError naming the first problem's line, field and question."""
    text = reader.read_text(path)
    document = reader.decode_json(text, str(path))  # the door: a key twice, NaN, a NUL... by line
    lines = json_lines(text)

    def fail(where: tuple, message: str, question: str | None = None):
        found = where
        while found not in lines:
            found = found[:-1]
        about = f" ({question})" if question else ""
        raise EvalledgerError(f"{path}:{lines[found]}: {json_path(where)}{about}: {message}")

    if not isinstance(document, dict):
        fail((), "expected an object with run and questions")
    for key in document:
        if key not in ("about", "run", "questions"):
            fail((key,), "unknown field")
    for key, kind in (("run", OBJECT), ("questions", LIST)):
        if key not in document:
            fail((), f"missing field {key}")
        if not _kind_ok(document[key], kind) or document[key] is None:
            fail((key,), f"expected {kind}")

    def fields(section: str, values: dict, allowed: dict, required, at: tuple, question: str | None):
        for name, value in values.items():
            if name in COMPUTED[section]:
                fail((*at, name), "computed by the database: remove it", question)
            if name in REVIEWER[section]:
                fail((*at, name), "the reviewer's to enter, not recorded with the run: remove it "
                                  "(the reviewer enters it with evalledger review)", question)
            if name not in allowed:
                fail((*at, name), "unknown field", question)
            if not _kind_ok(value, allowed[name]):
                fail((*at, name), f"expected {allowed[name]}, got {json.dumps(value)}", question)
        for name in required:
            if values.get(name) is None:
                fail(at, f"missing field {name}", question)

    run = document["run"]
    fields("run", run, RUN_FIELDS, RUN_REQUIRED, ("run",), None)
    if run.get("eval_run_id"):
        try:
            uuid.UUID(run["eval_run_id"])
        except ValueError:
            fail(("run", "eval_run_id"), f"not a UUID: {json.dumps(run['eval_run_id'])}")
    if not document["questions"]:
        fail(("questions",), "no questions")
    seen: dict[str, int] = {}
    for index, item in enumerate(document["questions"]):
        at = ("questions", index)
        if not isinstance(item, dict):
            fail(at, "expected an object with analysis and score")
        for key in item:
            if key not in ("analysis", "score"):
                fail((*at, key), "unknown field")
        for key in ("analysis", "score"):
            if not isinstance(item.get(key), dict):
                fail((*at, key) if key in item else at, f"expected {key} as an object")
        question = item["score"].get("question_id") if isinstance(item["score"].get("question_id"), str) else None
        fields("score", item["score"], SCORE_FIELDS, SCORE_REQUIRED, (*at, "score"), question)
        fields("analysis", item["analysis"], ANALYSIS_FIELDS, (), (*at, "analysis"), question)
        analysed = item["analysis"].get("question_id")
        if analysed is not None and analysed != question:
            fail((*at, "analysis", "question_id"), f"{json.dumps(analysed)} is not the score's question_id "
                                                   f"{json.dumps(question)}", question)
        if question in seen:
            fail((*at, "score", "question_id"), f"{question} is scored twice (first at $.questions[{seen[question]}])",
                 question)
        seen[question] = index
    return Recording(path, text, document)


def record(conn: psycopg.Connection, recording: Recording, reviewer_user_id: uuid.UUID,
           import_reason: str | None = None) -> tuple[store.Decision, bool]:
    """Write the run once (analyses, run, question rows) for its reviewer; (decision, new). With
    import_reason, through an audited import made in this transaction (as the owner role)."""
    run_id = recording.run_id
    if conn.execute(store.QUERIES["run_exists"], {"eval_run_id": run_id}).fetchone():
        return store.read_decision(conn, run_id), False
    run = {**recording.document["run"], "eval_run_id": run_id}
    if import_reason is not None:
        set_local_role(conn, "evalledger_owner")
        try:
            run["import_id"] = store.record_import(conn, import_reason, recording.path.name)
        except psycopg.Error as exc:
            raise EvalledgerError(f"--historical: {explain(exc)}") from None
        set_local_role(conn, "evalledger_runner")
    questions = recording.document["questions"]
    try:
        store.start_run(conn, **run, question_count=len(questions), reviewer_user_id=reviewer_user_id)
    except psycopg.Error as exc:
        raise EvalledgerError(f"{recording.where('run')}: {explain(exc)}") from None
    for index, item in enumerate(questions):
        question = item["score"]["question_id"]
        try:
            with conn.transaction():
                analysis_id = store.record_analysis(
                    conn, brain=run["brain_under_test"], model_id=run["model_id"],
                    system_prompt_hash=run["system_prompt_hash"], **{"question_id": question, **item["analysis"]})
                store.add_question_score(conn, eval_run_id=run_id, brain_analysis_id=analysis_id, **item["score"])
        except psycopg.Error as exc:
            raise EvalledgerError(_question_refusal(recording, index, question, exc)) from None
    return store.read_decision(conn, run_id), True


# What the database says of an answer whose claims it cannot score (brain_eval_claims_problem_v1):
# the claim by its JSON path in the answer, and the field that is wrong.
_UNSCORABLE = re.compile(r"cannot be scored: (claims\[(\d+)\](?:\.(\w+))?.*)$")


def _question_refusal(recording: Recording, index: int, question: str, exc: psycopg.Error) -> str:
    """The database's refusal of a question, at the line of what it refused: the claim and field of
    an answer it cannot score, else the question's."""
    unscorable = _UNSCORABLE.search(exc.diag.message_primary or "")
    if unscorable is None:
        return f"{recording.where('questions', index)} ({question}): {explain(exc)}"
    problem, claim, field = unscorable.groups()
    path = ("questions", index, "analysis", "claims", int(claim), *([field] if field else []))
    return f"{recording.where(*path)} ({question}): the answer cannot be scored: {problem}"
