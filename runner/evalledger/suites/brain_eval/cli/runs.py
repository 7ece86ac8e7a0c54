"""The runner's commands: record a run, complete it, read it back, and run the harness."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalledger.core import db, output
from evalledger.core.errors import EXIT_INCONCLUSIVE, EvalledgerError
from evalledger.core.options import LIMIT, Number, When, database_option, echo_listing, format_options
from evalledger.core.sealing import sealing
from evalledger.judges.options import batch_options, call_options, repeats_option

from .. import store as brain_eval
from .registries import read_contracts
from .shared import DECISION_EXIT, finish, finish_run, parse_uuid, print_decision


@click.group("brain-eval")
def brain_eval_group():
    """Record brain-eval runs and read back the database's decision.

    Exit codes of record, complete and show: 0 pass or pass_with_notes, 1 fail, 2 conditional
    (or a run still in progress), 3 error.
    """


@brain_eval_group.command("record")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--reviewer", "reviewer_role", required=True, help="Role name of the run's registered reviewer.")
@click.option("--historical", "import_reason", metavar="REASON",
              help="The run started more than a day ago: record it through an audited import, with this reason.")
@click.option("--cancel-open", "cancel_reason", metavar="REASON",
              help="Cancel the open run of the same brain, prompt and catalog first, with this reason (as "
                   "`brain-eval cancel` does, in the same transaction as the recording).")
@database_option
def record_command(file, reviewer_role, import_reason, cancel_reason):
    """Record a run whose brain answers were produced elsewhere, from FILE (JSON: {run: {...},
    questions: [{analysis, score}]}), for its reviewer to score.

    The file gives the automatic fields only: the reviewer's numbers (hallucinations, claims,
    staleness, diagnosis, coherence, comments) are entered by the run's reviewer, never recorded
    here (evalledger review score RUN --from FILE), and the database computes the rest. Every field
    is checked first: a problem is one line naming FILE:LINE, the field and the question id.
    Everything is written in one transaction. Recording the same file again is the run recorded
    before (its id derives from the file). A run that started more than a day ago needs
    --historical REASON. One run of a brain, prompt and catalog is open at a time: --cancel-open
    REASON cancels the one that is (it is decided fail, "Abandoned: cancelled by ..."). Exit 2 while
    the run waits for its reviewer.
    """
    from .. import recording

    checked = recording.check(file)
    with db.transaction("runner") as conn:
        found = brain_eval.reviewer_id(conn, reviewer_role)
        if found is None:
            raise EvalledgerError(f"--reviewer {reviewer_role!r} is not a registered reviewer "
                                  "(evalledger reviewer add)")
        run = checked.document["run"]
        open_run = (brain_eval.open_run_of(conn, run["brain_under_test"], run["system_prompt_hash"],
                                           run["question_catalog_version"], checked.run_id)
                    if cancel_reason is not None else None)
        if open_run is not None:
            brain_eval.cancel_run(conn, open_run, cancel_reason)
        decided, new = recording.record(conn, checked, found, import_reason)
    if open_run is not None:
        click.echo(f"cancelled run {open_run}, open of the same brain, prompt and catalog: {cancel_reason}")
    if not new:
        click.echo(f"already recorded: {file} is run {decided.eval_run_id}")
    elif not decided.decision:
        click.echo(f"recorded run {decided.eval_run_id} ({decided.question_count} questions) for reviewer "
                   f"{reviewer_role}: `evalledger review score {decided.eval_run_id} --from FILE`, "
                   f"`evalledger review finish {decided.eval_run_id} --hours H`, "
                   f"then `evalledger brain-eval complete {decided.eval_run_id}`")
        sys.exit(EXIT_INCONCLUSIVE)
    finish(decided)


@brain_eval_group.command("complete")
@click.argument("run_id")
@database_option
def complete_command(run_id):
    """Complete RUN_ID: the database computes and stores its decision (and its entries are sealed)."""
    with sealing("runner"):
        # The decision as `show` prints it, each aggregate's interval beside it.
        finish_run("runner", lambda conn, run: brain_eval.complete_run(conn, run, uncertainty=True), run_id)


@brain_eval_group.command("cancel")
@click.argument("run_id")
@click.option("--reason", required=True, help="Why the run is cancelled (recorded with it).")
@database_option
def cancel_command(run_id, reason):
    """Cancel RUN_ID, an open run, with a reason: the cancellation is recorded and the database
    decides the run fail, "Abandoned: cancelled by <login>: <reason>" (exit 1)."""
    with sealing("runner"):
        finish_run("runner", lambda conn, run: brain_eval.cancel_run(conn, run, reason), run_id)


@brain_eval_group.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run, its decision and its question rows as JSON.")
@database_option
def show_command(run_id, as_json):
    """Show the decision the database computed for RUN_ID (as an auditor).

    Beside the decision (never changing it), each aggregate's standard error and 95% interval,
    computed by the database and stored when the run completed (an open run has none); under a
    hard criterion, the bound that matters (docs/statistics.md).

    For a completed harness run it also shows how each judge's drafts agreed with the reviewer's
    final numbers, counting only values entered before the reviewer saw the drafts: Cohen's
    kappa for unsupported claims (0, 1, 2 or more), weighted kappa for diagnosis accuracy and the
    mean difference in total claims, each with its number of pairs.
    """
    from dataclasses import asdict

    from evalledger.core.reading import fetch, records

    from .. import agreement

    with db.transaction("auditor") as conn:
        decided = brain_eval.read_decision(conn, parse_uuid(run_id, "RUN_ID"), uncertainty=True)
        judged = agreement.of_run(conn, decided.eval_run_id) if decided.decision else []
        columns, rows = fetch(conn, brain_eval.QUERIES["run_questions"], {"eval_run_id": decided.eval_run_id})
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "brain_eval_run", **asdict(decided),
                                   "agreement": [asdict(a) for a in judged], "questions": records(columns, rows)}),
                   nl=False)
        sys.exit(DECISION_EXIT.get(decided.decision, EXIT_INCONCLUSIVE))
    if decided.decision and judged:
        print_decision(decided)
        click.echo("  judges against the reviewer (blind entries only; kappa (pairs)):")
        for found in judged:
            click.echo(f"    {found.line()}")
        sys.exit(DECISION_EXIT.get(decided.decision, EXIT_INCONCLUSIVE))
    finish(decided)


@brain_eval_group.command("compare")
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@click.option("--json", "as_json", is_flag=True, help="Print the paired rows as JSON.")
@database_option
def compare_command(run_a, run_b, as_json):
    """RUN_B against RUN_A over the questions both have (as an auditor), computed by the database.

    Per measure (question passed, citation rate, hallucination rate, staleness recognised,
    diagnosis accuracy, levers mapped, confidence in band, narrative coherence): the mean paired
    difference B - A, its standard error and 95% interval, and McNemar's exact p for pass/fail
    measures; questions one run has and the other has not are listed (docs/statistics.md). A
    report, not a gate: exit 0, 3 any error.
    """
    first, second = parse_uuid(run_a, "RUN_A"), parse_uuid(run_b, "RUN_B")
    with db.transaction("auditor") as conn:
        for run_id in (first, second):
            brain_eval.read_decision(conn, run_id)  # an unknown run is an error, not an empty comparison
        rows = conn.execute(brain_eval.QUERIES["paired"], {"run_a": first, "run_b": second}).fetchone()[0]
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "brain_eval_compare", "run_a": first, "run_b": second,
                                   "paired": rows}), nl=False)
        return
    click.echo(f"run {second} against run {first}: paired difference (B - A) over the questions both have "
               "(docs/statistics.md)")
    for line in output.paired(rows, items="question", places=3):
        click.echo(f"  {line}")


@brain_eval_group.command("list")
@click.option("--brain", metavar="TARGET_ID", help="Only runs of this brain.")
@click.option("--since", type=When(), metavar="DUR|TS", help="Only runs started since: 7d, 24h, or a timestamp.")
@click.option("--decision", type=click.Choice(sorted(DECISION_EXIT)), help="Only runs the database decided so.")
@click.option("--open", "only_open", is_flag=True, help="Only runs still in progress (open, within their deadline).")
@click.option("--state", type=click.Choice(["open", "complete", "cancelled", "abandoned"]),
              help="Only runs in this state (abandoned: open past the rubric's deadline, or closed so).")
@click.option("--limit", type=LIMIT, default=50, show_default=True, help="At most N runs, newest first.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the run ids, one a line (for RUN_ID=$(...)).")
@format_options
@database_option
def list_command(brain, since, decision, only_open, state, limit, quiet, fmt):
    """List brain-eval runs, newest first (as an auditor): ids to show, complete or review."""
    if decision and only_open:
        raise EvalledgerError("--decision and --open exclude each other: an open run has no decision yet")
    if only_open and state not in (None, "open"):
        raise EvalledgerError(f"--open and --state {state} exclude each other")
    echo_listing("auditor", brain_eval.QUERIES["list_runs"], {
        "brain": brain, "since": since, "decision": decision, "state": "open" if only_open else state, "limit": limit},
        fmt=fmt, kind="brain_eval_runs", empty="no brain-eval runs match", tone_column="decision", quiet=quiet)


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
@repeats_option
@click.option("--views-schema", metavar="NAME", help="The schema of the brain-ready views the brain reads.")
@click.option("--views-url", metavar="URL", help="The database holding them (default: the ledger's database).")
@click.option("--views-dir", type=click.Path(file_okay=False, path_type=Path), help="Or a folder of CREATE VIEW files.")
@click.option("--budget-usd", type=Number(0), default=None, metavar="USD",
              help="Spend cap in USD for the run's calls, the brain's and the judges'.")
@call_options
@batch_options
@click.option("--json", "as_json", is_flag=True, help="Print the run and its answers as JSON (schema: run_brain_eval.v1).")
@database_option
def run_brain_eval(target_id, brain_version, catalog_version, run_trigger, reviewer_role, questions, answers_mode,
                   judge_models, judges_mode, repeats, views_schema, views_url, views_dir, concurrency, budget_usd,
                   timeout_s, max_retries, batch, batch_fallback, as_json):
    """Call the brain under test for every catalog question and store its answers.

    The run is inserted first, then each answer as it arrives, with the automatic scores the
    database computes from it; then the judge panel drafts its suggestions for the reviewer on each
    answer. A run stopped halfway resumes on the same command, asking only the questions without an
    answer (and only the judges without a draft). One process runs a run at a time: a second
    process of the same run stops at once, asking nothing, and says since when the first runs it.
    Exit 0 when every question has an answer, 3 otherwise.

    A call --budget-usd holds back is not sent and not stored: a question without an answer, or a
    draft the run says was not sent, is asked by the same command again with room in the budget.

    With --repeats K each judge drafts K times on each answer, each repeat a numbered draft; the
    questions whose repeats straddle a pass criterion's threshold are listed as flaky.

    With --batch the brain's answers go through its provider's batch API (OpenAI's, Anthropic's or
    Gemini's; a brain of another provider is asked one by one, and the run says so), then the
    judges' drafts on them through theirs; a runner stopped while it waits resumes the same batches
    when the same command runs again. --json's calls says how the run's calls went.
    """
    import json

    import psycopg

    from evalledger.core import claims
    from evalledger.judges.panel import Panel, Progress, run_sync
    from evalledger.judges.pricing import Budget

    from .. import brains, harness

    # One budget for the brain's calls and the judges' (the panel's caller owns a shared budget).
    panel = Panel(judge_models or harness.DEFAULT_JUDGES, suite=brain_eval.__package__, judges=judges_mode,
                  budget=Budget(budget_usd), concurrency=concurrency, timeout_s=timeout_s, max_retries=max_retries)
    found_contracts = read_contracts(views_schema, views_url, views_dir)
    wanted = [q.strip() for q in questions.split(",") if q.strip()] if questions else None
    # One connection for the whole command: each new one costs a connect, and a server session
    # whose caches are cold for the first answer's triggers.
    try:
        with db.connect(role="runner") as conn:
            with db.within(conn, harness.RESUMES):
                brain = brains.resolve(conn, target_id, brain_version)
                planned = harness.plan(conn, brain, catalog_version, wanted, reviewer_role, run_trigger,
                                       found_contracts, answers_mode, repeats)
            run_id, resumed, answered = harness.start_or_resume(conn, planned)
            # One runner per run: a second process of the same run stops here, having asked nothing.
            with claims.claimed(brain_eval.QUERIES["claim_run"], run_id, suite="brain-eval",
                                next_step=harness.RESUMES):
                answered = harness.answered_now(conn, run_id)  # what the run's last runner stored
                if not as_json:
                    click.echo(f"run {run_id} ({'resumed' if resumed else 'started'}): {brain.target_id} version "
                               f"{brain.version} ({brain.model_spec}), catalog {catalog_version}, "
                               f"{len(planned.questions)} questions")
                    if planned.mode == "recorded":
                        click.echo("brain: recorded answers shipped with evalledger, not live calls "
                                   "(no API key in the environment; set it for live answers)")
                from evalledger.judges.batch import BatchOptions, refuse_unbatched

                batching = BatchOptions(batch, batch_fallback)
                live_brain = [planned.spec.provider] if planned.mode == "live" else []
                because = batching.unbatched_because(providers=live_brain + [s.provider for s in panel.specs
                                                                             if not panel.recorded(s.spec)])
                batched = not because
                if resumed and not batched:  # only a run resumed can have a batch of its calls unread
                    refuse_unbatched(conn, "brain-eval", str(run_id), batching, because)
                say = (lambda _line: None) if as_json else click.echo
                first, only = None, None
                if batched and live_brain and harness.answers_batchable(planned):
                    # The brain's answers first, through its provider's batch API; what it left (the
                    # failures of a batch, with --batch-fallback sync) is asked one by one below.
                    first, only = harness.answer_batched(planned, run_id, answered, batching, conn=conn, say=say,
                                                         budget=panel.budget, timeout_s=timeout_s)
                elif batched and live_brain:
                    click.echo(f"brain: {planned.spec.spec} has no batch API in evalledger ({planned.spec.provider}): "
                               "its answers are asked one by one, the judges' drafts batched",
                               err=as_json)
                streamed = harness.Judged()
                outcome = run_sync(harness.execute(
                    planned, run_id, answered, url=None, concurrency=concurrency, timeout_s=timeout_s,
                    max_retries=max_retries, budget=panel.budget,
                    progress=None if as_json or only == [] else Progress(len(planned.questions)), resumed=resumed,
                    panel=panel, judged=None if batched else streamed, conn=conn, only=only))
                if first is not None:
                    outcome = first.plus(outcome)
                if batched:  # the drafts wait for the answers' batch, not streamed beside the answers
                    streamed = harness.judge_batched(run_id, panel, batching, conn=conn, say=say, repeats=repeats)
                # A draft the budget held out of a batch is not asked one by one now (dearer, and not
                # what --batch asked for); a streamed one is asked again, under the same cap.
                held_out = frozenset(streamed.unsent) if batched else frozenset()
                judged = run_sync(harness.judge(run_id, panel, url=None,
                                                progress=None if as_json else panel.progress,
                                                conn=conn, repeats=repeats, leave=held_out)).plus(streamed)
                with db.within(conn, harness.RESUMES):
                    stored = harness.answers(conn, run_id)
                    drafts = harness.suggestions(conn, run_id, repeats)
                    flaky = harness.flaky(conn, run_id) if repeats > 1 else []
                    calls = harness.calls(conn, run_id)
    except psycopg.Error as exc:
        raise db.explain(exc, next_step=harness.RESUMES) from None
    if as_json:
        click.echo(json.dumps({
            "eval_run_id": str(run_id), "resumed": resumed, "answers_mode": planned.mode,
            "brain": {"target_id": brain.target_id, "version": brain.version, "model": brain.model_spec,
                      "system_prompt_hash": brain.system_prompt_hash},
            "catalog_version": catalog_version, "contracts": found_contracts.as_json(),
            "asked": outcome.asked, "failed": outcome.failed, "judges_mode": judges_mode,
            "answers": [{**a, "citation_rate": float(a["citation_rate"]), "token_cost_usd": float(a["token_cost_usd"])}
                        for a in stored],
            "suggestions": drafts, "calls": calls,
            **({"repeats": repeats, "flaky": [{**f, "threshold": float(f["threshold"]), "lowest": float(f["lowest"]),
                                               "highest": float(f["highest"])} for f in flaky]}
               if repeats > 1 else {})}, indent=2, default=str))
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
        described = panel.describe()
        if described:
            click.echo(described)
        failed = [d for d in drafts if d["error_kind"]]
        click.echo(f"suggestions: {len(drafts) - len(failed)} drafted by {len(panel.specs)} judges"
                   f"{f', each {repeats} times' if repeats > 1 else ''}"
                   f"{f', {len(failed)} failed' if failed else ''}; {judged.asked} asked now, cost ${judged.cost_usd:.4f}")
        for d in failed:
            repeat = f" repeat {d['repeat_no']}" if d.get("repeat_no", 1) > 1 else ""
            click.echo(f"  {d['question_id']} {d['model']}{repeat}: {d['error_kind']}: {d['error_message'] or ''}"
                       .rstrip(": "))
        for f in flaky:
            click.echo(f"  flaky: {f['question_id']} {f['judge_model']}: "
                       f"{f['repeats']} repeats from {f['lowest']:g} to {f['highest']:g} straddle "
                       f"{f['criterion']} {f['threshold']:g}")
    if judged.unsent:
        click.echo(output.warning(f"{len(judged.unsent)} drafts not sent: the budget cap would have been passed; "
                                  "run the same command again with room in --budget-usd to ask only those"), err=True)
    if len(stored) < len(planned.questions):
        raise EvalledgerError(f"{len(planned.questions) - len(stored)} questions have no answer: run the same "
                              "command again to ask only those")
