"""Brains under test (issue 9): each version of a brain's model, system prompt and lever enum is a
row of its own. The database numbers versions and hashes prompts; a changed prompt is a new version."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries
from evalledger.judges.specs import parse_model_spec

QUERIES = Queries(__package__)
_LEVER = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class BrainVersion:
    """One registered version of a brain under test, as the database holds it."""

    target_id: str
    version: int
    provider: str
    model_id: str
    system_prompt_hash: str
    version_label: str | None
    levers: list[str]
    system_prompt: str
    created_at: datetime

    @property
    def model_spec(self) -> str:
        """provider:model, as the judge panel's model specs are written."""
        return f"{self.provider}:{self.model_id}"


def check_levers(levers) -> list[str]:
    """The lever enum as given (action_type values: lower_snake_case), or an error naming the bad one."""
    for lever in levers:
        if not _LEVER.match(lever):
            raise EvalledgerError(f"lever {lever!r} is not an action_type name (lower_snake_case)")
    return list(levers)


def add(conn: psycopg.Connection, target_id: str, model: str, system_prompt: str,
        version_label: str | None = None, levers=()) -> tuple[BrainVersion, bool]:
    """Register a brain configuration; the version it is (new, or the one registered before with
    the same model, prompt and levers) and whether it was added now."""
    spec = parse_model_spec(model)
    if not system_prompt.strip():
        raise EvalledgerError("the system prompt is empty")
    params = {"target_id": target_id, "provider": spec.provider, "model_id": spec.model,
              "system_prompt": system_prompt, "version_label": version_label, "levers": check_levers(levers)}
    with conn.cursor(row_factory=class_row(BrainVersion)) as cur:
        added = cur.execute(QUERIES["add_brain_version"], params).fetchone()
        if added:
            return added, True
        found = cur.execute(QUERIES["same_brain_version"], params).fetchone()
    if found.version_label != version_label and version_label is not None:
        raise EvalledgerError(f"{target_id} version {found.version} has this model, prompt and levers already, "
                              f"labelled {found.version_label!r}: a label never changes")
    return found, False


def versions(conn: psycopg.Connection, target_id: str | None = None) -> list[BrainVersion]:
    """Registered brain versions (of one brain, or of all), oldest first."""
    with conn.cursor(row_factory=class_row(BrainVersion)) as cur:
        return cur.execute(QUERIES["brain_versions"], {"target_id": target_id}).fetchall()


def resolve(conn: psycopg.Connection, target_id: str, version: str | None = None) -> BrainVersion:
    """One version of a brain: by number, by label, or (version None) the latest."""
    found = [v for v in versions(conn, target_id)
             if version is None or str(v.version) == version or v.version_label == version]
    if not found:
        which = f" version {version}" if version else " versions"
        raise EvalledgerError(f"no {target_id}{which} registered (evalledger brain add)")
    return found[-1]
