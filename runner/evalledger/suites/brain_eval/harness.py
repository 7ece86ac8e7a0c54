"""The harness run (issue 9): the brain under test called for every catalog question, through the
judge panel's provider layer (concurrency, retry, timeout, budget), each answer stored as it
arrives with the scores the database computes from it. A run stopped halfway resumes on the next
identical command, asking only the questions that have no answer yet."""

from __future__ import annotations

import asyncio
import functools
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence
from uuid import UUID

import jinja2
import jsonschema
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evalledger.core import db
from evalledger.core.errors import EvalledgerError
from evalledger.core.paths import read_package_text
from evalledger.core.queries import Queries
from evalledger.judges import LIVE, RECORDED
from evalledger.judges.pricing import Budget
from evalledger.judges.providers import BUDGET_EXHAUSTED, JudgeCall, JudgeRequest, run_calls
from evalledger.judges.repair import repair_json
from evalledger.judges.specs import _PROVIDERS, ModelSpec, has_live_credentials, parse_model_spec

from . import reviewing, store
from .brains import BrainVersion
from .contracts import Contracts

if TYPE_CHECKING:
    from evalledger.judges.panel import Panel

QUERIES = Queries(__package__)
ANSWER_SCHEMA_FILE = "schemas/brain_answer.v1.schema.json"
RECORDED_FILE = "fixtures/recorded_brain_answers.json"
TRIGGERS = ("pre_launch", "quarterly", "prompt_change", "model_promotion", "on_demand")
MAX_OUTPUT_TOKENS = 2048
SUGGESTION_SCHEMA_FILE = "schemas/brain_judge_suggestion.v1.schema.json"
# The takes-quality panel's three families; a judge of the brain's own family is flagged.
DEFAULT_JUDGES = "openai:gpt-4o,anthropic:claude-opus-4-7,google:gemini-1.5-pro"
# What a lost connection says to do (docs/runs.md, "The door"): the same command resumes the run.
RESUMES = "run the same command again: it resumes the run"


@functools.cache
def answer_schema() -> dict:
    """The answer contract's JSON Schema, as shipped in the package."""
    return json.loads(read_package_text(ANSWER_SCHEMA_FILE, package=__package__))


@functools.cache
def _answer_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(answer_schema())


@functools.cache
def suggestion_schema() -> dict:
    """The JSON Schema of a judge's suggestion, as shipped in the package."""
    return json.loads(read_package_text(SUGGESTION_SCHEMA_FILE, package=__package__))


@functools.cache
def _templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"), autoescape=False,
                              undefined=jinja2.StrictUndefined)


def render_judge(question: dict, answer: dict) -> tuple[str, str]:
    """The judge's system and user messages for one answer (rendered the same from a recording's
    document or from the ledger's rows: the answer is printed with sorted keys). The system message
    is the same for every answer of every run, so the providers' prompt caches hold it; all that is
    the question's or the answer's own is in the user message, last."""
    wants_diagnosis = "min_diagnosis_accuracy" in question["pass_criteria"]
    system = _templates().get_template("brain_judge_system.j2").render().strip() + "\n"
    shown = json.dumps({"narrative": answer["narrative"], "claims": answer["claims"],
                        "proposed_actions": answer["proposed_actions"] or []}, indent=1, sort_keys=True)
    user = _templates().get_template("brain_judge_user.j2").render(
        question=question, findings=question["pass_criteria"].get("expected_findings", []),
        answer=shown, wants_diagnosis=wants_diagnosis, stale=question["uses_stale_fixture"]).strip() + "\n"
    return system, user


@functools.cache
def _recordings() -> dict:
    return json.loads(read_package_text(RECORDED_FILE, package=__package__))


def recorded_answers() -> dict:
    """Recorded brain answers shipped with evalledger: {model spec: {question id: reply}}."""
    return _recordings()["models"]


