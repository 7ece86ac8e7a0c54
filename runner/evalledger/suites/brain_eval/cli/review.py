"""The reviewer's commands: the guided walk, the queue, scores one step at a time, sign-off, show."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from evalledger.core import db, output
from evalledger.core.errors import EXIT_ERROR, EXIT_INCONCLUSIVE, EvalledgerError
from evalledger.core.options import Number, database_option, format_options

from .. import store as brain_eval
from .shared import parse_uuid


class ReviewGroup(click.Group):
    """`review` with its subcommands, where a first argument that names none is the RUN to walk
    (`evalledger review RUN` is the guided review, `review_walk`)."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "RUN", review_walk, args
        return super().resolve_command(ctx, args)


def _hours(hours) -> str:
    """'1 hour', '2.5 hours': reviewer hours as a sign-off states them."""
    return f"{hours:g} hour{'' if hours == 1 else 's'}"


@click.group("review", cls=ReviewGroup, subcommand_metavar="RUN | COMMAND [ARGS]...")
def review_group():
    """Review your runs' questions as yourself, before completion: `evalledger review RUN` walks RUN.

    `evalledger review RUN [--as ROLE] [--show-suggestions] [--from FILE]` shows each question of
    RUN still needing your numbers (the brain's answer, its cited sources on request, the automatic
    scores), asks for your fields, saves each question as you answer it, then asks calibration
    notes and your hours and signs the run off. The commands below do the same one step at a time.
    """


class _PromptConsole:
    """The guided review's console: click's prompts, so a test can type into them."""

    def say(self, text: str = "") -> None:
        click.echo(text)

    def ask(self, label: str, default: str = "") -> str:
        return click.prompt(label, default=default, show_default=bool(default))


def _score_from_file(run, from_file, as_role) -> None:
    """`review score RUN --from FILE` and `review RUN --from FILE`: all or nothing."""
    from .. import reviewing

    scored = reviewing.read_scores(from_file)
    with db.transaction(None) as conn:
        if as_role:
            db.set_local_role(conn, as_role)
        outcomes = reviewing.apply_scores(conn, run, from_file, scored)
    _echo_outcomes(outcomes)


def _echo_outcomes(outcomes: dict) -> None:
    from ..reviewing import outcome

    for qid, needs in outcomes.items():
        click.echo(f"{qid}: {outcome(needs)}")


class _WalkCommand(click.Command):
    """The guided review, reached as `review RUN`: its usage line reads so."""

    def collect_usage_pieces(self, ctx):
        return [self.options_metavar]


@click.command("review", cls=_WalkCommand)
@click.argument("run_id", metavar="RUN")
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@click.option("--show-suggestions", "show_first", is_flag=True,
              help="Show each question's judge suggestions before you score it (default: blind, only after "
                   "your numbers are saved; the database records which).")
