"""The application's capture API: ``from evalledger.capture import capture_candidate``.

A stable import path for application code; the capture suite (suites/capture) does the work.
"""

from .suites.capture.api import capture_candidate, close, configure, counts, flush

__all__ = ["capture_candidate", "close", "configure", "counts", "flush"]