def answer_mode(spec: ModelSpec, catalog_version: str, questions: Sequence[str], mode: str = "auto",
                env: Mapping[str, str] | None = None) -> str:
    """live or recorded for the brain's model, or an error (before anything is written) naming what
    is missing. auto is live, like the judges: the recorded answers were written for the demo
    catalog, so they answer only when asked for by name (--answers recorded) and only its questions."""
    env = os.environ if env is None else env
    keys = " or ".join(_PROVIDERS[spec.provider].key_vars)
    if mode in ("auto", LIVE):
        if not has_live_credentials(spec, env):
            raise EvalledgerError(
                f"no API key for {spec.spec}: set {keys} for live answers, or pass --answers recorded to use the "
                f"answers recorded with evalledger's demo (demo catalog {_recordings()['catalog_version']} only)")
        return LIVE
    if catalog_version != _recordings()["catalog_version"]:
        raise EvalledgerError(f"--answers recorded: the recorded answers are to catalog "
                              f"{_recordings()['catalog_version']}, not {catalog_version}")
    missing = [q for q in questions if q not in recorded_answers().get(spec.spec, {})]
    if missing:
        raise EvalledgerError(f"--answers recorded: no recorded answers of {spec.spec} to {', '.join(missing[:5])}"
                              f"{' ...' if len(missing) > 5 else ''} in {RECORDED_FILE}")
    return RECORDED


def render_question(question: dict) -> str:
    """The user message: what every question shares first (how to answer, the reply's shape), then
    the question's own sources and the question, last (the brain's system prompt comes before it)."""
    return _templates().get_template("brain_question.j2").render(
        question=question, sources=question["sources"]).strip() + "\n"


def check_answer(call: JudgeCall) -> tuple[dict | None, str | None]:
    """The answer document and None, or None and why the reply breaks the contract."""
    parsed = call.parsed if call.parsed is not None else repair_json(call.text)
    if parsed is None:
        return None, "not a JSON document"
    errors = sorted(_answer_validator().iter_errors(parsed), key=lambda e: list(e.absolute_path))
    if errors:
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in errors[0].absolute_path)
        return None, f"{where}: {errors[0].message}"[:500]
    return parsed, None


@dataclass
class Plan:
    """Everything a run needs before its first call."""

    brain: BrainVersion
    brain_version_id: int
    catalog_version: str
    questions: list[dict]
    reviewer_id: UUID
    trigger: str
    contracts: Contracts
    mode: str
    repeats: int = 1  # how many times each judge drafts on each answer (--repeats K)

    @property
    def spec(self) -> ModelSpec:
        return parse_model_spec(self.brain.model_spec)


@dataclass
class Outcome:
    """What a run (or its resumption) did."""

    eval_run_id: UUID
    resumed: bool
    asked: int = 0
    stored: int = 0
    broken: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    cost_usd: float = 0.0
    answered_total: int = 0

    def plus(self, other: "Outcome") -> "Outcome":
        """This (the answers a batch brought) and what `execute` asked after it, together."""
        return Outcome(self.eval_run_id, other.resumed, self.asked + other.asked, self.stored + other.stored,
                       self.broken + other.broken, {**self.failed, **other.failed}, self.skipped,
                       self.cost_usd + other.cost_usd, self.skipped + self.stored + other.stored)


