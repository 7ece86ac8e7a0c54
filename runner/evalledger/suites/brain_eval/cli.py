"""Commands for the brain-eval ledger: registries (as the owner), runs (as the runner), reviews."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import click
import psycopg

from evalledger.core import db, output

from . import store as brain_eval
from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError
from evalledger.core.options import Number, When, database_option, echo_listing, format_options

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
@click.option("--password-prompt", is_flag=True,
              help="Ask for the new login role's password instead of generating one.")
@database_option
def reviewer_add(role_name, display_name, reviewer_user_id, password_prompt):
    """Make ROLE_NAME a reviewer: its login role, then its reviewer_user_id (printed last).

    When the role does not exist it is created (LOGIN, member of evalledger_reviewer) with a
    generated password printed once, or the one --password-prompt asks for; this needs a
    connecting user with CREATEROLE, such as the one that migrated. An existing role is checked
    and, if it is not yet in evalledger_reviewer, granted it. Running it again changes nothing.
    """
    import secrets

    brain_eval.check_role_name(role_name)
    wanted = _uuid(reviewer_user_id, "--id") if reviewer_user_id else None
    password = None
    with db.transaction(None) as conn:
        def new_password() -> str:
            nonlocal password
            password = (click.prompt(f"password for {role_name}", hide_input=True, confirmation_prompt=True)
                        if password_prompt else secrets.token_urlsafe(18))
            return password

        state, done = brain_eval.ensure_reviewer_role(conn, role_name, new_password)
        said = {"created": f"role {role_name}: created (LOGIN, member of evalledger_reviewer)",
                "granted": f"role {role_name}: exists; granted evalledger_reviewer",
                "exists": f"role {role_name}: exists, member of evalledger_reviewer"}[done]
        if state.role_exists and not state.can_login:
            said += " (NOLOGIN: give it LOGIN, or grant it to the login roles of people)"
        db.set_local_role(conn, db.ROLES["owner"])
        found = brain_eval.add_reviewer(conn, role_name, display_name, wanted)
    if wanted and found != wanted:
        raise EvalledgerError(f"{role_name} is already registered as reviewer {found}")
    click.echo(said)
    if password is not None and not password_prompt:
        click.echo(f"password for {role_name} (shown this once; give it to the reviewer): {password}")
    click.echo(str(found))


@reviewer_group.command("list")
@format_options
@database_option
def reviewer_list(fmt):
    """List registered reviewers, and whether each login role exists and is in evalledger_reviewer."""
    echo_listing("runner", brain_eval.QUERIES["list_reviewers"], None, fmt=fmt, kind="reviewers",
                 empty="no reviewers registered (evalledger reviewer add)")


@click.group("tuner")
def tuner_group():
    """The prompt-tuner registry that reviewer independence is checked against."""


@tuner_group.command("add")
@click.argument("target_id")
@click.argument("user", metavar="ROLE_OR_USER_ID")
@database_option
def tuner_add(target_id, user):
    """Register ROLE_OR_USER_ID as a prompt tuner of TARGET_ID: none of their runs may then be reviewed by them.

    The identity is the reviewer_user_id a run carries: give a registered reviewer's role name
    (`evalledger reviewer list`) or the UUID your identity system uses for the person. The same
    pair again is "already registered".
    """
    label = user
    with db.transaction("owner") as conn:
        try:
            user_id = uuid.UUID(user)
            label = str(user_id)
        except ValueError:
            brain_eval.check_role_name(user)
            user_id = brain_eval.reviewer_id(conn, user)
            if user_id is None:
                raise EvalledgerError(f"{user!r} is neither a UUID nor a registered reviewer's role "
                                      f"(evalledger reviewer add {user} --name ...)") from None
        try:
            added = brain_eval.add_prompt_tuner_once(conn, target_id, user_id)
        except psycopg.errors.ForeignKeyViolation:
            raise EvalledgerError(f"no target {target_id!r} (evalledger target list)") from None
        except psycopg.errors.StringDataRightTruncation:
            raise EvalledgerError(f"no target {target_id!r}: target ids are at most 16 characters") from None
    who = label if label == str(user_id) else f"{label} ({user_id})"
    click.echo(f"{'registered' if added else 'already registered:'} {who} as a prompt tuner of {target_id}")


@tuner_group.command("list")
@format_options
@database_option
def tuner_list(fmt):
    """List the prompt tuners of every target (the registry is the owner's: connect as its member)."""
    echo_listing("owner", brain_eval.QUERIES["list_tuners"], None, fmt=fmt, kind="tuners",
                 empty="no prompt tuners registered (evalledger tuner add)")


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
@click.option("--historical", "import_reason", metavar="REASON",
              help="The run started more than a day ago: record it through an audited import, with this reason.")
@database_option
def record_command(file, reviewer_role, import_reason):
    """Record a run whose brain answers were produced elsewhere, from FILE (JSON: {run: {...},
    questions: [{analysis, score}]}), for its reviewer to score.

    The file gives the automatic fields only: the reviewer's numbers (hallucinations, claims,
    staleness, diagnosis, coherence, comments) are entered by the run's reviewer, never recorded
    here (evalledger review score RUN --from FILE), and the database computes the rest. Every field
    is checked first: a problem is one line naming FILE:LINE, the field and the question id.
    Everything is written in one transaction. Recording the same file again is the run recorded
    before (its id derives from the file). A run that started more than a day ago needs
    --historical REASON. Exit 2 while the run waits for its reviewer.
    """
    from . import recording

    checked = recording.check(file)
    with db.transaction("runner") as conn:
        found = brain_eval.reviewer_id(conn, reviewer_role)
        if found is None:
            raise EvalledgerError(f"--reviewer {reviewer_role!r} is not a registered reviewer "
                                  "(evalledger reviewer add)")
        decided, new = recording.record(conn, checked, found, import_reason)
    if not new:
        click.echo(f"already recorded: {file} is run {decided.eval_run_id}")
    elif not decided.decision:
        click.echo(f"recorded run {decided.eval_run_id} ({decided.question_count} questions) for reviewer "
                   f"{reviewer_role}: `evalledger review score {decided.eval_run_id} --from FILE`, "
                   f"`evalledger review finish {decided.eval_run_id} --hours H`, "
                   f"then `evalledger brain-eval complete {decided.eval_run_id}`")
        sys.exit(EXIT_INCONCLUSIVE)
    _finish(decided)


@brain_eval_group.command("complete")
@click.argument("run_id")
@database_option
def complete_command(run_id):
    """Complete RUN_ID: the database computes and stores its decision."""
    _finish_run("runner", brain_eval.complete_run, run_id)


@brain_eval_group.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run, its decision and its question rows as JSON.")
@database_option
def show_command(run_id, as_json):
    """Show the decision the database computed for RUN_ID (as an auditor)."""
    if not as_json:
        _finish_run("auditor", brain_eval.read_decision, run_id)
    from dataclasses import asdict

    from evalledger.core.reading import fetch, records

    with db.transaction("auditor") as conn:
        decided = brain_eval.read_decision(conn, _uuid(run_id, "RUN_ID"))
        columns, rows = fetch(conn, brain_eval.QUERIES["run_questions"], {"eval_run_id": decided.eval_run_id})
    click.echo(output.to_json({"schema_version": 1, "kind": "brain_eval_run", **asdict(decided),
                               "questions": records(columns, rows)}), nl=False)
    sys.exit(DECISION_EXIT.get(decided.decision, EXIT_INCONCLUSIVE))


@brain_eval_group.command("list")
@click.option("--brain", metavar="TARGET_ID", help="Only runs of this brain.")
@click.option("--since", type=When(), metavar="DUR|TS", help="Only runs started since: 7d, 24h, or a timestamp.")
@click.option("--decision", type=click.Choice(sorted(DECISION_EXIT)), help="Only runs the database decided so.")
@click.option("--open", "only_open", is_flag=True, help="Only runs still in progress (not completed).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most N runs, newest first.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the run ids, one a line (for RUN_ID=$(...)).")
@format_options
@database_option
def list_command(brain, since, decision, only_open, limit, quiet, fmt):
    """List brain-eval runs, newest first (as an auditor): ids to show, complete or review."""
    if decision and only_open:
        raise EvalledgerError("--decision and --open exclude each other: an open run has no decision yet")
    echo_listing("auditor", brain_eval.QUERIES["list_runs"], {
        "brain": brain, "since": since, "decision": decision, "open": only_open, "limit": limit},
        fmt=fmt, kind="brain_eval_runs", empty="no brain-eval runs match", tone_column="decision", quiet=quiet)


# -- reviews -------------------------------------------------------------------------------------


class ReviewGroup(click.Group):
    """`review` with its subcommands, where a first argument that names none is the RUN to walk
    (`evalledger review RUN` is the guided review, `review_walk`)."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "RUN", review_walk, args
        return super().resolve_command(ctx, args)


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
    from . import reviewing

    scored = reviewing.read_scores(from_file)
    with db.transaction(None) as conn:
        if as_role:
            db.set_local_role(conn, as_role)
        passed = reviewing.apply_scores(conn, run, from_file, scored)
    _echo_passed(passed)


def _echo_passed(passed: dict) -> None:
    for qid, result in passed.items():
        click.echo(f"{qid}: {'incomplete' if result is None else 'passes' if result else 'does not pass'}")


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
    session plus an earlier sign-off's hours), then the sign-off. Exit 0 once signed off, 2 when
    stopped before it, 3 on an error.
    """
    from . import guided

    run = _uuid(run_id, "RUN (or a review command: queue, score, show, finish)")
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
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("", err=True)
        saved = len(dict.fromkeys(walk.saved))
        click.echo(f"stopped: {saved} question{'s' if saved != 1 else ''} saved this session, and nothing is lost; "
                   f"`evalledger review {run}{as_flag}` resumes at the first question still needing your numbers", err=True)
        sys.exit(EXIT_INCONCLUSIVE)
    notes = f", notes on {len(signed.notes)} dimension{'s' if len(signed.notes) != 1 else ''}" if signed.notes else ""
    click.echo(f"run {run}: signed off ({signed.hours:g} hours{notes})")
    if signed.left:
        click.echo(f"still to score before completion: {', '.join(signed.left)} (`evalledger review {run}{as_flag}`)")
    else:
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
    from . import guided

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

    Prints whether each question now passes, or what it still needs. Every value is recorded
    with who entered it and when (brain_eval_review_entry). With --from, a bad line is one error
    naming FILE:LINE and nothing is saved.
    """
    changes = {k: v for k, v in fields.items() if v is not None}
    if "staleness_correctly_recognized" in changes:
        changes["staleness_correctly_recognized"] = changes["staleness_correctly_recognized"] == "yes"
    run = _uuid(run_id, "RUN_ID")
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
        passed = {question_id: brain_eval.score_question(conn, run, question_id, changes, as_role)}
    _echo_passed(passed)


@review_group.command("finish")
@click.argument("run_id")
@click.option("--hours", "reviewer_hours_spent", type=Number(0), required=True, metavar="H",
              help="Hours you spent reviewing this run (self-reported; e.g. 3.5).")
@click.option("--note", "notes", multiple=True, metavar="DIMENSION=TEXT",
              help="A calibration note for one rubric dimension, e.g. citation_rate='cite the as-of date'; repeatable.")
@click.option("--as", "as_role", metavar="ROLE",
              help="Act as this reviewer role (SET ROLE); default: the connecting user.")
@database_option
def review_finish(run_id, reviewer_hours_spent, notes, as_role):
    """Sign off RUN_ID as its reviewer: the hours spent and calibration notes per dimension.

    Completion needs this sign-off and copies the latest one onto the run. Signing off again
    before completion records a new sign-off; the earlier one stays in the ledger.
    """
    calibration = {}
    for note in notes:
        dimension, sep, text = note.partition("=")
        if not sep or not dimension.strip() or not text.strip():
            raise EvalledgerError(f"--note {note!r}: expected DIMENSION=TEXT")
        calibration[dimension.strip()] = text.strip()
    with db.transaction(None) as conn:
        brain_eval.sign_off_run(conn, _uuid(run_id, "RUN_ID"), reviewer_hours_spent, calibration or None, as_role)
    click.echo(f"run {run_id}: signed off ({reviewer_hours_spent:g} hours"
               f"{f', notes on {len(calibration)} dimensions' if calibration else ''}); "
               f"complete it with `evalledger brain-eval complete {run_id}`")


def _echo_review(row: dict) -> None:
    from .guided import question_lines, suggestion_lines

    lines = question_lines(row, row)
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

    Per answered question: the brain's answer, its automatic scores and the judges' suggestions.
    Blind by default: a question's suggestions show once you have saved your numbers for it in
    `review RUN`, or when you ask with --show-suggestions, which the ledger records (every value
    you enter after says it was entered having seen them). The suggestions are drafts: your
    numbers are the ones `review score` records.
    """
    import json

    from . import harness

    with db.transaction(None) as conn:
        found = harness.review(conn, _uuid(run_id, "RUN_ID"), question_id, as_role, reveal=show_suggestions)
    if not found:
        which = f"question {question_id} of " if question_id else ""
        raise EvalledgerError(f"no answered {which}run {run_id} that you review")
    if as_json:
        click.echo(json.dumps(found, indent=2, default=str))
        return
    for row in found:
        _echo_review(row)


# -- the harness: question catalogs, brains under test ----------------------------------------------


@click.group("catalog")
def catalog_group():
    """Versioned question catalogs: loaded whole, never changed (a new quarter is a new version)."""


@catalog_group.command("load")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@database_option
def catalog_load(file):
    """Load the question catalog in FILE (JSON; schema: schemas/question_catalog.v1.schema.json).

    A file with any problem is refused whole, every problem listed with its line and field, and
    nothing is written. Loading the same version again with the same content changes nothing.
    """
    from . import catalog

    try:
        document = catalog.check_file(file)
    except catalog.CatalogError as exc:
        for line in exc.lines:
            click.echo(line, err=True)
        raise EvalledgerError(exc.summary()) from None
    with db.transaction("owner") as conn:
        loaded = catalog.load(conn, document, file.name)
    stale = sum(q["uses_stale_fixture"] for q in document["questions"])
    types = len({q["type"] for q in document["questions"]})
    state = "loaded" if loaded.added else "already loaded, unchanged:"
    click.echo(f"{state} catalog {loaded.catalog_version}: {loaded.question_count} questions "
               f"({stale} stale-fixture, {types} of {len(catalog.QUESTION_TYPES)} types), "
               f"sha256 {loaded.document_sha256}")


@catalog_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogs as JSON (schema: catalogs.v1).")
@database_option
def catalog_list(as_json):
    """List the loaded catalog versions."""
    from . import catalog

    with db.transaction("auditor") as conn:
        found = catalog.catalogs(conn)
    if as_json:
        columns = ["catalog_version", "question_count", "stale_count", "type_count", "document_sha256",
                   "source_file", "loaded_at"]
        click.echo(output.listing("json", "catalogs", columns, [[c[k] for k in columns] for c in found]), nl=False)
        return
    if not found:
        click.echo("no catalog loaded (evalledger catalog load FILE)")
    for c in found:
        click.echo(f"{c['catalog_version']:<16} {c['question_count']:>3} questions  {c['stale_count']:>2} stale-fixture  "
                   f"{c['type_count']} types  loaded {c['loaded_at']:%Y-%m-%d %H:%M}  sha256 {c['document_sha256'][:12]}")


@catalog_group.command("show")
@click.argument("version")
@click.argument("question_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the stored document (or the one question) as JSON.")
@database_option
def catalog_show(version, question_id, as_json):
    """Show the questions of catalog VERSION (or only QUESTION_ID): type, stale flag, sources, criteria."""
    import json

    from . import catalog

    with db.transaction("auditor") as conn:
        questions = catalog.questions(conn, version)
        document = catalog.document(conn, version) if as_json and not question_id else None
    if question_id:
        questions = [q for q in questions if q["question_id"] == question_id]
        if not questions:
            raise EvalledgerError(f"catalog {version} has no question {question_id}")
    if as_json:
        shown = document if document is not None else {
            "id": questions[0]["question_id"], "type": questions[0]["question_type"],
            "text": questions[0]["question_text"], "uses_stale_fixture": questions[0]["uses_stale_fixture"],
            "sources": questions[0]["sources"], "pass_criteria": questions[0]["pass_criteria"]}
        click.echo(json.dumps(shown, indent=2))
        return
    for q in questions:
        stale = "  STALE FIXTURE" if q["uses_stale_fixture"] else ""
        click.echo(f"{q['question_id']}  {q['question_type']}{stale}")
        click.echo(f"  {q['question_text']}")
        click.echo("  sources: " + ", ".join(
            s["id"] + (f" (as of {s['as_of']}, stale)" if s.get("stale") else "") for s in q["sources"]))
        click.echo("  passes when: " + catalog.describe_criteria(q["pass_criteria"]))
        for finding in q["pass_criteria"].get("expected_findings", []):
            click.echo(f"  expects: {finding}")


@click.group("brain")
def brain_group():
    """Brains under test: each model, system prompt and lever enum is a version of its own."""


def _echo_brain(v, prefix: str = "") -> None:
    label = f"  label {v.version_label}" if v.version_label else ""
    levers = ", ".join(v.levers) if v.levers else "none"
    click.echo(f"{prefix}{v.target_id} version {v.version}: {v.model_spec}{label}")
    click.echo(f"  system_prompt_hash {v.system_prompt_hash}")
    click.echo(f"  levers {levers}")


@brain_group.command("add")
@click.argument("target_id")
@click.option("--model", required=True, metavar="PROVIDER:MODEL", help="The brain's model, e.g. anthropic:claude-sonnet-4-6.")
@click.option("--prompt-file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The system prompt (UTF-8 text); the database stores it and computes its SHA-256.")
@click.option("--label", "version_label", help="A human-readable version label, e.g. pipeline_brain_v3.")
@click.option("--lever", "levers", multiple=True, metavar="ACTION_TYPE",
              help="An allowed proposed_actions[].action_type (repeat for each): the brain's lever enum.")
@database_option
def brain_add(target_id, model, prompt_file, version_label, levers):
    """Register a version of brain TARGET_ID; the same model, prompt and levers again is the same version."""
    from evalledger.core.errors import read_user_text

    from . import brains

    prompt = read_user_text(prompt_file, "prompt file")
    with db.transaction("owner") as conn:
        version, added = brains.add(conn, target_id, model, prompt, version_label, levers)
    _echo_brain(version, "registered " if added else "already registered: ")


@brain_group.command("list")
@click.argument("target_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the versions as JSON (schema: brain_versions.v1).")
@database_option
def brain_list(target_id, as_json):
    """List the registered versions of every brain (or of TARGET_ID), oldest first."""
    from . import brains

    with db.transaction("auditor") as conn:
        found = brains.versions(conn, target_id)
    if as_json:
        columns = ["target_id", "version", "model_spec", "version_label", "system_prompt_hash", "levers", "created_at"]
        click.echo(output.listing("json", "brain_versions", columns, [[getattr(v, k) for k in columns] for v in found]),
                   nl=False)
        return
    if not found:
        click.echo("no brain versions registered (evalledger brain add)")
    for v in found:
        _echo_brain(v)


@brain_group.command("show")
@click.argument("target_id")
@click.argument("version", required=False)
@database_option
def brain_show(target_id, version):
    """Show VERSION of TARGET_ID (a number or label; default: the latest), with its system prompt."""
    from . import brains

    with db.transaction("auditor") as conn:
        found = brains.resolve(conn, target_id, version)
    _echo_brain(found)
    click.echo("  system prompt:")
    for line in found.system_prompt.splitlines():
        click.echo(f"    {line}")


@click.group("contracts")
def contracts_group():
    """The view-contracts hash: the brain-ready views a brain reads, canonicalised with sqlglot."""


@contracts_group.command("hash")
@click.option("--schema", metavar="NAME", help="The schema of the brain-ready views (live, or their qualifier in --dir files).")
@click.option("--views-url", metavar="URL", help="The database the brain reads (default: the ledger's database).")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="A folder of CREATE VIEW files (*.sql) instead of live views.")
@click.option("--json", "as_json", is_flag=True, help="Print the hash, source and views as JSON (schema: contracts_hash.v1).")
@database_option
def contracts_hash(schema, views_url, folder, as_json):
    """Print brain_view_contracts_hash and the views it covers.

    The same views hash the same from the live database (any PostgreSQL 14+) and from files,
    whatever their whitespace, comments, keyword case or redundant parentheses; any change of
    meaning changes the hash.
    """
    import json

    from . import contracts

    if folder and views_url:
        raise EvalledgerError("--dir and --views-url name two sources: give one")
    if folder:
        found = contracts.from_folder(folder, schema)
    elif schema:
        url = views_url or db.database_url()
        with db.connect(url) as conn:
            found = contracts.from_database(conn, schema, db.describe(url))
    else:
        raise EvalledgerError("give --schema (live views, at --views-url or the ledger's database) or --dir")
    if as_json:
        click.echo(json.dumps(found.as_json(), indent=2))
        return
    click.echo(f"brain_view_contracts_hash {found.sha256}")
    click.echo(f"  source {found.source} ({contracts.CANON_VERSION})")
    click.echo(f"  {len(found.views)} view{'s' if len(found.views) != 1 else ''}:")
    for view in sorted(found.views, key=lambda v: v.name):
        click.echo(f"    {view.name:<40} {view.sha256[:12]}")


