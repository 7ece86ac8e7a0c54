"""The brain-eval suite (seed 002): record analyses, runs and question scores; read back the decision."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb

from evalledger.core import reader
from evalledger.core.db import set_local_role
from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

QUERIES = Queries(__package__)

ANALYSIS_DEFAULTS = {
    "origin": "eval", "question_id": None, "sources_read": [], "claims": [], "proposed_actions": None,
    "input_tokens": 0, "output_tokens": 0, "produced_at": None, "cached_input_tokens": 0, "cache_write_tokens": 0,
    "price_input": None, "price_cached_input": None, "price_cache_write": None,
    "price_output": None, "price_as_of": None,
}
RUN_DEFAULTS = {
    "eval_run_id": None, "system_prompt_version_label": None, "started_at": None,
    "calibration_notes": None, "reviewer_hours_spent": None, "rubric_id": None, "import_id": None,
}
# The automatic scores are the database's (computed from the analysis): a recorded file may leave
# them out, and one that gives them must give what the analysis gives.
QUESTION_DEFAULTS = {
    "citation_rate": None, "confidence_distribution": None,
    "hallucinations_detected": None, "total_claims": None,
    "staleness_correctly_recognized": None, "diagnosis_accuracy_score": None,
    "lever_mapping_violations": None, "narrative_coherence_rating": None, "reviewer_comments": None,
}
_JSON_FIELDS = {"sources_read", "claims", "proposed_actions", "calibration_notes", "confidence_distribution"}


@dataclass(frozen=True)
class Decision:
    """What the database decided for a completed run."""

    eval_run_id: UUID
    brain_under_test: str
    question_count: int
    completed_at: Any
    aggregated_scores: dict | None
    hard_criteria_passed: bool | None
    soft_criteria_passed_count: int | None
    decision: str | None
    decision_rationale: str | None
    token_cost_usd: Decimal | None
    reviewer_independence_verified: bool
    # Beside the decision, never changing it: each aggregate's standard error and 95% interval
    # (brain_eval_uncertainty_v1, as the run's completion stored it), read by `show`; None where not read.
    uncertainty: dict | None = None


def _params(defaults: dict, values: dict) -> dict:
    params = {**defaults, **values}
    return {k: Jsonb(v) if k in _JSON_FIELDS and v is not None else v for k, v in params.items()}


def record_analysis(conn: psycopg.Connection, **values) -> UUID:
    """Insert one brain_analysis_log row; return its analysis_id."""
    from evalledger.judges import money

    params = _params(ANALYSIS_DEFAULTS, values)
    return conn.execute(QUERIES[money.billed_query("insert_analysis", params)], params).fetchone()[0]


def start_run(conn: psycopg.Connection, **values) -> UUID:
    """Insert a run in progress; return its eval_run_id."""
    return conn.execute(QUERIES["insert_run"], _params(RUN_DEFAULTS, values)).fetchone()[0]


def add_question_score(conn: psycopg.Connection, **values) -> tuple[UUID, bool]:
    """Insert one question row; return its id and the question_passed the database computed."""
    return tuple(conn.execute(QUERIES["insert_question_score"], _params(QUESTION_DEFAULTS, values)).fetchone())


def complete_run(conn: psycopg.Connection, eval_run_id: UUID, uncertainty: bool = False) -> Decision:
    """Complete the run (at the database's clock); return the decision the database computed (with
    each aggregate's uncertainty, when asked)."""
    done = conn.execute(QUERIES["complete_run"], {"eval_run_id": eval_run_id})
    if not done.fetchone()[0]:
        raise EvalledgerError(f"run {eval_run_id} is not an open run this role can complete")
    return read_decision(conn, eval_run_id, uncertainty)


def cancel_run(conn: psycopg.Connection, eval_run_id: UUID, reason: str) -> Decision:
    """Cancel an open run with a reason; return the decision the database recorded for it."""
    done = conn.execute(QUERIES["cancel_run"], {"eval_run_id": eval_run_id, "reason": reason})
    if not done.fetchone()[0]:
        raise EvalledgerError(f"run {eval_run_id} is not an open run this role can cancel")
    return read_decision(conn, eval_run_id)


def open_run_of(conn: psycopg.Connection, brain: str, prompt: str, catalog: str, other_than: UUID) -> UUID | None:
    """The open run of this brain, prompt and catalog other than other_than (one is open at a time), or None."""
    found = conn.execute(QUERIES["open_run_of"], {"brain": brain, "prompt": prompt, "catalog": catalog,
                                                  "eval_run_id": other_than}).fetchone()
    return found[0] if found else None


def read_decision(conn: psycopg.Connection, eval_run_id: UUID, uncertainty: bool = False) -> Decision:
    """The run's row as the database computed it (with each aggregate's uncertainty, when asked)."""
    query = QUERIES["run_decision_uncertainty" if uncertainty else "run_decision"]
    with conn.cursor(row_factory=class_row(Decision)) as cur:
        found = cur.execute(query, {"eval_run_id": eval_run_id}).fetchone()
    if found is None:
        raise EvalledgerError(f"no run {eval_run_id}")
    return found


def add_reviewer(conn: psycopg.Connection, role_name: str, display_name: str, reviewer_user_id=None) -> UUID:
    """Register (or find) the reviewer acting as role_name."""
    return conn.execute(QUERIES["add_reviewer"], {
        "role_name": role_name, "display_name": display_name, "reviewer_user_id": reviewer_user_id,
    }).fetchone()[0]


def reviewer_id(conn: psycopg.Connection, role_name: str) -> UUID | None:
    """The reviewer_user_id of a registered reviewer role, or None."""
    found = conn.execute(QUERIES["reviewer_id"], {"role_name": role_name}).fetchone()
    return found[0] if found else None


def add_prompt_tuner(conn: psycopg.Connection, target_id: str, user_id: UUID) -> None:
    """Register user_id as a prompt tuner of target_id."""
    conn.execute(QUERIES["add_prompt_tuner"], {"target_id": target_id, "user_id": user_id})


def score_question(conn: psycopg.Connection, eval_run_id: UUID, question_id: str, changes: dict,
                   as_role: str | None = None) -> list[str]:
    """Set reviewer-scored fields of one question (as as_role when given); the fields it still
    needs for its criteria (empty when whole). Never whether it passes: a reviewer reads no
    verdict before its run completes. An EvalledgerError when no such question is visible to this
    reviewer (row-level security hides the others)."""
    setting = sql.SQL(", ").join(sql.SQL("{} = {}").format(sql.Identifier(k), sql.Placeholder(k)) for k in changes)
    if as_role:
        set_local_role(conn, as_role)
    row = conn.execute(sql.SQL(QUERIES["score_question"]).format(setting),
                       {**changes, "run": eval_run_id, "question": question_id}).fetchone()
    if row is None:
        raise EvalledgerError(f"no question {question_id} in run {eval_run_id} that you review")
    return row[0]


def record_import(conn: psycopg.Connection, reason: str, source_file: str | None = None) -> int:
    """An audited import of historical runs (as the owner role): runs recorded in this same
    transaction may name it and start more than a day before they are recorded."""
    return conn.execute(QUERIES["insert_import"], {"reason": reason, "source_file": source_file}).fetchone()[0]


def sign_off_run(conn: psycopg.Connection, eval_run_id: UUID, reviewer_hours_spent, calibration_notes=None,
                 as_role: str | None = None) -> int | None:
    """The reviewer's sign-off of a run (as as_role when given): hours spent and calibration notes.
    Its review_id, or None when the run's latest sign-off says the same already (the database
    stores no second one: brain_eval_run_review_admit_v1)."""
    if as_role:
        set_local_role(conn, as_role)
    row = conn.execute(QUERIES["sign_off_run"], {
        "eval_run_id": eval_run_id, "reviewer_hours_spent": reviewer_hours_spent,
        "calibration_notes": Jsonb(calibration_notes) if calibration_notes is not None else None,
    }).fetchone()
    return row[0] if row else None


def review_queue(conn: psycopg.Connection) -> list[dict]:
    """The open runs waiting for the current reviewer, oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["review_queue"]).fetchall()


def review_questions(conn: psycopg.Connection, eval_run_id: UUID) -> list[dict]:
    """The question rows of a run the current reviewer reviews, in order, with what each still needs."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["review_questions"], {"eval_run_id": eval_run_id}).fetchall()


def question_sources(conn: psycopg.Connection, eval_run_id: UUID, question_id: str) -> list[dict]:
    """The fixture sources a harness question gave the brain ([] for a run recorded elsewhere)."""
    found = conn.execute(QUERIES["question_sources"], {"eval_run_id": eval_run_id, "question_id": question_id}).fetchone()
    return found[0] if found else []


def show_suggestions(conn: psycopg.Connection, eval_run_id: UUID, question_id: str):
    """Record that the current reviewer asks to see the judges' suggestions on a question (blind
    review); when they were first shown. Only the run's reviewer may. The suggestions become
    readable once this transaction commits, to later transactions only."""
    return conn.execute(QUERIES["show_suggestions"], {"eval_run_id": eval_run_id, "question_id": question_id}).fetchone()[0]


def reviewer_role_of(conn: psycopg.Connection, reviewer_user_id: UUID) -> str | None:
    """The login role a registered reviewer acts as, or None."""
    found = conn.execute(QUERIES["reviewer_role_of"], {"reviewer_user_id": reviewer_user_id}).fetchone()
    return found[0] if found else None


def load_fixture(path: Path) -> dict:
    """A recorded run: {run: {...}, questions: [{analysis: {...}, score: {...}}, ...]}."""
    data = reader.read_json(path).value
    if not isinstance(data, dict):
        raise EvalledgerError(f"{path}: expected a JSON object with 'run' and 'questions'")
    for key in ("run", "questions"):
        if key not in data:
            raise EvalledgerError(f"{path}: missing top-level field {key!r}")
    return data


def record_fixture_run(conn: psycopg.Connection, fixture: dict, reviewer_user_id: UUID,
                       complete: bool = True) -> Decision:
    """Record a whole run from a fixture (analyses, run, question rows), then complete it."""
    run = fixture["run"]
    questions = fixture["questions"]
    run_id = start_run(conn, **run, question_count=len(questions), reviewer_user_id=reviewer_user_id)
    for question in questions:
        analysis_id = record_analysis(conn, brain=run["brain_under_test"], model_id=run["model_id"],
                                      system_prompt_hash=run["system_prompt_hash"], **question["analysis"])
        add_question_score(conn, eval_run_id=run_id, brain_analysis_id=analysis_id, **question["score"])
    return complete_run(conn, run_id) if complete else read_decision(conn, run_id)


# A role name a person types and psql accepts unquoted or quoted alike: letters, digits and
# _ . @ -, starting with a letter or _, at most 63 bytes (PostgreSQL's NAMEDATALEN - 1).
_ROLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.@-]{0,62}")
_APPLICATION_ROLES = {"evalledger_owner", "evalledger_runner", "evalledger_reviewer", "evalledger_revops",
                      "evalledger_auditor", "evalledger_agent"}