def plan(conn: psycopg.Connection, brain: BrainVersion, catalog_version: str, question_ids: list[str] | None,
         reviewer_role: str, trigger: str, contracts: Contracts, mode: str, repeats: int = 1) -> Plan:
    """Resolve and check everything before any call: brain version, questions, reviewer, answers."""
    if trigger not in TRIGGERS:
        raise EvalledgerError(f"--trigger {trigger!r}: expected one of {', '.join(TRIGGERS)}")
    if not 1 <= repeats <= 10:
        raise EvalledgerError(f"--repeats must be 1 to 10, got {repeats}")
    from . import catalog

    questions = catalog.questions(conn, catalog_version)
    if question_ids:
        by_id = {q["question_id"]: q for q in questions}
        unknown = [q for q in question_ids if q not in by_id]
        if unknown:
            raise EvalledgerError(f"--questions: catalog {catalog_version} has no {', '.join(unknown)}")
        if len(set(question_ids)) != len(question_ids):
            raise EvalledgerError("--questions: a question is named twice")
        questions = [by_id[q] for q in question_ids]
    reviewer_id = store.reviewer_id(conn, reviewer_role)
    if reviewer_id is None:
        raise EvalledgerError(f"--reviewer {reviewer_role!r} is not a registered reviewer (evalledger reviewer add)")
    version_id = conn.execute(QUERIES["brain_version_id"], {"target_id": brain.target_id,
                                                            "version": brain.version}).fetchone()[0]
    spec = parse_model_spec(brain.model_spec)
    chosen = answer_mode(spec, catalog_version, [q["question_id"] for q in questions], mode)
    return Plan(brain, version_id, catalog_version, questions, reviewer_id, trigger, contracts, chosen, repeats)


def start_or_resume(conn: psycopg.Connection, p: Plan) -> tuple[UUID, bool, set[str]]:
    """The open run this identical command started before (and its answered questions), or a new one.

    Race-free: two processes that both find no open run start one between them. One run of a
    brain, prompt and catalog is open at a time (brain_eval_log_one_open_idx), so the second's
    insert waits for the first's transaction and is then refused; it looks again and resumes the
    run the first started. The run is recorded under READ COMMITTED, which its admission requires
    (an operator's default of REPEATABLE READ would refuse it, and would hide the first's run from
    the second look). On a connection in no transaction, each attempt is a transaction of its own;
    inside the caller's, a savepoint."""
    ids = [q["question_id"] for q in p.questions]
    identity = {"brain_version_id": p.brain_version_id, "catalog_version": p.catalog_version, "question_ids": ids,
                "contracts_hash": p.contracts.sha256, "reviewer_user_id": p.reviewer_id, "run_trigger": p.trigger,
                "answers": p.mode}
    # K is a part of the identity: a run of another K is another eval, never resumed (open_harness_run
    # reads a ledger from before repeats as K = 1). A run of one repeat is written as before repeats
    # (the column's default): a ledger that predates them runs it unchanged.
    identity["repeats"] = p.repeats
    repeated = "_repeat" if p.repeats > 1 else ""
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
    for attempt in (1, 2):
        try:
            with conn.transaction():
                found = conn.execute(QUERIES["open_harness_run"], identity).fetchone()
                if found:
                    answered = {r[0] for r in conn.execute(QUERIES["harness_answered"], {"eval_run_id": found[0]})}
                    return found[0], True, answered
                run_id = store.start_run(
                    conn, run_trigger=p.trigger, brain_under_test=p.brain.target_id, model_id=p.brain.model_id,
                    system_prompt_hash=p.brain.system_prompt_hash, system_prompt_version_label=p.brain.version_label,
                    brain_view_contracts_hash=p.contracts.sha256, question_catalog_version=p.catalog_version,
                    question_count=len(ids), reviewer_user_id=p.reviewer_id)
                conn.execute(QUERIES["insert_harness_run" + repeated], {**identity, "eval_run_id": run_id,
                                                             "contracts": Jsonb(p.contracts.as_json())})
                return run_id, False, set()
        except psycopg.errors.UniqueViolation as exc:
            # Another process started an open run of this brain, prompt and catalog meanwhile: the
            # second look finds it when it is this command's (else the insert names it, refused).
            if attempt == 2 or exc.diag.constraint_name != "brain_eval_log_one_open_idx":
                raise
    raise AssertionError("unreachable")


def answered_now(conn: psycopg.Connection, run_id: UUID) -> set[str]:
    """The questions of a run answered by now (read again once its claim is held: the process that
    held it before may have stored more)."""
    with conn.transaction():
        return {r[0] for r in conn.execute(QUERIES["harness_answered"], {"eval_run_id": run_id})}


