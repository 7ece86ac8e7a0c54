"""Model specs and providers: which judge, which family, which credentials (no SDK imported here)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping

from evalledger.core.errors import EvalledgerError

GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
# Gemini's own API (its batch mode, which the OpenAI-compatible endpoint lacks), through the
# google-genai SDK; GOOGLE_GEMINI_BASE_URL is the SDK's own variable for it.
GEMINI_NATIVE_URL_VAR = "GOOGLE_GEMINI_BASE_URL"
GEMINI_NATIVE_URL = "https://generativelanguage.googleapis.com/"


@dataclass(frozen=True)
class _Provider:
    sdk: str  # "openai" or "anthropic"
    key_vars: tuple[str, ...]
    url_var: str
    default_url: str | None  # None: the base URL must be configured
    key_required: bool


_PROVIDERS: dict[str, _Provider] = {
    "openai": _Provider("openai", ("OPENAI_API_KEY",), "OPENAI_BASE_URL", "https://api.openai.com/v1", True),
    "anthropic": _Provider("anthropic", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", "https://api.anthropic.com", True),
    "google": _Provider("openai", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GEMINI_BASE_URL", GEMINI_OPENAI_URL, True),
    "vllm": _Provider("openai", ("VLLM_API_KEY",), "VLLM_BASE_URL", None, False),
    "ollama": _Provider("openai", ("OLLAMA_API_KEY",), "OLLAMA_BASE_URL", None, False),
    "compat": _Provider("openai", ("COMPAT_API_KEY",), "COMPAT_BASE_URL", None, False),
}
PROVIDERS = tuple(_PROVIDERS)
_NO_KEY = "no-key"


class MissingCredentialsError(EvalledgerError):
    """A provider in the panel has no API key or base URL configured."""


# --- model specs -------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """A judge model: provider, model name, family, and the normalised 'provider:model'."""

    provider: str
    model: str
    family: str
    spec: str

    def __str__(self) -> str:
        return self.spec


_SEPARATOR = re.compile(r"[:/]")


def parse_model_spec(text: str) -> ModelSpec:
    """Parse 'provider:model' or 'provider/model'; the first separator splits, so
    'ollama/llama3:8b' and 'vllm:meta-llama/Llama-3-8B' both keep their model intact."""
    raw = text.strip() if isinstance(text, str) else ""
    m = _SEPARATOR.search(raw)
    if not m or m.start() == 0 or m.end() == len(raw) or any(c.isspace() for c in raw):
        raise EvalledgerError(f"malformed model spec {text!r}: expected provider:model or provider/model")
    provider, model = raw[: m.start()].lower(), raw[m.end() :]
    if provider not in _PROVIDERS:
        raise EvalledgerError(
            f"unknown provider {provider!r} in model spec {text!r}: expected one of {', '.join(PROVIDERS)}"
        )
    return ModelSpec(provider=provider, model=model, family=provider, spec=f"{provider}:{model}")


def _as_spec(spec: ModelSpec | str) -> ModelSpec:
    return parse_model_spec(spec) if isinstance(spec, str) else spec


# --- configuration -----------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderConfig:
    """Where and how to reach one provider; the key stays out of repr."""

    provider: str
    base_url: str
    api_key: str = field(repr=False)


def _key(info: _Provider, env: Mapping[str, str]) -> str | None:
    return next((env[v] for v in info.key_vars if env.get(v)), None)


def has_live_credentials(spec: ModelSpec | str, env: Mapping[str, str] | None = None) -> bool:
    """True when the environment configures the spec's provider well enough for a live call."""
    env = os.environ if env is None else env
    info = _PROVIDERS[_as_spec(spec).provider]
    has_url = bool(env.get(info.url_var) or info.default_url)
    return has_url and (bool(_key(info, env)) or not info.key_required)


def provider_config(provider: str, env: Mapping[str, str] | None = None) -> ProviderConfig:
    """Resolve one provider's base URL and key from the environment, or raise naming the variable."""
    env = os.environ if env is None else env
    info = _PROVIDERS[provider]
    base_url = env.get(info.url_var) or info.default_url
    if not base_url:
        raise MissingCredentialsError(f"provider {provider!r} needs {info.url_var} (the server's base URL)")
    key = _key(info, env)
    if not key:
        if info.key_required:
            raise MissingCredentialsError(f"provider {provider!r} needs {' or '.join(info.key_vars)}")
        key = _NO_KEY  # the SDK insists on a key; keyless local servers ignore it
    return ProviderConfig(provider=provider, base_url=base_url, api_key=key)


def gemini_native_config(env: Mapping[str, str] | None = None) -> ProviderConfig:
    """Where Gemini's own API is (GOOGLE_GEMINI_BASE_URL, else Google's), with the google provider's
    key: the batch mode goes there, the synchronous calls to the OpenAI-compatible endpoint."""
    env = os.environ if env is None else env
    key = provider_config("google", env).api_key
    return ProviderConfig(provider="google", base_url=env.get(GEMINI_NATIVE_URL_VAR) or GEMINI_NATIVE_URL, api_key=key)
