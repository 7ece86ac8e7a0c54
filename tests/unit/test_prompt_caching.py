"""The providers' prompt caches, through the real SDKs against the stand-in (issue 38, items 2, 3
and 5): what a run's calls share goes first and is marked for the cache; the cached tokens each
provider reports, in its own way, are counted once and priced at the cached rate."""

from __future__ import annotations

import asyncio
import math
from decimal import Decimal

import pytest

from evalledger.judges import money
from evalledger.judges.pricing import cost_of, price_for
from evalledger.judges.providers import JudgeRequest, run_calls

pytest_plugins = ["tests.standin.fixtures"]

# A shared prefix past the providers' 1,024-token minimum (the stand-in counts 4 characters a token).
SYSTEM = "You judge takes against the rubric below, strictly and literally.\n" + "".join(
    f"- rule {n}: a take that breaks rule {n} loses a point on the dimension it names.\n" for n in range(90))
SCHEMA = {"title": "verdict", "type": "object", "properties": {"score": {"type": "integer"}},
          "required": ["score"], "additionalProperties": False}


def _calls(standin, spec: str, items: list[str], cache: bool = True):
    """One call per item, one after the other (so each finds the cache the last one left)."""
    results = []
    for item in items:
        request = JudgeRequest(spec, system=SYSTEM, user=f"The take: {item}", json_schema=SCHEMA, cache=cache)
        results += asyncio.run(run_calls([request], timeout_s=10, env=standin.env()))
    return results


def test_the_shared_prefix_is_long_enough_to_be_cached():
    assert len(SYSTEM) // 4 >= 1024


def test_openai_counts_cached_tokens_inside_prompt_tokens_and_gets_a_stable_cache_key(standin):
    first, second, third = _calls(standin, "openai:gpt-4o", ["one", "two", "three"])
    assert first.cached_input_tokens == 0 and first.cache_write_tokens == 0
    for later in (second, third):
        assert later.ok and 1024 <= later.cached_input_tokens <= later.input_tokens
        assert later.cached_input_tokens % 128 == 0 and later.cache_write_tokens == 0
        # prompt_tokens as OpenAI reports it: the cached tokens are inside it, not on top.
        assert later.input_tokens == math.ceil((len(SYSTEM) + len("The take: two")) / 4) + 7
    bodies = [r.body for r in standin.requests]
    assert len({b["prompt_cache_key"] for b in bodies}) == 1
    assert bodies[0]["prompt_cache_key"].startswith("evalledger-")
    # The cost is billed: the cached tokens at the cached rate, the rest at the input rate.
    price = price_for("openai:gpt-4o")
    fresh = second.input_tokens - second.cached_input_tokens
    assert second.cost_usd == pytest.approx((fresh * price.input_per_mtok + second.cached_input_tokens
                                             * price.cached_input_per_mtok + second.output_tokens
                                             * price.output_per_mtok) / 1e6)
    assert second.cost_usd < cost_of("openai:gpt-4o", second.input_tokens, second.output_tokens)


def test_anthropic_reports_cache_reads_and_writes_beside_input_tokens_and_they_are_counted_once(standin):
    first, second = _calls(standin, "anthropic:claude-opus-4-7", ["one", "two"])
    prefix = math.ceil(len(SYSTEM) / 4)
    total = math.ceil((len(SYSTEM) + len("The take: one")) / 4) + 7
    # The first call writes the prefix to the cache, the second reads it.
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens) == (total, 0, prefix)
    assert (second.input_tokens, second.cached_input_tokens, second.cache_write_tokens) == (total, prefix, 0)
    for seen in standin.requests:
        assert seen.body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    price = price_for("anthropic:claude-opus-4-7")
    assert first.cost_usd == pytest.approx(((total - prefix) * price.input_per_mtok + prefix * price.cache_write_per_mtok
                                            + first.output_tokens * price.output_per_mtok) / 1e6)
    assert second.cost_usd == pytest.approx(((total - prefix) * price.input_per_mtok
                                             + prefix * price.cached_input_per_mtok
                                             + second.output_tokens * price.output_per_mtok) / 1e6)


def test_a_request_not_marked_for_the_cache_writes_nothing_to_it(standin):
    calls = _calls(standin, "anthropic:claude-opus-4-7", ["one", "two"], cache=False)
    assert [(c.cached_input_tokens, c.cache_write_tokens) for c in calls] == [(0, 0), (0, 0)]
    assert all(r.body["system"] == SYSTEM for r in standin.requests)


def test_gemini_through_its_openai_api_reports_cached_tokens_as_openai_does_and_gets_no_openai_parameter(standin):
    first, second = _calls(standin, "google:gemini-2.5-flash", ["one", "two"])
    assert first.cached_input_tokens == 0 and second.cached_input_tokens >= 1024
    assert all("prompt_cache_key" not in r.body for r in standin.requests)


def test_the_exact_cost_the_ledger_is_given_prices_each_token_class():
    usage = money.billed("anthropic:claude-opus-4-7", input_tokens=3000, cached_input_tokens=2000,
                         cache_write_tokens=500, output_tokens=100)
    assert usage["price_input"] == Decimal("5.0") and usage["price_cached_input"] == Decimal("0.5")
    assert usage["price_cache_write"] == Decimal("6.25") and usage["price_as_of"] is not None
    assert money.cost("anthropic:claude-opus-4-7", 3000, 100, 2000, 500) == (
        Decimal(500) * 5 + Decimal(2000) * Decimal("0.5") + Decimal(500) * Decimal("6.25") + 100 * 25) / 1_000_000
    recorded = money.billed("openai:gpt-4o", input_tokens=10, cached_input_tokens=0, cache_write_tokens=0,
                            output_tokens=1, recorded=True)
    assert recorded["price_input"] is None and recorded["price_as_of"] is None


def test_every_price_knows_each_token_class_and_the_day_it_was_taken():
    from evalledger.judges.pricing import prices

    for spec, price in prices().items():
        assert price.as_of is not None, spec
        assert None not in (price.cached_input_per_mtok, price.cache_write_per_mtok, price.batch_input_per_mtok,
                            price.batch_output_per_mtok), spec
        assert price.cached_input_per_mtok <= price.input_per_mtok <= price.cache_write_per_mtok, spec
        assert price.batch_input_per_mtok <= price.input_per_mtok, spec