def _recorded_call(spec: ModelSpec, request: JudgeRequest, index: int) -> JudgeCall:
    reply = recorded_answers()[spec.spec][request.key]
    text = reply["text"]
    return JudgeCall(spec=spec, text=text, parsed=repair_json(text), input_tokens=int(reply.get("input_tokens", 0)),
                     output_tokens=int(reply.get("output_tokens", 0)), cost_usd=0.0, key=request.key, index=index)


def store_answer(conn: psycopg.Connection, run_id: UUID, p: Plan, question: dict, call: JudgeCall) -> str | None:
    """One answer as it arrives, in its own transaction (a savepoint of the batch's, when the
    answers that came back together are stored together): the analysis row, then the answer row
    (the database computes its scores). Returns the contract violation, if any."""
    from evalledger.judges import money

    parsed, broken = check_answer(call)
    with conn.transaction():
        analysis_id = store.record_analysis(
            conn, brain=p.brain.target_id, origin="eval", model_id=p.brain.model_id,
            system_prompt_hash=p.brain.system_prompt_hash, question_id=question["question_id"],
            question=question["question_text"],
            output=parsed["narrative"] if parsed else (call.text or "").replace("\x00", ""),
            sources_read=question["sources"], claims=parsed["claims"] if parsed else [],
            proposed_actions=parsed["proposed_actions"] if parsed else None,
            # The usage and its price; the database computes the cost from them (call_cost_v1), exactly:
            # only the run's total is rounded, once, to seed 002's NUMERIC(10,4).
            **money.billed(call.spec, input_tokens=call.input_tokens, cached_input_tokens=call.cached_input_tokens,
                           cache_write_tokens=call.cache_write_tokens, output_tokens=call.output_tokens,
                           recorded=p.mode == RECORDED, batch=call.batch),
            token_cost_usd=0)
        conn.execute(QUERIES["insert_harness_answer"], {
            "eval_run_id": run_id, "question_id": question["question_id"], "analysis_id": analysis_id,
            "recorded": p.mode == RECORDED, "contract_error": broken, "latency_ms": call.latency_ms,
            "attempts": call.attempts})
    return broken


def stored_together(conn: psycopg.Connection, store: Callable[[JudgeCall], Any]):
    """run_calls' on_results for a run's writes: each batch of results that came back together is
    stored by store, one result at a time, in one transaction and one trip to a thread, so the
    event loop keeps serving the calls in flight meanwhile. The follow-ups store asked for, per result."""
    def in_one_transaction(calls: list[JudgeCall]) -> list:
        with conn.transaction():
            return [store(call) for call in calls]

    async def batch(calls: list[JudgeCall]) -> list:
        return await asyncio.to_thread(in_one_transaction, calls)

    return batch


def _brain_request(p: Plan, question: dict) -> JudgeRequest:
    """The brain's call for one question: its system prompt first (what every question shares, for
    the providers' caches), the question last."""
    return JudgeRequest(spec=p.spec, system=p.brain.system_prompt, user=render_question(question),
                        json_schema=answer_schema(), max_output_tokens=MAX_OUTPUT_TOKENS, key=question["question_id"])


def answer_item(question_id: str) -> str:
    """A brain's answer as a batch item names it (a judge's draft is '<question> <model>')."""
    return f"answer {question_id}"


def answers_batchable(p: Plan) -> bool:
    """Whether the brain's answers can go through a provider's batch API: live answers of a model
    whose provider has one (judges/batch.py, BATCH_PROVIDERS)."""
    from evalledger.judges.batch import BATCH_PROVIDERS

    return p.mode == LIVE and p.spec.provider in BATCH_PROVIDERS


