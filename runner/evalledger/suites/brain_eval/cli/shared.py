"""What the brain-eval commands share: run ids, the decision as printed, and its exit code."""

from __future__ import annotations

import sys
import uuid

import click

from evalledger.core import db, output
from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError

from .. import store as brain_eval

# conditional needs a person's follow-up before shipping, like an inconclusive verdict.
DECISION_EXIT = {"pass": EXIT_OK, "pass_with_notes": EXIT_OK, "conditional": EXIT_INCONCLUSIVE, "fail": EXIT_FAIL}


def parse_uuid(value: str, what: str) -> uuid.UUID:
    """value as a UUID, or an error naming what it was meant to be."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise EvalledgerError(f"{what} {value!r} is not a UUID") from None


# The aggregates in seed 002's order, as the plain text names them; a rate in percent.
UNCERTAINTY_LINES = (
    ("citation_rate", "citation rate", True),
    ("hallucination_rate", "hallucination rate", True),
    ("staleness_recognition_rate", "staleness recognition", True),
    ("diagnosis_accuracy_mean", "diagnosis accuracy mean", False),
    ("lever_mapping_correctness", "lever mapping", True),
    ("confidence_calibration_in_band", "confidence calibration in band", True),
    ("narrative_coherence_mean", "narrative coherence mean", False),
)


def print_decision(decided: brain_eval.Decision) -> None:
    """The decision, its rationale and the aggregates, as the database computed them."""
    click.echo(f"  run       {decided.eval_run_id}  ({decided.brain_under_test}, {decided.question_count} questions)")
    click.echo(f"  decision  {output.verdict(decided.decision)}")
    click.echo(f"  rationale {decided.decision_rationale}")
    click.echo(f"  hard criteria passed: {decided.hard_criteria_passed}; "
               f"soft criteria passed: {decided.soft_criteria_passed_count}; "
               f"token cost ${decided.token_cost_usd}")
    for key, value in decided.aggregated_scores.items():
        click.echo(f"    {key:32} {'n/a' if value is None else round(float(value), 4)}")
    if decided.uncertainty:
        click.echo("  uncertainty (the database's; the decision uses the estimates, docs/statistics.md):")
        for key, label, percent in UNCERTAINTY_LINES:
            u = decided.uncertainty.get(key)
            counted = ("{n} claims in {clusters} questions" if key == "hallucination_rate"
                       else "{n} questions in {clusters} question types")
            click.echo(f"    {output.interval(label, u, percent=percent, counted=counted)}")




def finish(decided: brain_eval.Decision) -> None:
    """Print the decision (or how to complete an open run) and exit with the decision's code."""
    print_decision(decided) if decided.decision else click.echo(
        f"run {decided.eval_run_id} is in progress ({decided.brain_under_test}); "
        f"complete it with `evalledger brain-eval complete {decided.eval_run_id}`")
    sys.exit(DECISION_EXIT.get(decided.decision, EXIT_INCONCLUSIVE))


def finish_run(role: str, step, run_id: str) -> None:
    """step(conn, run id) as role, then the decision it returns printed, and its exit code."""
    with db.transaction(role) as conn:
        decided = step(conn, parse_uuid(run_id, "RUN_ID"))
    finish(decided)
