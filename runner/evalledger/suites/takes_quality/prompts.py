"""What the takes-quality judges see: the prompts rendered from the rubric row, the structured
output schema of a reply, and the fingerprints of both computed on this side.

- corpus_sha8: the takes block the judges saw (one JSON line per take, in sample order);
- prompt_sha8: the two prompt templates (system and user) as shipped.
The panel's models_sha8 and the rubric's rubric_sha8 are the database's (see store.py).
"""

from __future__ import annotations

import hashlib
from importlib import resources

import jinja2

from evalledger.core.rubric import Rubric

from . import corpus as takes

TEMPLATES = ("takes_quality_system.j2", "takes_quality_user.j2")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"), autoescape=False,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=False)


def template_source(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text("utf-8")


def sha8(text: str) -> str:
    """First 8 hex of the SHA-256 of text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def prompt_sha8() -> str:
    """Fingerprint of the prompt templates."""
    return sha8("\x00".join(template_source(name) for name in TEMPLATES))


def corpus_sha8(block: str) -> str:
    """Fingerprint of the takes block the judges saw."""
    return sha8(block)


def takes_block(sample: list[takes.Take]) -> str:
    """The takes as the judge sees them: one escaped JSON line each."""
    return "\n".join(t.as_prompt_line(i) for i, t in enumerate(sample, start=1))


def render(rubric: Rubric, sample: list[takes.Take], slug_prefix: str | None) -> tuple[str, str]:
    """(system, user) prompts rendered from the rubric row and the sample."""
    env = _environment()
    system = env.get_template(TEMPLATES[0]).render(rubric=rubric.definition)
    user = env.get_template(TEMPLATES[1]).render(takes=sample, takes_block=takes_block(sample),
                                                  slug_prefix=slug_prefix)
    return system.strip() + "\n", user.strip() + "\n"


def verdict_schema(rubric: Rubric) -> dict:
    """The structured-output schema of a judge's reply (strict-compatible)."""
    scale = rubric.definition["scale"]
    return {
        "title": "takes_quality_verdict",
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "properties": {d: {"type": "integer", "minimum": scale["min"], "maximum": scale["max"]}
                               for d in rubric.dims},
                "required": rubric.dims,
                "additionalProperties": False,
            },
            "feedback": {"type": "string"},
            "improvements": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["scores", "feedback", "improvements"],
        "additionalProperties": False,
    }