def answer_batched(p: Plan, run_id: UUID, answered: set[str], options: Any, *, conn: psycopg.Connection,
                   say: Callable[[str], None], budget: Budget | None = None,
                   timeout_s: float = 120.0) -> tuple[Outcome, list[str]]:
    """The brain's answers through its provider's batch API (--batch; judges/batch.py's BatchRun,
    the judges' machinery): the run's submitted answer batches resumed, the others written to the
    ledger before they are submitted, each answer stored as its result is read (with the scores the
    database computes). An answer a batch failed or let expire is retried once, in a second batch, or
    (--batch-fallback sync) left to `execute`. Returns what was done and the questions left to ask one
    by one. A call the budget cap cannot hold is left out of the batch, unsent, and counted failed."""
    from evalledger.judges import batch as batches

    outcome = Outcome(run_id, False, skipped=len(answered))
    todo = [q for q in p.questions if q["question_id"] not in answered]
    by_id = {q["question_id"]: q for q in todo}
    requests = [_brain_request(p, q) for q in todo]
    outcome.asked = len(requests)
    if not requests:
        return outcome, []

    def store(call: JudgeCall) -> None:
        qid = call.key
        if not call.ok:
            outcome.failed[qid] = f"{call.error_kind}: {call.error_message or ''}".strip(": ")
            return None
        outcome.failed.pop(qid, None)
        outcome.cost_usd += call.cost_usd or 0.0
        broken = store_answer(conn, run_id, p, by_id[qid], call)
        outcome.stored += 1
        if broken:
            outcome.broken.append(qid)
        return None

    runner = batches.BatchRun(batches.Ledger(conn, "brain-eval", str(run_id)), item=lambda r: answer_item(r.key),
                              on_submit=lambda request, projected: None, store=store, say=say, options=options,
                              timeout_s=timeout_s, store_failures=False, budget=budget)
    try:
        left = runner.run(requests)
    except psycopg.Error as exc:
        raise db.explain(exc, next_step=RESUMES) from None
    for request in left:  # --batch-fallback sync: what a batch failed, asked one by one
        outcome.failed.pop(request.key, None)
    outcome.asked -= len(left)
    return outcome, [r.key for r in left]


async def execute(p: Plan, run_id: UUID, answered: set[str], *, url: str | None, concurrency: int,
                  timeout_s: float, max_retries: int, budget: Budget | None, progress: Any = None,
                  resumed: bool = False, panel: Panel | None = None, judged: "Judged | None" = None,
                  conn: psycopg.Connection | None = None, only: Sequence[str] | None = None) -> Outcome:
    """Ask the brain every question of the run that has no answer yet; store each as it arrives
    (on conn, the runner's connection the caller has open, else on one of its own to url).

    With live answers and the panel's live judges, each contract-keeping answer's judge calls join
    the same pool as soon as it is stored (counted in `judged`), instead of waiting for the last
    answer; `judge` afterwards asks only what is left (recorded judges, and whatever a resumption finds).
    only: just these questions (what a batch left to be asked one by one, --batch-fallback sync)."""
    outcome = Outcome(run_id, resumed, skipped=len(answered))
    todo = [q for q in p.questions if q["question_id"] not in answered
            and (only is None or q["question_id"] in only)]
    by_id = {q["question_id"]: q for q in todo}
    spec = p.spec
    requests = [_brain_request(p, q) for q in todo]
    outcome.asked = len(requests)
    streamed = [j for j in panel.specs if not panel.recorded(j.spec)] \
        if panel is not None and p.mode != RECORDED and judged is not None else []
    if progress is not None:
        progress.start("brain", len(requests))

    def on_result(call: JudgeCall) -> list[JudgeRequest] | None:
        if isinstance(call.key, tuple):
            return judged.take(conn, run_id, call, recorded=False)
        qid = call.key
        if progress is not None:
            progress.advance(call.cost_usd)
        if not call.ok:
            outcome.failed[qid] = f"{call.error_kind}: {call.error_message or ''}".strip(": ")
            return
        outcome.cost_usd += call.cost_usd or 0.0
        try:
            broken = store_answer(conn, run_id, p, by_id[qid], call)
        except psycopg.Error as exc:
            raise db.explain(exc, next_step=RESUMES) from None
        outcome.stored += 1
        if broken:
            outcome.broken.append(qid)
            return None
        if not streamed:
            return None
        parsed, _ = check_answer(call)
        system, user = render_judge(by_id[qid], {"narrative": parsed["narrative"], "claims": parsed["claims"],
                                                 "proposed_actions": parsed["proposed_actions"]})
        judged.asked += len(streamed) * p.repeats
        return [request for repeat in range(1, p.repeats + 1)
                for request in panel.requests(system, user, json_schema=suggestion_schema(),
                                              models=[j.spec for j in streamed],
                                              key=lambda spec, repeat=repeat: draft_key(qid, spec.spec, repeat))]

    # One connection for the whole run, each answer its own transaction.
    with db.connected(url, "runner", conn) as conn:
        if p.mode == RECORDED:
            for index, request in enumerate(requests):
                on_result(_recorded_call(spec, request, index))
        elif requests:
            await run_calls(requests, concurrency=concurrency, timeout_s=timeout_s, max_retries=max_retries,
                            budget=budget, on_results=stored_together(conn, on_result), follow_up_specs=streamed)
    if progress is not None:
        progress.finish()
    outcome.answered_total = outcome.skipped + outcome.stored
    return outcome


