"""Commands for the brain-eval ledger: registries (as the owner), runs (as the runner), reviews."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import click

from evalledger.core import db

from . import store as brain_eval
from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError
from evalledger.core.options import database_option

# conditional needs a person's follow-up before shipping, like an inconclusive verdict.
DECISION_EXIT = {"pass": EXIT_OK, "pass_with_notes": EXIT_OK, "conditional": EXIT_INCONCLUSIVE, "fail": EXIT_FAIL}


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise EvalledgerError(f"{what} {value!r} is not a UUID") from None


# -- registries ----------------------------------------------------------------------------------


@click.group("reviewer")
def reviewer_group():
    """Register human reviewers."""


@reviewer_group.command("add")
@click.argument("role_name")
@click.option("--name", "display_name", required=True, help="The reviewer's name.")
@click.option("--id", "reviewer_user_id", help="Their reviewer_user_id (default: a new UUID).")
@database_option
def reviewer_add(role_name, display_name, reviewer_user_id):
    """Map database role ROLE_NAME to a reviewer_user_id and print it.

    The role should be a login role that is a member of evalledger_reviewer.
    """
    wanted = _uuid(reviewer_user_id, "--id") if reviewer_user_id else None
    with db.transaction("owner") as conn:
        found = brain_eval.add_reviewer(conn, role_name, display_name, wanted)
    if wanted and found != wanted:
        raise EvalledgerError(f"{role_name} is already registered as reviewer {found}")
    click.echo(str(found))


@click.group("tuner")
def tuner_group():
    """The prompt-tuner registry that reviewer independence is checked against."""


@tuner_group.command("add")
@click.argument("target_id")
@click.argument("user_id")
@database_option
def tuner_add(target_id, user_id):
    """Register USER_ID as a prompt tuner of TARGET_ID."""
    with db.transaction("owner") as conn:
        brain_eval.add_prompt_tuner(conn, target_id, _uuid(user_id, "USER_ID"))
    click.echo(f"registered {user_id} as a prompt tuner of {target_id}")


def print_decision(decided: brain_eval.Decision) -> None:
    """The decision, its rationale and the aggregates, as the database computed them."""
    click.echo(f"  run       {decided.eval_run_id}  ({decided.brain_under_test}, {decided.question_count} questions)")
    click.echo(f"  decision  {decided.decision}")
    click.echo(f"  rationale {decided.decision_rationale}")
    click.echo(f"  hard criteria passed: {decided.hard_criteria_passed}; "
               f"soft criteria passed: {decided.soft_criteria_passed_count}; "
               f"token cost ${decided.token_cost_usd}")
    for key, value in decided.aggregated_scores.items():
        click.echo(f"    {key:32} {'n/a' if value is None else round(float(value), 4)}")


# -- runs ----------------------------------------------------------------------------------------


@click.group("brain-eval")
def brain_eval_group():
    """Record brain-eval runs and read back the database's decision.

    Exit codes of record, complete and show: 0 pass or pass_with_notes, 1 fail, 2 conditional
    (or a run still in progress), 3 error.
    """


def _finish(decided: brain_eval.Decision) -> None:
    print_decision(decided) if decided.decision else click.echo(
        f"run {decided.eval_run_id} is in progress ({decided.brain_under_test}); "
        f"complete it with `evalledger brain-eval complete {decided.eval_run_id}`")
    sys.exit(DECISION_EXIT.get(decided.decision, EXIT_INCONCLUSIVE))


def _finish_run(role: str, step, run_id: str) -> None:
    """step(conn, run id) as role, then the decision it returns printed, and its exit code."""
    with db.transaction(role) as conn:
        decided = step(conn, _uuid(run_id, "RUN_ID"))
    _finish(decided)


@brain_eval_group.command("record")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--reviewer", "reviewer_role", required=True, help="Role name of the run's registered reviewer.")
@click.option("--complete/--no-complete", default=True, show_default=True,
              help="Complete the run now, or leave it open for the reviewer to score.")
@database_option
def record_command(file, reviewer_role, complete):
    """Record a scored run from FILE (JSON: {run: {...}, questions: [{analysis, score}]}).

    Everything is written in one transaction: a bad question leaves no half-written run.
    """
    fixture = brain_eval.load_fixture(file)
    with db.transaction("runner") as conn:
        found = brain_eval.reviewer_id(conn, reviewer_role)
        if found is None:
            raise EvalledgerError(f"--reviewer {reviewer_role!r} is not a registered reviewer "
                                  "(evalledger reviewer add)")
        try:
            decided = brain_eval.record_fixture_run(conn, fixture, found, complete=complete)
        except (KeyError, TypeError) as exc:
            raise EvalledgerError(f"{file}: {exc}") from None
    _finish(decided)


@brain_eval_group.command("complete")
@click.argument("run_id")
@database_option
def complete_command(run_id):
    """Complete RUN_ID: the database computes and stores its decision."""
    _finish_run("runner", brain_eval.complete_run, run_id)


@brain_eval_group.command("show")
@click.argument("run_id")
@database_option
def show_command(run_id):
    """Show the decision the database computed for RUN_ID."""
    _finish_run("auditor", brain_eval.read_decision, run_id)


# -- reviews -------------------------------------------------------------------------------------


@click.group("review")
def review_group():
    """Score the reviewer fields of your runs' questions (as yourself, before completion)."""


@review_group.command("score")
@click.argument("run_id")
@click.argument("question_id")
@click.option("--hallucinations", "hallucinations_detected", type=click.IntRange(min=0))
@click.option("--claims", "total_claims", type=click.IntRange(min=0))
@click.option("--diagnosis", "diagnosis_accuracy_score", type=click.Choice(["0", "0.5", "1"]))
@click.option("--coherence", "narrative_coherence_rating", type=click.IntRange(1, 5))
@click.option("--comment", "reviewer_comments")
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@database_option
def review_score(run_id, question_id, as_role, **fields):
    """Set reviewer-scored fields of QUESTION_ID in RUN_ID; prints whether it now passes."""
    changes = {k: v for k, v in fields.items() if v is not None}
    if not changes:
        raise EvalledgerError("nothing to score: give --hallucinations, --claims, --diagnosis, "
                              "--coherence or --comment")
    with db.transaction(None) as conn:
        passed = brain_eval.score_question(conn, _uuid(run_id, "RUN_ID"), question_id, changes, as_role)
    if passed is None:
        raise EvalledgerError(f"no question {question_id} in run {run_id} that you review")
    click.echo(f"{question_id}: {'passes' if passed else 'does not pass'}")


COMMANDS = (reviewer_group, tuner_group, brain_eval_group, review_group)
