"""Token prices as data (pricing.json) and a spend cap that is safe under concurrency."""

from __future__ import annotations

import datetime
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
    """USD per million tokens of each class as the provider bills it, and the day it was taken.

    A call's prompt tokens are counted the one way evalledger stores them, whatever the provider
    reports (sdks.Reply): input_tokens is every prompt token, of which cached_input_tokens were read
    from the provider's cache and cache_write_tokens written to it; the rest are billed at input.
    """

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None  # None: as input (no cache discount known)
    cache_write_per_mtok: float | None = None  # None: as input
    batch_input_per_mtok: float | None = None
    batch_output_per_mtok: float | None = None
    as_of: datetime.date | None = None

    @property
    def cached_input(self) -> float:
        return self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok

    @property
    def cache_write(self) -> float:
        return self.input_per_mtok if self.cache_write_per_mtok is None else self.cache_write_per_mtok

    def batched(self) -> "Price":
        """The rates of a call made through the provider's batch API: batch_input and batch_output
        (list price when pricing.json has none), and the cache's read and write rates scaled by the
        same discount as input (the providers' discounts stack: Anthropic bills a cache read in a
        batch at a tenth of the batch input rate)."""
        batch_in = self.input_per_mtok if self.batch_input_per_mtok is None else self.batch_input_per_mtok
        batch_out = self.output_per_mtok if self.batch_output_per_mtok is None else self.batch_output_per_mtok
        scale = batch_in / self.input_per_mtok if self.input_per_mtok else 1.0
        return Price(batch_in, batch_out, self.cached_input * scale, self.cache_write * scale,
                     batch_in, batch_out, self.as_of)


def _price(entry: dict) -> Price:
    def rate(name: str) -> float | None:
        value = entry.get(name)
        if value is None:
            return None
        value = float(value)
        if not (math.isfinite(value) and value >= 0):
            raise EvalledgerError(f"pricing.json: {name} {entry.get(name)!r} is not a price (0 or more USD)")
        return value

    as_of = entry.get("as_of")
    return Price(rate("input"), rate("output"), rate("cached_input"), rate("cache_write"),  # type: ignore[arg-type]
                 rate("batch_input"), rate("batch_output"),
                 datetime.date.fromisoformat(as_of) if as_of else None)


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Price]:
    raw = json.loads(resources.files(__package__).joinpath("pricing.json").read_text("utf-8"))
    return {k: _price(v) for k, v in raw["models"].items()}


def prices() -> dict[str, Price]:
    """Every price pricing.json knows, by model spec (or 'provider:*')."""
    return dict(_table())


# A price older than this is one to check again (doctor warns): providers change their prices.
PRICE_MAX_AGE_DAYS = 90


def price_age(today: datetime.date) -> tuple[bool, str]:
    """(fresh, what to say) of pricing.json's oldest price on `today` (the database's day, for
    doctor): fresh while it was taken at most PRICE_MAX_AGE_DAYS days before."""
    oldest = oldest_price()
    if oldest is None:
        return False, "no price in pricing.json says the day it was taken"
    spec, day = oldest
    age = (today - day).days
    if age > PRICE_MAX_AGE_DAYS:
        return False, (f"the oldest price (of {spec}) was taken on {day.isoformat()}, {age} days ago (over "
                       f"{PRICE_MAX_AGE_DAYS}): the costs the ledger records may no longer be what the providers "
                       "bill; check runner/evalledger/judges/pricing.json against their price lists and upgrade "
                       "evalledger (or correct the prices and their as_of)")
    return True, f"the oldest price (of {spec}) was taken on {day.isoformat()}, {age} days ago"


def oldest_price() -> tuple[str, datetime.date] | None:
    """The model whose price was taken longest ago, and that day (None: no price says its day)."""
    dated = [(p.as_of, spec) for spec, p in _table().items() if p.as_of is not None]
    if not dated:
        return None
    day, spec = min(dated)
    return spec, day


def _normalise(spec: ModelSpec | str) -> ModelSpec:
    return parse_model_spec(spec) if isinstance(spec, str) else spec


def price_for(spec: ModelSpec | str, batch: bool = False) -> Price | None:
    """The price of a model (exact entry, else its provider's '*' entry), or None; with batch, the
    rates of its provider's batch API (Price.batched)."""
    ms = _normalise(spec)
    table = _table()
    price = table.get(ms.spec) or table.get(f"{ms.provider}:*")
    return price.batched() if batch and price is not None else price


def cost_of(spec: ModelSpec | str, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
            cache_write_tokens: int = 0, batch: bool = False) -> float | None:
    """USD cost of a call as billed, or None when the model has no price: of its input_tokens (every
    prompt token), cached_input_tokens at the cached rate, cache_write_tokens at the cache-write
    rate, the rest at the input rate (each at its batch rate for a call made in a batch)."""
    price = price_for(spec, batch)
    if price is None:
        return None
    fresh = max(0, input_tokens - cached_input_tokens - cache_write_tokens)
    return (fresh * price.input_per_mtok + cached_input_tokens * price.cached_input
            + cache_write_tokens * price.cache_write + output_tokens * price.output_per_mtok) / 1_000_000


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
        price = price_for(spec)
        # At the dearer of the input and cache-write rates: a call may write its prompt to the cache.
        written = input_tokens if price is not None and price.cache_write > price.input_per_mtok else 0
        projected = cost_of(spec, input_tokens, output_tokens, cache_write_tokens=written)
        if projected is None:
            if self.cap_usd is not None:
                raise PricingNotFoundError(f"no price for model {_normalise(spec).spec!r} in pricing.json")
            projected = 0.0
        return self.hold(projected)

    def hold(self, amount_usd: float, *, owed: bool = False) -> Reservation | None:
        """Hold a cost already projected (a batch request's, at the batch rates), or return None if
        it could pass the cap. owed: a cost the run pays whatever the cap says (a request an earlier
        command submitted, which the provider bills whether it is read or not), held all the same, so
        that no call after it is made that the cap cannot hold beside it."""
        with self._lock:
            if (not owed and self.cap_usd is not None
                    and self._spent + self._reserved + amount_usd > self.cap_usd + _EPSILON_USD):
                return None
            self._reserved += amount_usd
            return Reservation(amount_usd)

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