@click.option("--from", "from_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Take the fields from a .csv or .jsonl file instead, as `review score RUN --from FILE` does.")
@database_option
def review_walk(run_id, as_role, show_first, from_file):
    """Walk RUN question by question as its reviewer, then sign it off.

    For each question still needing your numbers: the question, the brain's answer (each claim with
    its confidence and cited sources; type s at a number prompt for the sources' text) and the
    automatic scores; then hallucinations detected, total claims, staleness (stale-fixture
    questions), diagnosis accuracy (where the type has it), coherence 1-5 and comments. A value
    that cannot be right is asked again, not stored. Each question is saved as you answer it: after
    Ctrl-C, the same command resumes at the first question still needing something. After the
    questions: any to revisit, calibration notes per dimension, and the time spent (default: this
    session plus an earlier sign-off's hours), then the sign-off, once every question has your
    numbers. Exit 0 once signed off, 2 when stopped before it (or a question is still to score), 3
    on an error.
    """
    from .. import guided
    from ..reviewing import as_text

    run = parse_uuid(run_id, "RUN (or a review command: queue, score, show, finish)")
    if from_file:
        if show_first:
            raise EvalledgerError("--from FILE takes your numbers from the file: --show-suggestions has nothing "
                                  "to show")
        _score_from_file(run, from_file, as_role)
        return
    walk = guided.Walk(run, _PromptConsole(), as_role=as_role, show_first=show_first)
    as_flag = f" --as {as_role}" if as_role else ""  # the command that resumes is the one that ran
    try:
        signed = walk.run()
    except (click.exceptions.Abort, KeyboardInterrupt, guided.Unreachable) as exc:
        click.echo("", err=True)
        if isinstance(exc, guided.Unreachable):
            click.echo(f"evalledger: {exc}", err=True)
        saved = len(dict.fromkeys(walk.saved))
        if walk.unsaved is not None:
            what, values = walk.unsaved
            typed = ", ".join(f"{k.replace('_', ' ')} {as_text(v)}" for k, v in values.items()
                              if v is not None and v != "")
            click.echo(f"not saved: {what}: {typed or 'nothing typed'} (type it again when you resume)", err=True)
        lost = "" if walk.unsaved else ", and nothing is lost"
        click.echo(f"stopped: {saved} question{'s' if saved != 1 else ''} saved this session{lost}; "
                   f"`evalledger review {run}{as_flag}` resumes at the first question still needing your numbers", err=True)
        sys.exit(EXIT_ERROR if isinstance(exc, guided.Unreachable) else EXIT_INCONCLUSIVE)
    if signed.left:
        click.echo(f"run {run}: not signed off: still to score: {', '.join(signed.left)}; a run is signed off once "
                   f"every question has your numbers (`evalledger review {run}{as_flag}`)")
        sys.exit(EXIT_INCONCLUSIVE)
    notes = f", notes on {len(signed.notes)} dimension{'s' if len(signed.notes) != 1 else ''}" if signed.notes else ""
    click.echo(f"run {run}: signed off ({_hours(signed.hours)}{notes})")
    click.echo(f"every question is scored: the runner completes it with `evalledger brain-eval complete {run}`")


@review_group.command("queue")
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@format_options
@database_option
def review_queue_command(as_role, fmt):
    """List the open runs waiting for you, oldest first, with the questions still needing your numbers.

    Who you are is your database login (or --as ROLE), through the reviewer registry.
    """
    from .. import guided

    me, runs = guided.queue(as_role)
    columns = ["eval_run_id", "brain_under_test", "run_trigger", "question_catalog_version", "started_at",
               "question_count", "questions_to_score", "signed_off", "questions_waiting"]
    if me.reviewer_user_id is None:
        raise EvalledgerError(f"{me.role_name} is not a registered reviewer (evalledger reviewer add {me.role_name} "
                              "--name ...), so no run waits for it: connect as your own login, or give --as ROLE")
    if fmt != "text":
        rows = [[r[c] for c in columns] for r in runs]
        click.echo(output.listing(fmt, "review_queue", columns, rows), nl=False)
        return
    if not runs:
        click.echo(f"no open run waits for {me.role_name}")
        return
    for r in runs:
        signed = "signed off" if r["signed_off"] else "not signed off"
        click.echo(f"{r['eval_run_id']}  {r['brain_under_test']}  {r['run_trigger']}  catalog "
                   f"{r['question_catalog_version']}  started {output.cell(r['started_at'])}: {r['question_count']} "
                   f"questions, {r['questions_to_score']} to score, {signed}")
        waiting = r["questions_waiting"]
        if waiting:
            click.echo(f"  waiting: {', '.join(waiting)}")
        click.echo(f"  evalledger review {r['eval_run_id']}" if waiting or not r["signed_off"] else
                   "  the runner completes it")


@review_group.command("score")
@click.argument("run_id")
@click.argument("question_id", required=False)
@click.option("--hallucinations", "hallucinations_detected", type=click.IntRange(min=0), metavar="N",
              help="Hallucinated claims you found (hallucinations_detected).")
