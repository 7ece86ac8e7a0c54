"""Judge prompts against the models' context windows (context.json): a warning before a prompt a
model would not fit, and the --max-prompt-chars refusal before any call or row."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Callable, Iterable

from evalledger.core.errors import EvalledgerError

from .pricing import estimate_tokens
from .specs import ModelSpec

# About 100,000 tokens: it fits every model of the default panels, and refuses a sample that
# would send megabytes of takes to each judge in one prompt.
DEFAULT_MAX_PROMPT_CHARS = 400_000


@functools.cache
def _windows() -> dict[str, int]:
    raw = json.loads(resources.files(__package__).joinpath("context.json").read_text("utf-8"))
    return {k: int(v) for k, v in raw["models"].items()}


def context_window(spec: ModelSpec) -> int | None:
    """The model's context window in tokens, or None when evalledger does not know it."""
    return _windows().get(spec.spec)


def check_prompt(specs: Iterable[ModelSpec], system: str, user: str, *, max_output_tokens: int,
                 max_chars: int, warn: Callable[[str], None], what: str) -> None:
    """Refuse a prompt over max_chars (naming --max-prompt-chars and `what` to shrink); warn about
    each model whose context the prompt and its reply would not fit."""
    size = len(system) + len(user)
    tokens = estimate_tokens(system) + estimate_tokens(user)
    if size > max_chars:
        raise EvalledgerError(f"--max-prompt-chars: the judge prompt is {size:,} characters (about {tokens:,} "
                              f"tokens), over the limit of {max_chars:,}: {what}, or raise --max-prompt-chars")
    for spec in specs:
        window = context_window(spec)
        if window is not None and tokens + max_output_tokens > window:
            warn(f"the judge prompt is about {tokens:,} tokens: with a reply of up to {max_output_tokens:,} it "
                 f"does not fit the {window:,}-token context of {spec.spec}, which will likely refuse it")
