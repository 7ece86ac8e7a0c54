"""Local HTTP stand-in of the OpenAI and Anthropic APIs that the real SDKs talk to."""

from . import steps
from .server import DEFAULT_DIMENSIONS, FAKE_KEYS, RecordedRequest, StandIn

__all__ = ["DEFAULT_DIMENSIONS", "FAKE_KEYS", "RecordedRequest", "StandIn", "steps"]