def check_role_name(role: str) -> str:
    """role, or an EvalledgerError saying what a reviewer's role name may be."""
    if not _ROLE_NAME.fullmatch(role) or len(role.encode("utf-8")) > 63:
        raise EvalledgerError(f"role name {role!r}: use 1-63 letters, digits, '_', '.', '@' or '-', "
                              "starting with a letter or '_'")
    if role.startswith("pg_") or role in _APPLICATION_ROLES:
        raise EvalledgerError(f"role name {role!r} is reserved: a reviewer needs a login role of their own")
    return role


@dataclass(frozen=True)
class RoleState:
    """What the server knows of a role."""

    role_exists: bool
    can_login: bool
    is_reviewer: bool


def role_state(conn: psycopg.Connection, role: str) -> RoleState:
    """Whether role exists, may log in, and is in evalledger_reviewer."""
    with conn.cursor(row_factory=class_row(RoleState)) as cur:
        return cur.execute(QUERIES["role_state"], {"role": role}).fetchone()


def create_reviewer_role(conn: psycopg.Connection, role: str, password: str) -> None:
    """CREATE ROLE role LOGIN PASSWORD ... IN ROLE evalledger_reviewer (needs CREATEROLE)."""
    conn.execute(sql.SQL(QUERIES["create_reviewer_role"]).format(role=sql.Identifier(role),
                                                                 password=sql.Literal(password)))


