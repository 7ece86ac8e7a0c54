"""--batch on, off and auto: whether a run's calls go as batches, and why not in words a resumed run
stopped for an unread batch says (judges/batch.py, BatchOptions and refuse_unbatched)."""

from __future__ import annotations

import pytest

from evalledger.core.errors import EvalledgerError
from evalledger.judges import batch
from evalledger.judges.batch import BatchOptions

DAY_S = 24 * 3600


@pytest.mark.parametrize(("mode", "kwargs", "because"), [
    ("on", {"gate": True, "deadline_s": 60, "providers": []}, ""),
    ("off", {"providers": ["openai"]}, "--batch off"),
    ("auto", {"gate": True, "providers": ["openai"]}, "a gate wants its answer now"),
    ("auto", {"providers": ["compat"]}, "no model the run asks has a batch API"),
    ("auto", {"deadline_s": DAY_S + 1800, "providers": ["openai", "google"]},
     "its rubric abandons it in 24.5 h, before a batch's 48 h window ends"),
    ("auto", {"deadline_s": DAY_S, "providers": ["openai", "compat"]}, ""),
    ("auto", {"deadline_s": None, "providers": ["anthropic"]}, ""),
])
def test_whether_a_run_is_batched_and_why_not(mode, kwargs, because):
    options = BatchOptions(mode)
    assert options.unbatched_because(**kwargs) == because
    assert options.batched(**kwargs) is (because == "")


@pytest.mark.parametrize(("mode", "because", "tail"), [
    ("off", "--batch off", "(asked again one by one they would be paid twice)"),
    ("auto", "a gate wants its answer now",
     "(asked again one by one they would be paid twice; --batch auto does not batch it now: a gate wants its "
     "answer now)"),
])
def test_a_resumed_run_with_an_unread_batch_is_stopped_saying_why_it_is_not_batched(monkeypatch, mode, because, tail):
    monkeypatch.setattr(batch.Ledger, "open_batches", lambda self: [{"batch_id": 7}, {"batch_id": 9}])
    with pytest.raises(EvalledgerError) as refused:
        batch.refuse_unbatched(None, "takes-quality", "12", BatchOptions(mode), because)
    assert str(refused.value) == ("run 12 has calls in batch 7, 9 whose results are not read yet: run the same "
                                  "command with --batch to read them " + tail)


def test_a_resumed_run_without_an_unread_batch_goes_on(monkeypatch):
    monkeypatch.setattr(batch.Ledger, "open_batches", lambda self: [])
    assert batch.refuse_unbatched(None, "takes-quality", "12", BatchOptions("auto"), "a gate wants its answer now") is None
