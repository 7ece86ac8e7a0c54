"""Money as the ledger stores it: exact decimals from token counts and prices (pricing.json),
rounded only where a person reads them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .pricing import Price, estimate_tokens, price_for
from .specs import ModelSpec

_MILLION = Decimal(1_000_000)


def _dec(value: float) -> Decimal:
    # Prices are short decimals in JSON (2.5, 0.075): their repr is the number that was written.
    return Decimal(repr(value))


def cost(spec: ModelSpec | str, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
         cache_write_tokens: int = 0, batch: bool = False) -> Decimal | None:
    """USD cost of a call as billed, exactly, or None when the model has no price (see
    pricing.cost_of for how the prompt tokens are counted; batch: at the batch API's rates)."""
    price = price_for(spec, batch)
    if price is None:
        return None
    rates = _rates(price)
    fresh = max(0, input_tokens - cached_input_tokens - cache_write_tokens)
    return (fresh * rates["price_input"] + cached_input_tokens * rates["price_cached_input"]
            + cache_write_tokens * rates["price_cache_write"]
            + output_tokens * rates["price_output"]) / _MILLION


def _rates(price: Price) -> dict[str, Decimal]:
    return {"price_input": _dec(price.input_per_mtok),
            "price_cached_input": _dec(price.cached_input),
            "price_cache_write": _dec(price.cache_write),
            "price_output": _dec(price.output_per_mtok)}


NO_PRICE = {"price_input": None, "price_cached_input": None, "price_cache_write": None,
            "price_output": None, "price_as_of": None}


def billed(spec: ModelSpec | str, *, input_tokens: int, cached_input_tokens: int, cache_write_tokens: int,
           output_tokens: int, recorded: bool = False, batch: bool = False) -> dict[str, Any]:
    """A call's usage and the price it is billed at, as a call row stores them: the database
    computes the row's cost from them (call_cost_v1). A call made through a batch API is billed at
    its batch rates (pricing.Price.batched). A recorded reply, or a model without a price, stores no
    price (and its cost is 0)."""
    price = None if recorded else price_for(spec, batch)
    usage = {"input_tokens": input_tokens, "cached_input_tokens": cached_input_tokens,
             "cache_write_tokens": cache_write_tokens, "output_tokens": output_tokens}
    if price is None:
        return {**usage, **NO_PRICE}
    return {**usage, **_rates(price), "price_as_of": price.as_of}


def billed_query(name: str, usage: dict[str, Any]) -> str:
    """The named query that stores a call row with this usage: `name` for a row with nothing to bill
    beyond its input and output tokens (a recorded reply, an unpriced model: written as before the
    ledger knew token classes), `name`_billed for one with a price or cached tokens."""
    billed = usage["price_input"] is not None or usage["cached_input_tokens"] or usage["cache_write_tokens"]
    return f"{name}_billed" if billed else name


def estimate(spec: ModelSpec | str, system: str, user: str, max_output_tokens: int, batch: bool = False) -> Decimal:
    """What a call may cost before it is made: its prompt at 4 characters a token, at the dearer of
    the input and cache-write rates (a cache read only lowers it), and every output token it may use
    (0 for a model without a price: nothing to count it in)."""
    price = price_for(spec, batch)
    if price is None:
        return Decimal(0)
    prompt = estimate_tokens(system) + estimate_tokens(user)
    written = prompt if price.cache_write > price.input_per_mtok else 0
    return cost(spec, prompt, max_output_tokens, cache_write_tokens=written, batch=batch)  # type: ignore[return-value]