def calls(conn: psycopg.Connection, run_id: UUID) -> dict:
    """How the run's live calls went (the brain's answers and the judges' drafts), as the database
    counts them from its rows: {"sync": n, "batch": n, "cached_input_tokens": n}."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["harness_calls"], {"eval_run_id": run_id}).fetchone()


def answers(conn: psycopg.Connection, run_id: UUID) -> list[dict]:
    """A harness run's answers with their automatic scores, in catalog order."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["harness_answers"], {"eval_run_id": run_id}).fetchall()


@dataclass
class Judged:
    """What the judge panel did on a run's answers."""

    asked: int = 0
    stored: int = 0
    failed: int = 0
    cost_usd: float = 0.0
    unsent: set = field(default_factory=set)  # keys of the drafts the budget cap held back: not stored

    def plus(self, earlier: "Judged") -> "Judged":
        """This phase's counts after an earlier one's (the judges streamed with the answers, then the
        rest): the calls add up; the drafts still unsent are this phase's, which asked again every
        draft the earlier one did not store."""
        return Judged(self.asked + earlier.asked, self.stored + earlier.stored, self.failed + earlier.failed,
                      self.cost_usd + earlier.cost_usd, set(self.unsent))

    def take(self, conn: psycopg.Connection, run_id: UUID, call: JudgeCall, recorded: bool) -> None:
        """Store one judge's draft, a failure too (the reviewer sees which judge errored, and a stored
        draft is final: the run never asks it again), and count it. A call the budget cap held back
        was never sent and says nothing of the judge: it is not stored, so the same command again,
        with room in its budget, asks it."""
        question_id, model, repeat = draft_of(call.key)
        self.cost_usd += call.cost_usd or 0.0
        if call.error_kind == BUDGET_EXHAUSTED:
            self.unsent.add(call.key)
            return
        try:
            store_suggestion(conn, run_id, question_id, model, recorded, call, repeat=repeat)
        except psycopg.Error as exc:
            raise db.explain(exc, next_step=RESUMES) from None
        self.stored += 1
        self.failed += 0 if call.ok else 1


def draft_key(question_id: str, model: str, repeat: int) -> tuple:
    """A draft's request key: (question, model), and its repeat after the first (--repeats K)."""
    return (question_id, model) if repeat == 1 else (question_id, model, repeat)


def draft_of(key: tuple) -> tuple[str, str, int]:
    """(question, model, repeat) of a draft's request key (draft_key)."""
    return (key[0], key[1], key[2] if len(key) > 2 else 1)