@click.option("--claims", "total_claims", type=click.IntRange(min=0), metavar="N",
              help="Claims in the analysis (total_claims).")
@click.option("--stale", "staleness_correctly_recognized", type=click.Choice(["yes", "no"]),
              help="Stale-fixture questions only: did the answer recognise the stale data?")
@click.option("--diagnosis", "diagnosis_accuracy_score", type=click.Choice(["0", "0.5", "1"]),
              help="Diagnosis accuracy: 0 wrong, 0.5 partly right, 1 right.")
@click.option("--coherence", "narrative_coherence_rating", type=click.IntRange(1, 5), metavar="1-5",
              help="Narrative coherence, 1 (incoherent) to 5.")
@click.option("--comment", "reviewer_comments", metavar="TEXT", help="Your comment (reviewer_comments).")
@click.option("--from", "from_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Score many questions from a .csv or .jsonl file (question_id and the fields): all or nothing.")
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@database_option
def review_score(run_id, question_id, from_file, as_role, **fields):
    """Set reviewer-scored fields of QUESTION_ID in RUN_ID (or of every question in --from FILE).

    Prints whether each question is now complete, or what it still needs; whether it passes is
    the run's to say once it completes (blind: no verdict while you score). Every value is recorded
    with who entered it and when (brain_eval_review_entry). With --from, a bad line is one error
    naming FILE:LINE and nothing is saved.
    """
    changes = {k: v for k, v in fields.items() if v is not None}
    if "staleness_correctly_recognized" in changes:
        changes["staleness_correctly_recognized"] = changes["staleness_correctly_recognized"] == "yes"
    run = parse_uuid(run_id, "RUN_ID")
    if from_file:
        if question_id or changes:
            raise EvalledgerError("--from FILE scores the questions the file names: give no QUESTION_ID or field options")
        _score_from_file(run, from_file, as_role)
        return
    if not question_id:
        raise EvalledgerError("give QUESTION_ID and the fields to score, or --from FILE")
    if not changes:
        raise EvalledgerError("nothing to score: give --hallucinations, --claims, --stale, --diagnosis, "
                              "--coherence or --comment")
    with db.transaction(None) as conn:
        outcomes = {question_id: brain_eval.score_question(conn, run, question_id, changes, as_role)}
    _echo_outcomes(outcomes)


@review_group.command("finish")
@click.argument("run_id")
@click.option("--hours", "reviewer_hours_spent", type=Number(0, maximum=999.99), required=True, metavar="H",
              help="Hours you spent reviewing this run (self-reported; e.g. 3.5; at most 999.99, seed 002's "
                   "NUMERIC(5,2)).")
