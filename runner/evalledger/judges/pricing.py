"""Token prices as data (pricing.json) and a spend cap that is safe under concurrency."""

from __future__ import annotations

import functools
import json
import math
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Iterable

from evalledger.core.errors import EvalledgerError

from .specs import ModelSpec, parse_model_spec

# Costs are sums of floats; a cap that allows exactly N calls must not refuse the
# Nth over a rounding error far below a cent.
_EPSILON_USD = 1e-9


class PricingNotFoundError(EvalledgerError):
    """A budget is set but a model has no price, so its cost cannot be capped."""


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Price]:
    raw = json.loads(resources.files(__package__).joinpath("pricing.json").read_text("utf-8"))
    return {k: Price(float(v["input"]), float(v["output"])) for k, v in raw["models"].items()}


def _normalise(spec: ModelSpec | str) -> ModelSpec:
    return parse_model_spec(spec) if isinstance(spec, str) else spec


def price_for(spec: ModelSpec | str) -> Price | None:
    """The price of a model (exact entry, else its provider's '*' entry), or None."""
    ms = _normalise(spec)
    table = _table()
    return table.get(ms.spec) or table.get(f"{ms.provider}:*")


def cost_of(spec: ModelSpec | str, input_tokens: int, output_tokens: int) -> float | None:
    """USD cost of a call, or None when the model has no price."""
    price = price_for(spec)
    if price is None:
        return None
    return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1_000_000


def estimate_tokens(text: str) -> int:
    """A deliberately rough input-token estimate: 4 characters a token, rounded up."""
    return math.ceil(len(text) / 4)


class Reservation:
    """Projected cost held against a budget until the call settles."""

    __slots__ = ("amount_usd", "settled")

    def __init__(self, amount_usd: float) -> None:
        self.amount_usd = amount_usd
        self.settled = False


class Budget:
    """A USD spend cap: reserve a call's projected cost before it, settle the real cost after.

    cap_usd=None tracks spend without a cap; cap_usd=0 allows nothing that costs money.
    reserve/settle never await, so under asyncio each is atomic; the lock makes them
    safe from threads too.
    """

    def __init__(self, cap_usd: float | None) -> None:
        if cap_usd is not None and (not math.isfinite(cap_usd) or cap_usd < 0):
            raise EvalledgerError(f"budget must be a non-negative number of USD, got {cap_usd!r}")
        self.cap_usd = cap_usd
        self._spent = 0.0
        self._reserved = 0.0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        return self._spent

    @property
    def reserved_usd(self) -> float:
        return self._reserved

    def check_prices(self, specs: Iterable[ModelSpec | str]) -> None:
        """Raise PricingNotFoundError naming the first model without a price."""
        for spec in specs:
            ms = _normalise(spec)
            if price_for(ms) is None:
                raise PricingNotFoundError(
                    f"no price for model {ms.spec!r} in pricing.json; a budget needs one for every model"
                )

    def reserve(self, spec: ModelSpec | str, input_tokens: int, output_tokens: int) -> Reservation | None:
        """Hold the projected cost of a call, or return None if it could pass the cap."""
        projected = cost_of(spec, input_tokens, output_tokens)
        with self._lock:
            if projected is None:
                if self.cap_usd is not None:
                    raise PricingNotFoundError(f"no price for model {_normalise(spec).spec!r} in pricing.json")
                projected = 0.0
            if self.cap_usd is not None and self._spent + self._reserved + projected > self.cap_usd + _EPSILON_USD:
                return None
            self._reserved += projected
            return Reservation(projected)

    def settle(self, reservation: Reservation, actual_usd: float | None) -> None:
        """Replace a reservation by what the call really cost (once)."""
        with self._lock:
            if reservation.settled:
                return
            reservation.settled = True
            self._reserved -= reservation.amount_usd
            if self._reserved < _EPSILON_USD:  # float residue of many +/- pairs
                self._reserved = 0.0
            self._spent += actual_usd or 0.0

    def __repr__(self) -> str:
        return f"Budget(cap_usd={self.cap_usd!r}, spent_usd={self._spent:.6f}, reserved_usd={self._reserved:.6f})"
