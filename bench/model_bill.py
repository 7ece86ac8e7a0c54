"""Bench: the model bill of a 30-question harness run with three judges and of a 12-take takes-quality
run, at list price with synchronous calls, with the providers' prompt caches, and batched with the
caches, priced at pricing.json's rates from the usage the provider stand-in (tests/standin) reports.

The prompts are the real ones: the demo catalog's 30 questions asked of the demo brain
(anthropic:claude-sonnet-4-6, its demo system prompt), each answer judged by the default panel
(openai:gpt-4o, anthropic:claude-opus-4-7, google:gemini-1.5-pro) with brain-eval's judge prompt;
and the 12 demo takes judged by the takes-quality panel with the rubric the ledger starts with. The
replies are the recorded ones (the demo brain's answers, the judges' drafts and verdicts), so the
output tokens are those of real-sized replies and both columns get the same replies.

  list price     the stand-in's caches off, nothing marked for them: every prompt token at the input rate
  with caching   the prompts as evalledger sends them (the shared prefix first, Anthropic's marked with
                 cache_control, OpenAI's with a prompt_cache_key), the stand-in reporting cached tokens
                 the way each provider does; each token class at its rate

The stand-in caches as the providers do (tests/standin/server.py, _cache_usage): OpenAI and Gemini a
repeated prefix of 1,024 tokens or more, by themselves; Anthropic the prefix a breakpoint ends, when
it is 1,024 tokens or more. It counts 4 characters a token. A call of the first burst finds no cache
(the calls go out concurrently, as a run's do).

  batched        the caching column's usage at the batch APIs' rates (pricing.json's batch_input and
                 batch_output, the cache's rates scaled by the same discount: pricing.Price.batched), as
                 if every provider's calls went through its batch API
  --batch        the same, with what `--batch` batches today: every call to a provider with a batch API
                 (OpenAI's, Anthropic's and Gemini's, BATCH_PROVIDERS), the judges' drafts and the harness
                 brain's own answers (the demo brain's is Anthropic's); a call to another provider stays at
                 its caching price. It equals the batched column while every model has a batch API

What-if rows (--what-if): the harness with a brain system prompt of 6,000 characters (a production
brain's prompt with its views' contracts is longer than the demo's 434), and takes-quality with
--cycles 3 (a failing sample judged again: the whole prompt repeats).

    .venv/bin/python bench/model_bill.py [--what-if] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import re
import sys
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalledger.core.rubric import Rubric  # noqa: E402
from evalledger.judges.batch import BATCH_PROVIDERS  # noqa: E402
from evalledger.judges.panel import prompt_sha256, recordings  # noqa: E402
from evalledger.judges.pricing import cost_of  # noqa: E402
from evalledger.judges.providers import JudgeCall, JudgeRequest, run_calls  # noqa: E402
from evalledger.judges.repair import repair_json  # noqa: E402
from evalledger.suites.brain_eval import catalog, harness  # noqa: E402
from evalledger.suites.takes_quality import corpus as takes, prompts  # noqa: E402
from tests.standin import StandIn  # noqa: E402

BRAIN = "anthropic:claude-sonnet-4-6"
JUDGES = harness.DEFAULT_JUDGES.split(",")
BRAIN_PROMPT = (ROOT / "runner/evalledger/suites/brain_eval/fixtures/brain_eval_demo_prompt.txt").read_text("utf-8")


@dataclass
class Bill:
    calls: int = 0
    input_tokens: int = 0
    cached: int = 0
    written: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    batched_usd: float = 0.0
    flag_batched_usd: float = 0.0
    replies: list[str] = field(default_factory=list)

    def add(self, calls: list[JudgeCall]) -> None:
        for call in calls:
            assert call.ok, f"{call.spec}: {call.error_message}"
            self.calls += 1
            self.input_tokens += call.input_tokens
            self.cached += call.cached_input_tokens
            self.written += call.cache_write_tokens
            self.output_tokens += call.output_tokens
            self.usd += cost_of(call.spec, call.input_tokens, call.output_tokens, call.cached_input_tokens,
                                call.cache_write_tokens) or 0.0
            batched = cost_of(call.spec, call.input_tokens, call.output_tokens, call.cached_input_tokens,
                              call.cache_write_tokens, batch=True) or 0.0
            self.batched_usd += batched
            self.flag_batched_usd += batched if call.spec.provider in BATCH_PROVIDERS else (
                cost_of(call.spec, call.input_tokens, call.output_tokens, call.cached_input_tokens,
                        call.cache_write_tokens) or 0.0)
            self.replies.append(f"{call.spec.spec} {call.key} {call.text}")


def _run(standin: StandIn, requests: list[JudgeRequest]) -> list[JudgeCall]:
    return asyncio.run(run_calls(requests, timeout_s=60, env=standin.env()))


# --- the harness run ------------------------------------------------------------------------


def _questions() -> list[dict]:
    document = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
    return [{"question_id": q["id"], "question_type": q["type"], "question_text": q["text"], "sources": q["sources"],
             "uses_stale_fixture": q["uses_stale_fixture"], "pass_criteria": q["pass_criteria"]}
            for q in document["questions"]]


def harness_bill(standin: StandIn, cache: bool, brain_prompt: str) -> Bill:
    questions = _questions()
    answers = harness.recorded_answers()[BRAIN]
    by_text = {q["question_text"]: q["question_id"] for q in questions}
    drafts = recordings("evalledger.suites.brain_eval")

    def respond(model: str, system: str, user: str) -> str:
        if model == BRAIN.split(":", 1)[1]:
            asked = user.rsplit("Question: ", 1)[1].strip()
            return answers[by_text[asked]]["text"]
        entry = drafts[next(s for s in JUDGES if s.endswith(":" + model))]
        return (entry["by_prompt_sha256"].get(prompt_sha256(system, user)) or entry["default"])["text"]

    standin.responder = respond
    bill = Bill()
    asked = [JudgeRequest(BRAIN, system=brain_prompt, user=harness.render_question(q), json_schema=harness.answer_schema(),
                          max_output_tokens=harness.MAX_OUTPUT_TOKENS, key=q["question_id"], cache=cache)
             for q in questions]
    answered = _run(standin, asked)
    bill.add(answered)  # the brain's own answers: --batch batches them when its provider has a batch API
    judged = []
    for q, call in zip(questions, answered):
        doc = repair_json(call.text)
        if doc is None:
            continue  # an answer that breaks the contract is not judged (EVAL-Q24 in the demo)
        system, user = harness.render_judge(q, doc)
        judged += [JudgeRequest(spec, system=system, user=user, json_schema=harness.suggestion_schema(),
                                key=(q["question_id"], spec), cache=cache) for spec in JUDGES]
    bill.add(_run(standin, judged))
    return bill


# --- the takes-quality run ------------------------------------------------------------------


def _rubric() -> Rubric:
    # The takes-quality rubric the ledger starts with (its latest seed), as tests/record_judges.py reads it.
    text = "".join(p.read_text("utf-8") for p in sorted((ROOT / "migrations").glob("*.sql")))
    found = re.findall(r"'takes-quality', '([^']+)', \$rubric\$(.*?)\$rubric\$", text, re.S)
    version, definition = found[-1]
    return Rubric(0, version, "", json.loads(definition))


def takes_bill(standin: StandIn, cache: bool, cycles: int) -> Bill:
    rubric = _rubric()
    sample = takes.sample_takes(takes.read_file(ROOT / "runner/evalledger/suites/takes_quality/fixtures/takes_demo.jsonl"),
                                seed=2026, limit=100, slug_prefix="demo/")
    system, user = prompts.render(rubric, sample, "demo/")
    verdicts = recordings("evalledger.suites.takes_quality")

    def respond(model: str, system: str, user: str) -> str:
        entry = verdicts[next(s for s in JUDGES if s.endswith(":" + model))]
        return (entry["by_prompt_sha256"].get(prompt_sha256(system, user)) or entry["default"])["text"]

    standin.responder = respond
    bill = Bill()
    for cycle in range(1, cycles + 1):  # a cycle's calls wait for the one before, as the run's do
        bill.add(_run(standin, [JudgeRequest(spec, system=system, user=user, json_schema=prompts.verdict_schema(rubric),
                                             max_output_tokens=1024, key=(cycle, spec), cache=cache)
                                for spec in JUDGES]))
    assert len(sample) == 12, len(sample)
    return bill


# --- the table ------------------------------------------------------------------------------


def measure(standin: StandIn, name: str, make) -> tuple[Bill, Bill]:
    standin.reset()
    standin.prompt_cache = False
    listed = make(False)
    standin.reset()
    cached = make(True)
    same = sorted(listed.replies) == sorted(cached.replies)
    print(f"{name:<46} {listed.calls:>5} {cached.input_tokens:>9,} {cached.cached:>9,} {cached.written:>8,} "
          f"{cached.output_tokens:>8,}  ${listed.usd:>8.4f}  ${cached.usd:>8.4f}  {cached.usd / listed.usd:>5.2f}  "
          f"${cached.batched_usd:>8.4f}  {cached.batched_usd / listed.usd:>5.2f}  "
          f"{cached.flag_batched_usd / listed.usd:>7.2f}  {'same' if same else 'DIFFERENT'}")
    return listed, cached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--what-if", action="store_true", help="also a long brain prompt and a 3-cycle takes run")
    parser.add_argument("--latency-ms", type=float, default=50, help="the stand-in's latency per call")
    args = parser.parse_args()
    prefix = len(harness.render_judge(_questions()[0], {"narrative": "", "claims": [], "proposed_actions": []})[0])
    print(f"shared prefixes (4 characters a token): brain system prompt {len(BRAIN_PROMPT) // 4} tokens, "
          f"brain-eval judge system text {prefix // 4}, the providers' minimum to cache 1,024")
    print(f"{'run':<46} {'calls':>5} {'input':>9} {'cached':>9} {'written':>8} {'output':>8}  {'list':>9}  "
          f"{'caching':>9}  {'ratio':>5}  {'batched':>9}  {'ratio':>5}  {'--batch':>7}  replies")
    with StandIn() as standin:
        def configured(make):
            def run(cache: bool) -> Bill:
                standin.latency_s = args.latency_ms / 1000
                return make(cache)
            return run

        measure(standin, "harness: 30 questions, brain + 3 judges",
                configured(lambda cache: harness_bill(standin, cache, BRAIN_PROMPT)))
        measure(standin, "takes-quality: 12 takes, 3 judges, 1 cycle",
                configured(lambda cache: takes_bill(standin, cache, 1)))
        if args.what_if:
            long_prompt = (BRAIN_PROMPT + "\n" + "Context every answer may use: the views' contracts and the "
                           "levers of this brain, as a production brain's prompt carries them.\n" * 70)[:6000]
            measure(standin, "what-if: harness, a 6,000-character brain prompt",
                    configured(lambda cache: harness_bill(standin, cache, long_prompt)))
            measure(standin, "what-if: takes-quality, 3 cycles",
                    configured(lambda cache: takes_bill(standin, cache, 3)))
    print("input counts every prompt token (cached and written ones included); list, caching and batched are the "
          "bill in USD at pricing.json's rates; ratio = each / list; --batch: the ratio with what --batch batches "
          "today (every call to a provider with a batch API, the harness brain's answers included); replies: the "
          "same replies in both runs")


if __name__ == "__main__":
    main()