@contracts_group.command("dump")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--schema", metavar="NAME", required=True, help="The schema of the brain-ready views.")
@click.option("--views-url", metavar="URL", help="The database the brain reads (default: the ledger's database).")
@database_option
def contracts_dump(folder, schema, views_url):
    """Write each live view of --schema to FOLDER/<view>.sql, for `contracts hash --dir FOLDER`."""
    from . import contracts

    url = views_url or db.database_url()
    with db.connect(url) as conn:
        written = contracts.dump(conn, schema, db.describe(url), folder)
    click.echo(f"wrote {len(written)} view file{'s' if len(written) != 1 else ''} to {folder}")


def _read_contracts(views_schema, views_url, views_dir):
    from . import contracts

    if views_dir and (views_schema and views_url):
        raise EvalledgerError("--views-dir and --views-url name two sources: give one")
    if views_dir:
        return contracts.from_folder(views_dir, views_schema)
    if not views_schema:
        raise EvalledgerError("the view contracts: give --views-schema (live views) or --views-dir (CREATE VIEW files)")
    url = views_url or db.database_url()
    with db.connect(url) as conn:
        return contracts.from_database(conn, views_schema, db.describe(url))


@click.command("brain-eval")
@click.option("--brain", "target_id", required=True, metavar="TARGET_ID", help="The brain under test, e.g. AGT-902.")
@click.option("--brain-version", metavar="N|LABEL", help="Which registered version (default: the latest).")
@click.option("--catalog", "catalog_version", required=True, metavar="VERSION", help="The question catalog, e.g. v28-2026Q2.")
@click.option("--trigger", "run_trigger", required=True,
              type=click.Choice(["pre_launch", "quarterly", "prompt_change", "model_promotion", "on_demand"]),
              help="Why the run happens (seed 002's run_trigger).")
