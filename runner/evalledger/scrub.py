"""The PII scrubber: ``from evalledger.scrub import scrub_pii``.

A stable import path for application code; the capture suite (suites/capture/scrub.py) does the work.
"""

from .suites.capture.scrub import scrub_pii

__all__ = ["scrub_pii"]