def draft_label(key: tuple) -> str:
    """A draft as a batch item or a line names it: the repeat after the first (a run of one repeat reads as before)."""
    question_id, model, repeat = draft_of(key)
    return f"{question_id} {model}" + (f" repeat {repeat}" if repeat > 1 else "")


async def judge(run_id: UUID, panel: Panel, *, url: str | None, progress: Any = None,
                conn: psycopg.Connection | None = None, repeats: int = 1, leave: frozenset = frozenset()) -> Judged:
    """Each judge of the panel drafts its suggestions on every contract-keeping answer it has not judged yet;
    each draft is stored as it arrives (a failure too, so the reviewer sees which judge errored),
    with the others that arrived while the last were being stored (on conn, or a connection of
    its own to url). leave: the keys of drafts not to ask now (the budget held them out of a batch:
    asked one by one they would cost more), counted unsent."""
    done = Judged(unsent=set(leave))
    with db.connected(url, "runner", conn) as conn:
        requests = [r for r in _judge_requests(conn, run_id, panel, repeats) if r.key not in leave]
        done.asked = len(requests)
        if progress is not None:
            progress.start("judges", len(requests))

        def on_result(call: JudgeCall) -> None:
            if progress is not None:
                progress.advance(call.cost_usd)
            done.take(conn, run_id, call, recorded=panel.recorded(draft_of(call.key)[1]))

        await panel.calls(requests, on_result=on_result, on_results=stored_together(conn, on_result))
    if progress is not None:
        progress.finish()
    return done


def _judge_requests(conn: psycopg.Connection, run_id: UUID, panel: Panel, repeats: int = 1) -> list[JudgeRequest]:
    """One request per judge of the panel (and repeat, --repeats K) without a draft on each
    contract-keeping answer: a resumption never asks a stored repeat again."""
    # Read in a transaction of its own: left open, it would make every draft's transaction a
    # savepoint of it, committed only when the phase ends (a run killed meanwhile lost them all).
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        pending = cur.execute(QUERIES["answers_to_judge_repeat" if repeats > 1 else "answers_to_judge"],
                              {"eval_run_id": run_id}).fetchall()
    requests = []
    for row in pending:
        question = {k: row[k] for k in ("question_id", "question_type", "question_text", "sources",
                                        "uses_stale_fixture", "pass_criteria")}
        system, user = render_judge(question, row)
        if repeats == 1:
            requests += panel.requests(system, user, json_schema=suggestion_schema(),
                                       models=[m for m in panel.models if m not in row["judged_by"]],
                                       key=lambda spec, qid=row["question_id"]: (qid, spec.spec))
            continue
        for repeat in range(1, repeats + 1):
            requests += panel.requests(system, user, json_schema=suggestion_schema(),
                                       models=[m for m in panel.models if f"{m} {repeat}" not in row["judged_by"]],
                                       key=lambda spec, qid=row["question_id"], repeat=repeat:
                                           draft_key(qid, spec.spec, repeat))
    return requests


def judge_batched(run_id: UUID, panel: Panel, options: Any, *, conn: psycopg.Connection,
                  say: Callable[[str], None], repeats: int = 1) -> Judged:
    """The live judges' drafts through the providers' batch APIs (Panel.batch, --batch): the run's
    submitted batches resumed, each draft stored as its result is read. A failed draft is retried
    once (in a batch, or left to `judge` with --batch-fallback sync) before it is stored: a judge
    has one draft per answer and repeat (--repeats K: each repeat its own request and item).
    `judge` afterwards asks what is left (recorded judges, providers without a batch API)."""
    done = Judged()
    batchable = panel.batchable(_judge_requests(conn, run_id, panel, repeats))
    if not batchable:
        return done
    done.asked = len(batchable)

    panel.batch(batchable, conn=conn, suite="brain-eval", run_key=str(run_id),
                item=lambda r: draft_label(r.key), on_submit=lambda r, projected: None,
                on_result=lambda call: done.take(conn, run_id, call, recorded=False),
                options=options, say=say, store_failures=False)
    return done