@click.option("--reviewer", "reviewer_role", required=True, metavar="ROLE", help="Role name of the run's registered reviewer.")
@click.option("--questions", metavar="EVAL-Q01,...", help="Only these catalog questions (default: all of them).")
@click.option("--answers", "answers_mode", type=click.Choice(["auto", "live", "recorded"]), default="auto", show_default=True,
              help="auto is live (the brain's API key is needed); recorded: the answers recorded with the demo "
                   "catalog, for the demo.")
@click.option("--judge-models", default=None, metavar="A,B,C",
              help="The judge panel that drafts suggestions for the reviewer. [default: openai:gpt-4o, "
                   "anthropic:claude-opus-4-7, google:gemini-1.5-pro]")
@click.option("--judges", "judges_mode", type=click.Choice(["auto", "live", "recorded"]), default="auto",
              show_default=True, help="auto is live; recorded: the drafts recorded with the demo, for the demo.")
@click.option("--views-schema", metavar="NAME", help="The schema of the brain-ready views the brain reads.")
@click.option("--views-url", metavar="URL", help="The database holding them (default: the ledger's database).")
@click.option("--views-dir", type=click.Path(file_okay=False, path_type=Path), help="Or a folder of CREATE VIEW files.")
@click.option("--concurrency", type=Number(1, integer=True), default=8, show_default=True, metavar="N",
              help="Brain calls in flight at once (1 or more).")
