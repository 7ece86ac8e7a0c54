"""A batch the ledger wrote but never heard the provider's id for is adopted only when it is the
ledger's: Gemini's by its display_name, Anthropic's (which carries no metadata) by its size, its
time and, once it ends, its results' custom_ids (judges/batch.py, find). The real SDKs against the
stand-in; the ledger's side (the batch's row, its custom_ids, the ids other ledger batches were
submitted as) given as a resumed batch would carry it."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from evalledger.judges import batch
from evalledger.judges.providers import JudgeRequest

pytest_plugins = ["tests.standin.fixtures"]

CLAUDE = "anthropic:claude-opus-4-7"


def _lines(batch_id: int, n: int, spec: str = CLAUDE) -> list[dict]:
    return [batch.request_line(f"b{batch_id}-{k}", JudgeRequest(spec, system="Judge.", user=f"item {k}",
                                                                json_schema=None)) for k in range(1, n + 1)]


def _written(batch_id: int, n: int, *, ago_s: float = 0.0, known: frozenset[str] = frozenset()) -> batch._Open:
    """A ledger batch as a resumed run finds it: written ago_s seconds ago (the database's clock), never
    marked submitted."""
    created_at = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=ago_s)
    return batch._Open(batch_id, "anthropic", 1, None, None, {}, resumed=True, created_at=created_at,
                       custom_ids=frozenset(f"b{batch_id}-{k}" for k in range(1, n + 1)), known=known)


def _find(standin, provider: str, written: batch._Open, *, before=None) -> str | None:
    async def go():
        api = batch.api_for(provider, env=standin.env())
        api.poll_max_s = 0.2
        try:
            if before is not None:
                await before(api)
            return await api.find(written)
        finally:
            await api.aclose()

    return asyncio.run(go())


def _submit(standin, provider: str, batch_id: int, lines: list[dict]) -> str:
    [created] = _submit_each(standin, provider, {batch_id: lines})
    return created


def _submit_each(standin, provider: str, batches: dict[int, list[dict]]) -> list[str]:
    """Each batch submitted in turn through one client (a client of the SDK costs more to make than a
    submission to the stand-in)."""
    async def go():
        api = batch.api_for(provider, env=standin.env())
        try:
            return [await api.submit(batch_id, lines) for batch_id, lines in batches.items()]
        finally:
            await api.aclose()

    return asyncio.run(go())


def test_an_anthropic_batch_of_the_ledgers_custom_ids_is_adopted(standin):
    created = _submit(standin, "anthropic", 7, _lines(7, 2))
    assert _find(standin, "anthropic", _written(7, 2)) == created
    assert standin.batch_lists == 1


def test_an_anthropic_batch_of_the_same_size_with_other_custom_ids_is_not_adopted(standin):
    _submit(standin, "anthropic", 3, _lines(3, 2))  # another ledger's batch 3, or another tool's
    assert _find(standin, "anthropic", _written(7, 2)) is None


def test_an_anthropic_batch_of_another_size_is_not_waited_for(standin):
    standin.batch_delay_s = 60  # it would not end within the test
    _submit(standin, "anthropic", 7, _lines(7, 3))
    assert _find(standin, "anthropic", _written(7, 2)) is None


def test_an_anthropic_batch_created_before_the_ledger_wrote_it_is_not_a_candidate(standin):
    _submit(standin, "anthropic", 7, _lines(7, 2))
    # The ledger wrote its batch 7 an hour after the provider created that one: not its submission.
    written = _written(7, 2, ago_s=-3600)
    assert _find(standin, "anthropic", written) is None
    # Within the clock skew allowed, it is.
    assert _find(standin, "anthropic", _written(7, 2, ago_s=-(batch.CLOCK_SKEW_S - 60))) is not None


def test_an_anthropic_batch_the_ledger_knows_as_another_batchs_is_not_a_candidate(standin):
    standin.batch_delay_s = 60
    other = _submit(standin, "anthropic", 6, _lines(6, 2))  # the ledger's batch 6, still running
    # Not waited for: the ledger says it is batch 6's.
    assert _find(standin, "anthropic", _written(7, 2, known=frozenset({other}))) is None


def test_a_running_anthropic_candidate_is_waited_for_and_adopted_when_its_results_name_the_batch(standin):
    standin.batch_delay_s = 1.0
    created = _submit(standin, "anthropic", 7, _lines(7, 2))
    said = []

    async def listen(api):
        api.say = said.append

    assert _find(standin, "anthropic", _written(7, 2), before=listen) == created
    assert len(said) == 1 and created in said[0] and "waiting for them to end" in said[0]
    assert len(standin.batch_creates) == 1 and len(standin.requests_for("claude-opus-4-7")) == 2


def test_a_gemini_batch_is_found_by_its_display_name_across_pages(standin):
    lines = _lines(9, 1, "google:gemini-1.5-pro")
    wanted = _submit(standin, "google", 9, lines)
    # More than a page of the SDK's list (100) after it.
    _submit_each(standin, "google", {other: _lines(other, 1, "google:gemini-1.5-pro") for other in range(10, 115)})
    written = _written(9, 1)
    assert _find(standin, "google", written) == wanted
    assert standin.batch_lists == 2  # the second page read
    assert _find(standin, "google", _written(200, 1)) is None



@pytest.mark.parametrize("provider", ["openai", "google"])
def test_a_batch_named_for_the_ledger_batch_before_the_ledger_wrote_it_is_not_adopted(standin, provider):
    """OpenAI's metadata and Gemini's display_name name a ledger batch by its number: one created
    before the ledger wrote that batch (less the clock skew allowed) is another ledger's batch N."""
    spec = "openai:gpt-4o" if provider == "openai" else "google:gemini-1.5-pro"
    created = _submit(standin, provider, 7, _lines(7, 1, spec))
    assert _find(standin, provider, _written(7, 1, ago_s=-3600)) is None
    assert _find(standin, provider, _written(7, 1)) == created
