"""work-quality prompts and panel, without a database: the rubric row's template, the evidence
message, the structured-output schema, the default cross-family panel."""

from __future__ import annotations

import json
import re
from decimal import Decimal

from evalledger.core.paths import sql_path
from evalledger.judges.panel import parse_panel
from evalledger.suites.work_quality import run as wq, store
from evalledger.suites.work_quality.snapshot import DIMENSIONS, Metrics

PACKAGE = "evalledger.suites.work_quality"


def shipped_rubric() -> store.Rubric:
    """The v1.0 rubric as the migration inserts it (the JSON between the $rubric$ quotes)."""
    sql = sql_path(PACKAGE, "work_quality_rubric_v1.sql").read_text("utf-8")
    definition = json.loads(re.search(r"\$rubric\$(.*)\$rubric\$", sql, re.DOTALL).group(1))
    return store.Rubric(rubric_id=1, version=definition["version"], fingerprint="0" * 64, definition=definition)


def render(prev=None):
    return wq.render(shipped_rubric(), kind="bot", name="review-pr", persona="Revi", task="find the planted bug",
                     outcome="status=finished", metrics=Metrics(cost_usd=0.12, tokens=3456, duration_ms=9000),
                     work_product="DIFF: +func Foo()\n", prev=prev)


def test_the_rubric_row_holds_the_seeds_seven_dimensions_and_the_policy():
    definition = shipped_rubric().definition
    assert [d["key"] for d in definition["dimensions"]] == list(DIMENSIONS)
    assert definition["scale"] == {"min": 0, "max": 1}
    assert definition["compare"] == {"same_band": 0.05, "regress_tolerance": 0.08}


def test_first_snapshot_prompt_asks_for_no_relative_judgement():
    system, user = render()
    assert all(f"- {d}: " in system for d in DIMENSIONS)
    assert "no previous assessment" in system and "PREVIOUS" not in system
    for want in ("kind: bot", "name: review-pr", "persona: Revi", "find the planted bug", "status=finished",
                 "cost_usd: 0.1200", "tokens: 3456", "duration_ms: 9000", "DIFF: +func Foo()", "first snapshot"):
        assert want in user


def test_with_a_previous_snapshot_the_prompt_shows_its_scores_price_digest_and_narrative():
    prev = {"run_id": "run-a", "mean_scores": {"overall": Decimal("0.825"), "efficacy": 0.5},
            "cost_usd": Decimal("0.04"), "tokens": 100, "duration_ms": 2000, "evidence_digest": "1 file changed",
            "narrative": "Fixed it."}
    system, user = render(prev)
    assert "PREVIOUS assessment" in system and "relative_vs_prev" in system
    assert "prev_run_id: run-a\nprev_mean_scores:\n  efficacy: 0.50\n  overall: 0.82\n" in user
    assert "prev_cost_usd: 0.0400\nprev_tokens: 100\nprev_duration_ms: 2000\n" in user
    assert "prev_evidence_digest: 1 file changed\nprev_narrative: Fixed it.\n" in user
    assert "first snapshot" not in user


def test_the_reply_schema_is_flat_and_strict():
    schema = wq.verdict_schema()
    assert set(DIMENSIONS) <= set(schema["properties"]) and schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    relative = schema["properties"]["relative_vs_prev"]
    assert relative["required"] == list(DIMENSIONS) and relative["additionalProperties"] is False
    assert relative["properties"]["overall"]["enum"] == ["better", "same", "worse", "n/a"]


def test_the_default_panel_spans_two_families_and_the_environment_overrides_it(monkeypatch):
    monkeypatch.delenv(wq.MODELS_ENV, raising=False)
    assert len({s.family for s in parse_panel(wq.panel_text(None))}) == 2
    monkeypatch.setenv(wq.MODELS_ENV, "openai/gpt-5-mini, anthropic/claude-haiku-4-5 ")
    assert [s.spec for s in parse_panel(wq.panel_text(None))] == ["openai:gpt-5-mini", "anthropic:claude-haiku-4-5"]
    assert [s.spec for s in parse_panel(wq.panel_text("vllm:llama"))] == ["vllm:llama"]
    monkeypatch.setenv(wq.MODELS_ENV, "  ")
    assert wq.panel_text(None) == wq.DEFAULT_MODELS
