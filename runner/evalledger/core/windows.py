"""Windows over captured rows, as `export` and `run replay` take them: ``[since, until)`` on
``created_at``, ``--since`` a duration back from the window's end (``7d``) or an ISO 8601
timestamp, ``--until`` a timestamp; bounds printed in UTC with microseconds, ready to paste back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

def capture_bound(conn) -> datetime:
    """The exclusive end of a window over captured rows, on the database's clock: every row stamped
    before it is committed (capture_export_bound_v2; export, run replay and catalog draft take it so)."""
    from evalledger.core import queries

    conn.execute(queries.get("capture_window_lock_timeout"))
    return conn.execute(queries.get("capture_window_bound")).fetchone()[0]


_DURATION = re.compile(r"^([0-9]{1,9})([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Since:
    """--since: a duration back from the export bound, or an absolute timestamp."""

    duration: timedelta | None = None
    at: datetime | None = None

    def resolve(self, bound: datetime) -> datetime | None:
        """The inclusive lower bound for an export whose bound is `bound`."""
        if self.duration is not None:
            return bound - self.duration
        return self.at


def parse_timestamp(text: str) -> datetime:
    """An ISO 8601 timestamp; without an offset it is UTC."""
    value = datetime.fromisoformat(text.strip())
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def parse_since(text: str) -> Since:
    """7d, 24h, 30m, 45s, 2w, or an ISO 8601 timestamp; ValueError otherwise."""
    match = _DURATION.match(text.strip())
    if match:
        return Since(duration=timedelta(**{_UNITS[match.group(2)]: int(match.group(1))}))
    return Since(at=parse_timestamp(text))


def iso(value: datetime | None) -> str:
    """A bound as printed on stderr: UTC, microseconds, Z (what --since and --until accept)."""
    if value is None:
        return "-infinity"
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