@click.option("--note", "notes", multiple=True, metavar="DIMENSION=TEXT",
              help="A calibration note for one rubric dimension, e.g. citation_rate='cite the as-of date'; repeatable.")
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@database_option
def review_finish(run_id, reviewer_hours_spent, notes, as_role):
    """Sign off RUN_ID as its reviewer: the hours spent and calibration notes per dimension.

    Refused while a question still needs your numbers (each is named). Completion needs this
    sign-off and copies the latest one onto the run. The same command again (after a kill, say) is
    recognised as done: nothing more is recorded, exit 0. Signing off again with other values
    before completion is a correction: a new sign-off, which keeps the earlier one's notes for
    every dimension no --note names; the earlier one stays in the ledger.
    """
    from datetime import timezone

    from evalledger.core.reading import dicts

    from ..reviewing import carried_notes

    calibration = {}
    for note in notes:
        dimension, sep, text = note.partition("=")
        if not sep or not dimension.strip() or not text.strip():
            raise EvalledgerError(f"--note {note!r}: expected DIMENSION=TEXT")
        calibration[dimension.strip()] = text.strip()
    run = parse_uuid(run_id, "RUN_ID")
    with db.transaction(None) as conn:
        if as_role:
            db.set_local_role(conn, as_role)
        earlier = dicts(conn, brain_eval.QUERIES["review_run"], {"eval_run_id": run})
        before = earlier[0] if earlier and earlier[0]["signed_off_at"] is not None else None
        calibration = carried_notes(before["signed_off_notes"] if before else None, calibration)
        made = brain_eval.sign_off_run(conn, run, reviewer_hours_spent, calibration or None)
        if made is None:  # the one it repeats (read again: it may have committed while this one waited)
            same = dicts(conn, brain_eval.QUERIES["review_run"], {"eval_run_id": run})[0]
    noted = len(calibration)
    what = _hours(reviewer_hours_spent) + (f", notes on {noted} dimension{'s' if noted != 1 else ''}" if noted else "")
    complete = f"complete it with `evalledger brain-eval complete {run_id}`"
    if made is None:
        at = same["signed_off_at"].astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        click.echo(f"run {run_id}: already signed off with these values ({what}) at {at}: nothing more "
                   f"recorded; {complete}")
    elif before is not None:
        click.echo(f"run {run_id}: sign-off corrected ({what}; was {_hours(float(before['signed_off_hours']))}"
                   f"{'' if before['signed_off_notes'] == (calibration or None) else ', other notes'}): completion "
                   f"copies the latest, and the earlier stays in the ledger; {complete}")
    else:
        click.echo(f"run {run_id}: signed off ({what}); {complete}")


def _entered_line(entered: dict) -> str:
    """The numbers the reviewer has saved for a question (never its verdict, which a reviewer may not
    read), named and written as the walk asks and shows them."""
    from ..guided import LABELS
    from ..reviewing import as_text

    saved = [f"{LABELS[field].split(' (')[0]} "
             f"{json.dumps(value, ensure_ascii=False) if field == 'reviewer_comments' else as_text(value)}"
             for field, value in ((f, entered[f]) for f in LABELS) if value is not None]
    return f"  your numbers: {', '.join(saved) or 'none saved yet'}"


def _echo_review(row: dict) -> None:
    from ..guided import question_lines, suggestion_lines

    lines = question_lines(row, row)
    lines.append(_entered_line(row["entered"]))
    if row["suggestions_hidden"]:
        lines.append("  judges: suggestions hidden until you save your numbers for this question "
                     "(or --show-suggestions, which is recorded)")
    else:
        lines += suggestion_lines(row["suggestions"])
    click.echo("\n".join(lines))


@review_group.command("show")
@click.argument("run_id")
@click.argument("question_id", required=False)
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@click.option("--show-suggestions", is_flag=True,
              help="Also show the judges' suggestions on questions you have not scored yet (recorded in the ledger).")
@click.option("--json", "as_json", is_flag=True, help="Print the answers, scores and suggestions as JSON (schema: review_show.v1).")
@database_option
def review_show(run_id, question_id, as_role, show_suggestions, as_json):
    """Show what you score RUN_ID's questions (or only QUESTION_ID) from: answers, scores, suggestions.

    Per answered question: the brain's answer, its automatic scores, the numbers you have saved
    for it and the judges' suggestions. Blind by default: a
    question's suggestions show once you have saved your numbers for it in `review RUN`, or when
    you ask with --show-suggestions, which the ledger records (every value you enter after says it
    was entered having seen them). The suggestions are drafts: your numbers are the ones `review
    score` records.
    """
    from .. import harness

    run = parse_uuid(run_id, "RUN_ID")
    if show_suggestions:  # its own transaction, committed before the read (a rollback would erase the record)
        with db.transaction(None) as conn:
            harness.reveal(conn, run, question_id, as_role)
    with db.transaction(None) as conn:
        found = harness.review(conn, run, question_id, as_role)
    if not found:
        which = f"question {question_id} of " if question_id else ""
        raise EvalledgerError(f"no answered {which}run {run_id} that you review")
    if as_json:
        click.echo(json.dumps(found, indent=2, default=str))
        return
    for row in found:
        _echo_review(row)
