"""A panel's provider SDKs are imported side by side, not one after the other: each judge's first
request waits for its own SDK only (issue 38, item 4). Asserted as behaviour (the imports overlap),
never as a timing; bench/panel_concurrency.py --only startup measures the times."""

from __future__ import annotations

import threading
import types

import pytest

from evalledger.judges import sdks


@pytest.fixture
def fresh_imports(monkeypatch):
    """sdks' import state as in a new process, with importlib.import_module replaced by `fake`."""
    monkeypatch.setattr(sdks, "_imports", {})
    monkeypatch.setattr(sdks, "_shared", None)
    monkeypatch.setattr(sdks, "_tls_context", lambda: None)
    events: list[tuple[str, str]] = []
    lock = threading.Lock()

    def install(sdk_import):
        def fake(name):
            with lock:
                events.append(("start", name))
            module = sdk_import(name) if name in ("openai", "anthropic") else types.ModuleType(name)
            with lock:
                events.append(("end", name))
            return module

        monkeypatch.setattr(sdks.importlib, "import_module", fake)
        return events

    return install


def test_the_sdks_of_a_panel_are_imported_side_by_side(fresh_imports):
    # Each SDK's import finishes only once the other's has started: imported one after the other,
    # the first would wait for ever (here: until the barrier's timeout breaks it).
    both_started = threading.Barrier(2, timeout=30)

    def sdk_import(name):
        both_started.wait()
        return types.ModuleType(name)

    events = fresh_imports(sdk_import)
    sdks.preload(["openai", "anthropic"])
    modules = [sdks._imports[name].result(timeout=60) for name in ("openai", "anthropic")]
    assert [m.__name__ for m in modules] == ["openai", "anthropic"]
    sdk_events = [e for e in events if e[1] in ("openai", "anthropic")]
    assert {e for e in sdk_events[:2]} == {("start", "openai"), ("start", "anthropic")}


def test_the_modules_both_sdks_share_are_whole_before_either_sdk_starts(fresh_imports):
    events = fresh_imports(lambda name: types.ModuleType(name))
    sdks.preload(["anthropic", "openai"])
    for name in ("anthropic", "openai"):
        sdks._imports[name].result(timeout=60)
    first_sdk = min(events.index(("start", name)) for name in ("openai", "anthropic"))
    shared_ends = [events.index(("end", name)) for name in sdks.SHARED_MODULES]
    assert max(shared_ends) < first_sdk


def test_an_sdk_that_fails_to_import_fails_only_its_own_provider(fresh_imports):
    def sdk_import(name):
        if name == "anthropic":
            raise ImportError("No module named 'anthropic'")
        return types.ModuleType(name)

    fresh_imports(sdk_import)
    sdks.preload(["openai", "anthropic"])
    assert sdks._imports["openai"].result(timeout=60).__name__ == "openai"
    with pytest.raises(ImportError):
        sdks._imports["anthropic"].result(timeout=60)


def test_each_sdk_is_imported_once_per_process(fresh_imports):
    events = fresh_imports(lambda name: types.ModuleType(name))
    sdks.preload(["openai"])
    sdks.preload(["openai", "openai"])
    sdks._imports["openai"].result(timeout=60)
    assert events.count(("start", "openai")) == 1
