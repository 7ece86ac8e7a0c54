"""Regenerate the work-quality suite's recorded judge replies (fixtures/recorded_judges.json).

    .venv/bin/python -m tests.record_work_quality_judges

The demo judges two runs of one bot. The first run's prompt has no previous snapshot, so its
replies are each model's default. The second run's prompt shows the first snapshot (its means,
price, digest and first narrative): its replies are keyed by that prompt's SHA-256, which this
script computes the way the runner renders it. The first snapshot's means are the database's
(numeric means of the default replies), mirrored here; tests/e2e/test_work_quality_cli.py's demo
test fails if the second run ever falls back to the defaults.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from evalledger.judges.panel import prompt_sha256
from evalledger.suites.work_quality import demo, evidence, go_json, run as wq
from evalledger.suites.work_quality.snapshot import DIMENSIONS

OUT = Path(wq.__file__).with_name("fixtures") / "recorded_judges.json"

FIRST = {
    "openai:gpt-4o": dict(
        scores=dict(efficacy=0.85, completeness=0.8, output_quality=0.85, restraint=0.9, reliability=0.85,
                    value_for_money=0.9, overall=0.85),
        narrative="The diff fixes the slice bound (start + per_page - 1 became start + per_page), which is the "
                  "off-by-one the task names. The added test walks every page and asserts each item appears "
                  "exactly once, so it would have failed before the fix. The change is two lines plus one test: "
                  "no churn. Two iterations and four cents is excellent value.",
        confidence=0.85),
    "anthropic:claude-opus-4-7": dict(
        scores=dict(efficacy=0.8, completeness=0.8, output_quality=0.8, restraint=0.85, reliability=0.8,
                    value_for_money=0.85, overall=0.8),
        narrative="A minimal, correct fix of the slice end with a property-style test over all pages. The test "
                  "does not cover an empty list or a page past the end, so completeness is good rather than "
                  "perfect. Cheap and quick for what it delivers.",
        confidence=0.8),
}
SECOND = {
    "openai:gpt-4o": dict(
        scores=dict(efficacy=0.2, completeness=0.25, output_quality=0.3, restraint=0.15, reliability=0.4,
                    value_for_money=0.1, overall=0.2),
        narrative="The bug is still there: Paginator.page keeps `start + self.per_page - 1`. The test was "
                  "edited to expect the wrong two-item page, so it now asserts the bug. The module was rewritten "
                  "into an unrequested class with a TODO in place of the bounds check. Seven iterations and 32 "
                  "cents for a facade is poor value.",
        relative="worse",
        relative_narrative="The previous run fixed the bug with a real test; this one keeps the bug and bends the "
                           "test to it, at seven times the price.",
        confidence=0.9),
    "anthropic:claude-opus-4-7": dict(
        scores=dict(efficacy=0.25, completeness=0.2, output_quality=0.35, restraint=0.2, reliability=0.45,
                    value_for_money=0.15, overall=0.25),
        narrative="A facade: the off-by-one survives in the new class and the test now expects it. The rewrite "
                  "adds a class nobody asked for and drops the argument validation. The cost rose sharply while "
                  "the result got worse.",
        relative="worse",
        relative_narrative="Clearly worse than the previous run on every dimension that matters.",
        confidence=0.85),
}


def reply(entry: dict, has_prev: bool) -> dict:
    body = {**entry["scores"], "narrative": entry["narrative"], "confidence": entry["confidence"],
            "relative_vs_prev": {d: entry.get("relative", "n/a") if has_prev else "n/a" for d in DIMENSIONS},
            "relative_narrative": entry.get("relative_narrative", "")}
    text = json.dumps(body)
    return {"text": text, "input_tokens": 2400, "output_tokens": len(text) // 4}


def first_snapshot_as_prompt_shows_it() -> dict:
    run_id, work_product, metrics, _ = demo.DEMO_RUNS[0]
    opts = demo.demo_options(run_id, work_product, metrics, "")
    m = wq.read_metrics(opts.metrics)
    means = {d: sum(Decimal(str(FIRST[s]["scores"][d])) for s in FIRST) / len(FIRST) for d in DIMENSIONS}
    return {"run_id": run_id, "mean_scores": means, "cost_usd": Decimal(str(m.cost_usd)), "tokens": m.tokens,
            "duration_ms": m.duration_ms,
            "evidence_digest": go_json.portable_text(evidence.gather(opts.work_product).digest),
            "narrative": FIRST[wq.DEFAULT_MODELS.split(",")[0]]["narrative"]}


def main() -> None:
    from evalledger.core import db
    from evalledger.suites.work_quality import store

    run_id, work_product, metrics, outcome = demo.DEMO_RUNS[1]
    opts = demo.demo_options(run_id, work_product, metrics, outcome)
    with db.transaction("runner") as conn:  # the rubric row as migrated (its system prompt template)
        rubric = store.rubric(conn)
    system, user = wq.render(rubric, kind=opts.kind, name=opts.name, persona=opts.persona, task=opts.task,
                             outcome=opts.outcome, metrics=wq.read_metrics(opts.metrics),
                             work_product=evidence.gather(opts.work_product).text,
                             prev=first_snapshot_as_prompt_shows_it())
    key = prompt_sha256(system, user)
    models = {spec: {"default": reply(FIRST[spec], False), "by_prompt_sha256": {key: reply(SECOND[spec], True)}}
              for spec in FIRST}
    OUT.write_text(json.dumps({"about": "Recorded judge replies for the work-quality demo and offline runs "
                                        "(tests/record_work_quality_judges.py); not live calls.",
                               "models": models}, indent=2) + "\n")
    print(f"wrote {OUT} (second-run prompt {key[:12]})")


if __name__ == "__main__":
    main()