def ensure_reviewer_role(conn: psycopg.Connection, role: str, new_password) -> tuple[RoleState, str]:
    """role as a reviewer's login role: created (LOGIN, in evalledger_reviewer, with new_password(),
    asked only then) when missing, granted evalledger_reviewer when it lacks it. The role's state
    before, and what was done: 'created', 'granted' or 'exists'. Needs CREATEROLE (or the right to
    grant the reviewer role); an EvalledgerError says what to ask an administrator for otherwise."""
    state = role_state(conn, role)
    if not state.role_exists:
        try:
            create_reviewer_role(conn, role, new_password())
        except psycopg.errors.InsufficientPrivilege:
            raise EvalledgerError(
                f"role {role} does not exist and the connecting user may not create roles: connect as a user with "
                f"CREATEROLE (the one that migrated), or have an administrator run CREATE ROLE {role} LOGIN IN "
                f"ROLE evalledger_reviewer") from None
        return state, "created"
    if not state.is_reviewer:
        try:
            grant_reviewer_role(conn, role)
        except psycopg.errors.InsufficientPrivilege:
            raise EvalledgerError(
                f"role {role} exists but is not in evalledger_reviewer, and the connecting user may not grant it: "
                f"have an administrator run GRANT evalledger_reviewer TO {role}") from None
        return state, "granted"
    return state, "exists"


def set_role_password(conn: psycopg.Connection, role: str, password: str) -> None:
    """ALTER ROLE role LOGIN PASSWORD ... (needs CREATEROLE)."""
    conn.execute(sql.SQL(QUERIES["set_role_password"]).format(role=sql.Identifier(role),
                                                              password=sql.Literal(password)))


def grant_reviewer_role(conn: psycopg.Connection, role: str) -> None:
    """GRANT evalledger_reviewer TO role (needs the right to grant it)."""
    conn.execute(sql.SQL(QUERIES["grant_reviewer_role"]).format(role=sql.Identifier(role)))


def add_prompt_tuner_once(conn: psycopg.Connection, target_id: str, user_id: UUID) -> bool:
    """Register user_id as a prompt tuner of target_id; whether it is new."""
    return conn.execute(QUERIES["add_prompt_tuner_once"], {"target_id": target_id, "user_id": user_id}).fetchone() \
        is not None
