"""Retention tiers (seed 002): legal holds, the retention plan and the purge.

The database decides everything: which rows are hot, cold or due (retention_plan_v2), and what
the purge deletes (retention_purge_v2, the retention role's alone). This module only calls them
as the right role and turns their refusals into sentences.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from evalledger.core import db
from evalledger.core.errors import DatabaseRefusal, EvalledgerError
from evalledger.core.queries import Queries
from evalledger.core.reading import fetch

QUERIES = Queries(__package__)

RETENTION_ROLE = "evalledger_retention"


def add_hold(*, run: str | None, brain: str | None, held_from: datetime | None, held_to: datetime | None,
             reason: str) -> tuple[int, datetime]:
    """Place a hold on exactly one of a run, a brain or a range (as the owner); its id and time."""
    scopes = [name for name, given in (("--run", run), ("--brain", brain),
                                       ("--from/--to", held_from or held_to)) if given]
    if len(scopes) != 1:
        raise EvalledgerError("a hold covers exactly one of --brain, --run or --from/--to"
                              + (f" (got {', '.join(scopes)})" if scopes else ""))
    if (held_from is None) != (held_to is None):
        raise EvalledgerError("a range hold needs both --from and --to")
    if held_from and held_from > held_to:
        raise EvalledgerError(f"--from {held_from.isoformat()} is after --to {held_to.isoformat()}")
    if run:
        try:
            run = str(uuid.UUID(run))
        except ValueError:
            raise EvalledgerError(f"--run {run!r} is not a run id (a UUID)") from None
    reason = " ".join(reason.split())
    if not reason:
        raise EvalledgerError("--reason: say why the data is held")
    params = {"eval_run_id": run, "target_id": brain, "held_from": held_from, "held_to": held_to, "reason": reason}
    return _as_owner("add_hold", params, {"legal_hold_run_fkey": f"no run {run} (evalledger brain-eval list)",
                                          "legal_hold_target_fkey": f"no target {brain!r} (evalledger target list)"})


def release_hold(hold_id: int, reason: str) -> tuple[datetime, str]:
    """Release a hold by a row of its own (as the owner); when and by whom."""
    reason = " ".join(reason.split())
    if not reason:
        raise EvalledgerError("--reason: say why the hold is released")
    return _as_owner("release_hold", {"hold_id": hold_id, "reason": reason}, {
        "legal_hold_release_hold_fkey": f"no hold {hold_id} (evalledger hold list)",
        "legal_hold_release_pkey": f"hold {hold_id} is already released (evalledger hold list)"})


def _as_owner(query: str, params: dict, refusals: dict[str, str]) -> tuple:
    """The named query's row, run as the owner; a refusal by one of refusals' constraints is its message."""
    try:
        with db.transaction("owner") as conn:
            return conn.execute(QUERIES[query], params).fetchone()
    except DatabaseRefusal as exc:
        if exc.constraint in refusals:
            raise EvalledgerError(refusals[exc.constraint]) from None
        raise


def plan() -> tuple[list[str], list[tuple]]:
    """What is hot, cold, due and held, per aging table (as an auditor)."""
    with db.transaction("auditor") as conn:
        return fetch(conn, QUERIES["retention_plan"])


def apply() -> tuple[list[str], list[tuple]]:
    """Purge what is due, in one transaction, as the retention role; what went."""
    with db.transaction() as conn:
        if not conn.execute(QUERIES["retention_may_purge"]).fetchone()[0]:
            raise EvalledgerError(f"only the installer or a member of {RETENTION_ROLE} purges "
                                  f"(GRANT {RETENTION_ROLE} TO <user>)")
        db.set_local_role(conn, RETENTION_ROLE)
        return fetch(conn, QUERIES["retention_apply"])