@click.option("--budget-usd", type=Number(0), default=None, metavar="USD", help="Spend cap in USD for the brain calls.")
@click.option("--timeout", "timeout_s", type=Number(0, above=True), default=120.0, show_default=True, metavar="SECONDS",
              help="Time limit of one HTTP attempt (more than 0).")
@click.option("--retries", "max_retries", type=Number(0, integer=True), default=3, show_default=True, metavar="N",
              help="Retries of a 429, 5xx, timeout or connection error (honouring Retry-After; 0 or more).")
@click.option("--json", "as_json", is_flag=True, help="Print the run and its answers as JSON (schema: run_brain_eval.v1).")
@database_option
def run_brain_eval(target_id, brain_version, catalog_version, run_trigger, reviewer_role, questions, answers_mode,
                   judge_models, judges_mode, views_schema, views_url, views_dir, concurrency, budget_usd, timeout_s,
                   max_retries, as_json):
    """Call the brain under test for every catalog question and store its answers.

    The run is inserted first, then each answer as it arrives, with the automatic scores the
    database computes from it; then the judge panel drafts its suggestions for the reviewer on each
    answer. A run stopped halfway resumes on the same command, asking only the questions without an
    answer (and only the judges without a draft). Exit 0 when every question has an answer, 3 otherwise.
    """
    import json

    from evalledger.judges.panel import Progress, describe_modes, parse_panel, resolve_modes, run_sync
    from evalledger.judges.pricing import Budget

    from . import brains, harness

    judges = parse_panel(judge_models or harness.DEFAULT_JUDGES)
    judge_modes = resolve_modes(judges, __package__, judges_mode)
    found_contracts = _read_contracts(views_schema, views_url, views_dir)
    wanted = [q.strip() for q in questions.split(",") if q.strip()] if questions else None
    with db.transaction("runner") as conn:
        brain = brains.resolve(conn, target_id, brain_version)
        planned = harness.plan(conn, brain, catalog_version, wanted, reviewer_role, run_trigger, found_contracts,
                               answers_mode)
        run_id, resumed, answered = harness.start_or_resume(conn, planned)
    if not as_json:
        click.echo(f"run {run_id} ({'resumed' if resumed else 'started'}): {brain.target_id} version {brain.version} "
                   f"({brain.model_spec}), catalog {catalog_version}, {len(planned.questions)} questions")
        if planned.mode == "recorded":
            click.echo("brain: recorded answers shipped with evalledger, not live calls "
                       "(no API key in the environment; set it for live answers)")
    budget = Budget(budget_usd)
    streamed = harness.Judged()
    outcome = run_sync(harness.execute(planned, run_id, answered, url=None, concurrency=concurrency,
                                       timeout_s=timeout_s, max_retries=max_retries, budget=budget,
                                       progress=None if as_json else Progress(len(planned.questions)),
                                       resumed=resumed, judges=judges, judge_modes=judge_modes, judged=streamed))
    judged = run_sync(harness.judge(run_id, judges, judge_modes, url=None, concurrency=concurrency,
                                    timeout_s=timeout_s, max_retries=max_retries, budget=budget,
                                    progress=None if as_json else Progress(0))).plus(streamed)
    with db.transaction("runner") as conn:
        stored = harness.answers(conn, run_id)
        drafts = harness.suggestions(conn, run_id)
    if as_json:
        click.echo(json.dumps({
            "eval_run_id": str(run_id), "resumed": resumed, "answers_mode": planned.mode,
            "brain": {"target_id": brain.target_id, "version": brain.version, "model": brain.model_spec,
                      "system_prompt_hash": brain.system_prompt_hash},
            "catalog_version": catalog_version, "contracts": found_contracts.as_json(),
            "asked": outcome.asked, "failed": outcome.failed, "judges_mode": judges_mode,
            "answers": [{**a, "citation_rate": float(a["citation_rate"]), "token_cost_usd": float(a["token_cost_usd"])}
                        for a in stored],
            "suggestions": drafts}, indent=2, default=str))
    else:
        click.echo(f"contracts: {found_contracts.sha256} ({len(found_contracts.views)} views, {found_contracts.source})")
        click.echo(f"answers: {len(stored)} of {len(planned.questions)} stored"
                   f"{f' ({outcome.skipped} before this resumption)' if resumed else ''}; "
                   f"{outcome.asked} asked now, cost ${outcome.cost_usd:.4f}")
        for a in stored:
            if a["contract_error"]:
                click.echo(f"  {a['question_id']}: breaks the answer contract: {a['contract_error']}")
        for qid, why in outcome.failed.items():
            click.echo(f"  {qid}: no answer: {why}")
        described = describe_modes(judges, judge_modes)
        if described:
            click.echo(described)
        failed = [d for d in drafts if d["error_kind"]]
        click.echo(f"suggestions: {len(drafts) - len(failed)} drafted by {len(judges)} judges"
                   f"{f', {len(failed)} failed' if failed else ''}; {judged.asked} asked now, cost ${judged.cost_usd:.4f}")
        for d in failed:
            click.echo(f"  {d['question_id']} {d['model']}: {d['error_kind']}: {d['error_message'] or ''}".rstrip(": "))
    if len(stored) < len(planned.questions):
        raise EvalledgerError(f"{len(planned.questions) - len(stored)} questions have no answer: run the same "
                              "command again to ask only those")


COMMANDS = (reviewer_group, tuner_group, brain_eval_group, review_group, catalog_group, brain_group, contracts_group)
RUN_COMMANDS = (run_brain_eval,)
