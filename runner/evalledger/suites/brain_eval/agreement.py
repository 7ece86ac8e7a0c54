"""How the judges' drafts agree with the reviewer's final numbers, as the database measures it
(judge_agreement_v1, agreement_measures_v1): blind entries only."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from uuid import UUID

import psycopg
from psycopg.rows import class_row

from evalledger.core.queries import Queries

QUERIES = Queries(__package__)


@dataclass(frozen=True)
class Agreement:
    """One judge model against the reviewer: pairs and measure for each of the three fields."""

    judge_model: str
    unsupported_pairs: int
    unsupported_agreement: Decimal | None
    unsupported_kappa: Decimal | None
    diagnosis_pairs: int
    diagnosis_agreement: Decimal | None
    diagnosis_weighted_kappa: Decimal | None
    claims_pairs: int
    claims_mean_abs_difference: Decimal | None

    def line(self) -> str:
        """One line for a terminal: kappa (pairs), weighted kappa (pairs), mean |difference| (pairs)."""
        def shown(value) -> str:
            return "n/a" if value is None else f"{value:.2f}"

        return (f"{self.judge_model:28} unsupported claims kappa {shown(self.unsupported_kappa)} "
                f"({self.unsupported_pairs})  diagnosis weighted kappa {shown(self.diagnosis_weighted_kappa)} "
                f"({self.diagnosis_pairs})  claims mean |diff| {shown(self.claims_mean_abs_difference)} "
                f"({self.claims_pairs})")


def of_run(conn: psycopg.Connection, eval_run_id: UUID) -> list[Agreement]:
    """Each judge's agreement with the reviewer on one completed run (none while it is open)."""
    with conn.cursor(row_factory=class_row(Agreement)) as cur:
        return cur.execute(QUERIES["run_agreement"], {"eval_run_id": eval_run_id}).fetchall()
