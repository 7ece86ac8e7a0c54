"""The drill-down from a decision to its evidence, as the reader's row-level security shows it: a run
(what was tested, the rubric's criteria against the run's exact values, the sign-off, the judges'
agreement), a question of it (the answer with its claims and the sources given, each judge's draft,
the reviewer's values with the trail of who entered each, when, and whether the drafts had been
shown), a question over time, a catalog question and the production traffic it was drafted from,
a takes-quality run and a work-quality snapshot. A record the reader
may not see reads as one that does not exist."""

from __future__ import annotations

from uuid import UUID

import psycopg

from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries
from evalledger.suites.brain_eval import agreement
from evalledger.suites.brain_eval.store import QUERIES as BRAIN_EVAL

from .panels import dicts

QUERIES = Queries(__package__)
# The question row's criteria, in the order question_passes_v2 checks them: (key, what, value column, comparison).
QUESTION_CRITERIA = (
    ("max_hallucinations", "hallucinations", "hallucinations_detected", "≤"),
    ("min_citation_rate", "citation rate", "citation_rate", "≥"),
    ("min_diagnosis_accuracy", "diagnosis accuracy", "diagnosis_accuracy_score", "≥"),
    ("min_narrative_coherence", "narrative coherence", "narrative_coherence_rating", "≥"),
    ("max_lever_violations", "lever violations", "lever_mapping_violations", "≤"),
)


def one(conn: psycopg.Connection, query: str, params: dict, missing: str) -> dict:
    found = dicts(conn, query, params)
    if not found:
        raise EvalledgerError(missing)
    return found[0]


def reviewer_names(conn: psycopg.Connection) -> dict:
    """reviewer_user_id -> display name, where this login may read the registry (else empty)."""
    if not dicts(conn, QUERIES["readable"])[0]["reviewer_names"]:
        return {}
    return {r["reviewer_user_id"]: f"{r['display_name']} ({r['role_name']})" for r in dicts(conn, QUERIES["reviewer_names"])}


def run(conn: psycopg.Connection, run_id: UUID) -> dict:
    """A run and what stands behind its decision."""
    params = {"eval_run_id": run_id}
    found = one(conn, QUERIES["drill_run"], params, f"no run {run_id} that you may see")
    names = reviewer_names(conn)
    return {"run": found, "reviewer": names.get(found["reviewer_user_id"]),
            "criteria": dicts(conn, QUERIES["drill_criteria"], params),
            "intervals": dicts(conn, QUERIES["drill_intervals"], params) if found["completed_at"] else [],
            "sign_offs": dicts(conn, QUERIES["drill_sign_offs"], params),
            "questions": dicts(conn, QUERIES["drill_questions"], params),
            "agreement": agreement.of_run(conn, run_id) if found["completed_at"] else [], "names": names}


def question(conn: psycopg.Connection, run_id: UUID, question_id: str) -> dict:
    """A question of a run: its answer, claims and sources, each judge's draft, the reviewer's values
    with their trail, and its pass criteria against the row's exact values."""
    params = {"eval_run_id": run_id, "question_id": question_id}
    head = one(conn, QUERIES["drill_run"], params, f"no run {run_id} that you may see")
    row = one(conn, QUERIES["drill_question"], params, f"no question {question_id} in run {run_id} that you may see")
    ids = [q["question_id"] for q in dicts(conn, QUERIES["drill_questions"], params)]
    at = ids.index(question_id)
    analysis = dicts(conn, QUERIES["drill_analysis"], {"analysis_id": row["brain_analysis_id"]})
    answer = analysis[0] if analysis else None
    sources = dicts(conn, BRAIN_EVAL["question_sources"], params)
    given = (sources[0]["sources"] if sources else None) or []
    cited = {sid for c in ((answer or {}).get("claims") or []) for sid in (c.get("source_ids") or [])}
    criteria = row["criteria"] or {}
    checks = []
    for key, what, column, op in QUESTION_CRITERIA:
        if key not in criteria:
            continue
        if key == "min_diagnosis_accuracy" and not row["diagnosis_applies"]:
            continue
        if key == "max_lever_violations" and not row["levers_apply"]:
            continue
        checks.append({"criterion": what, "op": op, "threshold": criteria[key], "value": row[column]})
    if row["uses_stale_fixture"]:
        checks.append({"criterion": "staleness recognised", "op": "=", "threshold": True,
                       "value": row["staleness_correctly_recognized"]})
    names = reviewer_names(conn)
    shown = dicts(conn, QUERIES["drill_shown"], params)
    return {"run": head, "row": row, "answer": answer, "sources": given, "cited": cited,
            "given": {s.get("id") for s in given}, "checks": checks,
            "drafts": dicts(conn, QUERIES["drill_drafts"], params), "trail": dicts(conn, QUERIES["drill_trail"], params),
            "shown": shown[0] if shown else None, "names": names,
            "previous": ids[at - 1] if at > 0 else None, "next": ids[at + 1] if at + 1 < len(ids) else None,
            "position": at + 1, "total": len(ids)}


def question_history(conn: psycopg.Connection, question_id: str, brain: str | None, catalog: str | None) -> list[dict]:
    """A catalog question's latest 50 scores in completed runs (of a brain, a catalog version)."""
    return dicts(conn, QUERIES["question_history"], {"question_id": question_id, "brain": brain, "catalog": catalog})


def catalog_question(conn: psycopg.Connection, catalog_version: str, question_id: str) -> dict:
    """A catalog question and the captured production rows it was drafted from (`catalog draft
    --from-capture`), each as the reader's tier shows it."""
    params = {"catalog_version": catalog_version, "question_id": question_id}
    found = one(conn, QUERIES["drill_catalog_question"], params,
                f"no question {question_id} in catalog {catalog_version} that you may see")
    return {"question": found, "captures": dicts(conn, QUERIES["drill_provenance"], params)}


def takes_run(conn: psycopg.Connection, run_id: int) -> dict:
    """A takes-quality run with each judge's scores and feedback, cycle by cycle."""
    params = {"run_id": run_id}
    return {"run": one(conn, QUERIES["takes_run"], params, f"no takes-quality run {run_id} that you may see"),
            "verdicts": dicts(conn, QUERIES["takes_verdicts"], params),
            "intervals": {i["dimension"]: i for i in dicts(conn, QUERIES["takes_intervals"], params)}}


def work_snapshot(conn: psycopg.Connection, snapshot_id: int) -> dict:
    """A work-quality snapshot with each judge's narrative and comparison with the previous one."""
    params = {"snapshot_id": snapshot_id}
    return {"snapshot": one(conn, QUERIES["work_snapshot"], params, f"no work-quality snapshot {snapshot_id} that you may see"),
            "verdicts": dicts(conn, QUERIES["work_verdicts"], params),
            "intervals": {i["dimension"]: i for i in dicts(conn, QUERIES["work_intervals"], params)}}
