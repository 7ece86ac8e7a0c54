"""Whether capture is on, and whether it scrubs: seed 001's configuration resolution."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from evalledger.core import reader
from evalledger.core.embedded import evalledger_home

log = logging.getLogger("evalledger.capture")


@dataclass(frozen=True)
class Settings:
    """What the configuration resolves to, and why."""

    capture: bool
    scrub_pii: bool
    source: str


def resolve_settings(home: Path | None = None, environ: dict | None = None) -> Settings:
    """Resolve eval.capture and eval.scrub_pii exactly as seed 001 does.

    1. ``eval.capture: true`` in ``$EVALLEDGER_HOME/config.json`` -> on
    2. ``eval.capture: false`` there -> off (overrides the environment variable)
    3. ``EVALLEDGER_CONTRIBUTOR_MODE`` is exactly ``1`` -> on
    4. otherwise off.

    Only JSON booleans count: any other value of eval.capture (or an unreadable file) is as if it
    were absent. ``eval.scrub_pii`` is true unless it is the JSON boolean false.
    """
    home = home or evalledger_home()
    environ = os.environ if environ is None else environ
    section: dict = {}
    ignored = []  # why capture is off when someone may have meant it on
    path = home / "config.json"
    if path.exists():
        try:
            loaded = reader.read_json(path, "config file").value
            if isinstance(loaded, dict) and isinstance(loaded.get("eval"), dict):
                section = loaded["eval"]
        except reader.InputError as exc:
            log.warning("evalledger capture: ignoring %s", exc)
            ignored.append("config.json is not readable JSON")
    scrub = section.get("scrub_pii") is not False
    capture = section.get("capture")
    if capture is True:
        return Settings(True, scrub, "config.json eval.capture = true")
    if capture is False:
        return Settings(False, scrub, "config.json eval.capture = false")
    if environ.get("EVALLEDGER_CONTRIBUTOR_MODE") == "1":
        return Settings(True, scrub, "EVALLEDGER_CONTRIBUTOR_MODE=1")
    if "capture" in section:
        ignored.append(f"config.json eval.capture {json.dumps(capture)} is not a JSON boolean")
    if environ.get("EVALLEDGER_CONTRIBUTOR_MODE") is not None:
        ignored.append(f"EVALLEDGER_CONTRIBUTOR_MODE={json.dumps(environ['EVALLEDGER_CONTRIBUTOR_MODE'])} "
                       "is not exactly 1")
    return Settings(False, scrub, "; ".join([*ignored, "default (off)"]))


def spool_path(home: Path | None = None) -> Path:
    """Where rows the database could not take yet wait: $EVALLEDGER_HOME/capture/spool.ndjson."""
    return (home or evalledger_home()) / "capture" / "spool.ndjson"
