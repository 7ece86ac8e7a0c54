"""The dashboards' filters: a brain, a range of whole UTC months the runs started in, a run trigger.

The by-month panel tables hold months, so a range is of whole months (from the first day of the
first to the last day of the last); the per-run panels read the same range from the runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from evalledger.core.errors import EvalledgerError

TRIGGERS = ("pre_launch", "quarterly", "prompt_change", "model_promotion", "on_demand")
_MONTH = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")


def month_of(text: str, what: str) -> date:
    """The first day of the month text names (YYYY-MM, or a date YYYY-MM-DD in it), or an error
    naming what it was meant to be."""
    found = _MONTH.match(text.strip())
    try:
        if not found:
            raise ValueError
        day = date(int(found[1]), int(found[2]), int(found[3] or 1))
    except ValueError:
        raise EvalledgerError(f"{what} {text!r} is not a month (YYYY-MM) or a date (YYYY-MM-DD)") from None
    if day.year < 1970:
        raise EvalledgerError(f"{what} {text!r} reaches back before 1970")
    return day.replace(day=1)


@dataclass(frozen=True)
class Filters:
    """What the panels are filtered by; None for all."""

    brain: str | None = None
    from_month: date | None = None
    to_month: date | None = None
    trigger: str | None = None

    @classmethod
    def parse(cls, brain: str | None, since: str | None, until: str | None, trigger: str | None,
              brains: list[str], names: tuple[str, str, str, str] = ("brain", "from", "to", "trigger")) -> "Filters":
        """Filters from text (a form's, or the command line's), each checked: an EvalledgerError
        names the first that is wrong, by the name its reader gave it (names)."""
        brain = (brain or "").strip() or None
        if brain is not None and brain not in brains:
            raise EvalledgerError(f"{names[0]} {brain!r} is not a registered brain ({', '.join(brains) or 'none yet'})")
        trigger = (trigger or "").strip() or None
        if trigger is not None and trigger not in TRIGGERS:
            raise EvalledgerError(f"{names[3]} {trigger!r} is none of {', '.join(TRIGGERS)}")
        start = month_of(since, names[1]) if since and since.strip() else None
        end = month_of(until, names[2]) if until and until.strip() else None
        if start and end and end < start:
            raise EvalledgerError(f"{names[2]} {end:%Y-%m} is before {names[1]} {start:%Y-%m}")
        return cls(brain, start, end, trigger)

    def params(self) -> dict:
        """The named queries' parameters."""
        return {"brain": self.brain, "from_month": self.from_month, "to_month": self.to_month,
                "trigger": self.trigger}

    def query_string(self) -> dict[str, str]:
        """The filters as a form's fields (empty ones left out)."""
        shown = {"brain": self.brain, "from": self.from_month and f"{self.from_month:%Y-%m}",
                 "to": self.to_month and f"{self.to_month:%Y-%m}", "trigger": self.trigger}
        return {k: v for k, v in shown.items() if v}

    def describe(self) -> str:
        """The filters in words, for a page's or a report's heading."""
        months = ("every month" if not (self.from_month or self.to_month)
                  else f"runs started {self.from_month:%Y-%m} to {self.to_month:%Y-%m}" if self.from_month and self.to_month
                  else f"runs started from {self.from_month:%Y-%m}" if self.from_month
                  else f"runs started up to {self.to_month:%Y-%m}")
        return "; ".join([f"brain {self.brain}" if self.brain else "every brain", months,
                          f"trigger {self.trigger}" if self.trigger else "every trigger"])
