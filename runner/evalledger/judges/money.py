"""Money as the ledger stores it: exact decimals from token counts and prices (pricing.json),
rounded only where a person reads them."""

from __future__ import annotations

from decimal import Decimal

from .pricing import estimate_tokens, price_for
from .specs import ModelSpec

_MILLION = Decimal(1_000_000)


def _dec(value: float) -> Decimal:
    # Prices are short decimals in JSON (2.5, 0.075): their repr is the number that was written.
    return Decimal(repr(value))


def cost(spec: ModelSpec | str, input_tokens: int, output_tokens: int) -> Decimal | None:
    """USD cost of a call, exactly, or None when the model has no price."""
    price = price_for(spec)
    if price is None:
        return None
    return (input_tokens * _dec(price.input_per_mtok) + output_tokens * _dec(price.output_per_mtok)) / _MILLION


def estimate(spec: ModelSpec | str, system: str, user: str, max_output_tokens: int) -> Decimal:
    """What a call may cost before it is made: its prompt at 4 characters a token and every output
    token it may use (0 for a model without a price: nothing to count it in)."""
    found = cost(spec, estimate_tokens(system) + estimate_tokens(user), max_output_tokens)
    return found if found is not None else Decimal(0)