def store_suggestion(conn: psycopg.Connection, run_id: UUID, question_id: str, model: str, recorded: bool,
                     call: JudgeCall, repeat: int = 1) -> None:
    """One judge's reply (or failure) in its own transaction; the database reads the draft from it.
    A repeat after the first (--repeats K) names its number; the first is written as before repeats."""
    from evalledger.judges import money
    from evalledger.judges.panel import json_safe, raw_excerpt

    # The usage and its price; the database computes the cost from them (call_cost_v1).
    usage = money.billed(call.spec, input_tokens=call.input_tokens, cached_input_tokens=call.cached_input_tokens,
                         cache_write_tokens=call.cache_write_tokens, output_tokens=call.output_tokens, recorded=recorded,
                         batch=call.batch)
    with conn.transaction():
        conn.execute(QUERIES[money.billed_query("insert_suggestion", usage) + ("_repeat" if repeat > 1 else "")], {
            **usage, "repeat_no": repeat,
            "eval_run_id": run_id, "question_id": question_id, "model": model, "recorded": recorded,
            "structured": call.structured,
            "response_json": Jsonb(json_safe(call.parsed)) if call.parsed is not None else None,
            "raw_excerpt": raw_excerpt(call), "error_kind": call.error_kind, "error_message": call.error_message,
            "cost_usd": 0, "latency_ms": call.latency_ms, "attempts": call.attempts})


def suggestions(conn: psycopg.Connection, run_id: UUID, repeats: int = 1) -> list[dict]:
    """Every judge's suggestion on a run's answers, by question then model (then repeat, --repeats K)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["suggestions_repeat" if repeats > 1 else "suggestions"],
                           {"eval_run_id": run_id}).fetchall()


def flaky(conn: psycopg.Connection, run_id: UUID) -> list[dict]:
    """The questions of a run whose judge repeats straddle a pass criterion's threshold (brain_eval_flaky_v1)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["flaky_questions"], {"eval_run_id": run_id}).fetchall()


def reveal(conn: psycopg.Connection, run_id: UUID, question_id: str | None = None,
           as_role: str | None = None) -> list[str]:
    """Ask to see the judges' suggestions on a run's answered questions (or one of them), as as_role
    when given; the database records it. Commit before reading them: the reviewer's policy shows a
    question's suggestions only once an earlier transaction recorded the reveal (a rolled-back
    reveal showed nothing). The question ids revealed."""
    if as_role:
        db.set_local_role(conn, as_role)
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute(QUERIES["review_answers"], {"eval_run_id": run_id, "question_id": question_id}).fetchall()
    for row in found:
        store.show_suggestions(conn, run_id, row["question_id"])
    return [row["question_id"] for row in found]


def review(conn: psycopg.Connection, run_id: UUID, question_id: str | None = None,
           as_role: str | None = None) -> list[dict]:
    """What the reviewer scores from, per answered question (as as_role when given): the question,
    the answer, its automatic scores and the judges' suggestions. Blind by default: a reviewer sees
    a question's suggestions only once a committed reveal recorded that it asked (reveal, in an
    earlier transaction); `suggestions_hidden` says where they are still hidden. Row-level security
    shows a reviewer its own runs only, so another reviewer's run reads as empty."""
    if as_role:
        db.set_local_role(conn, as_role)
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute(QUERIES["review_answers"], {"eval_run_id": run_id, "question_id": question_id}).fetchall()
        drafts = reviewing.drafts(conn, run_id)
        shown = {r["question_id"] for r in cur.execute(QUERIES["suggestions_shown"], {"eval_run_id": run_id})}
    for row in found:
        row["suggestions"] = [d for d in drafts if d["question_id"] == row["question_id"]]
        row["suggestions_hidden"] = not row["suggestions"] and row["question_id"] not in shown
    return found
