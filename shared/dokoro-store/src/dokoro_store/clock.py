"""One clock for the whole store: UTC, spoken as ISO-8601 with a ``Z`` in the API.

Everything that needs "now" asks a :class:`Clock`, so tests can freeze or move time and
every timestamp the store writes has one format.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

__all__ = [
    "Clock",
    "FrozenClock",
    "format_duration",
    "iso",
    "iso_week_dir",
    "parse_iso",
    "slug",
]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class Clock:
    """The real UTC clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FrozenClock(Clock):
    """A clock that stands still until moved; for tests and replays."""

    def __init__(self, at: datetime) -> None:
        self._at = at.astimezone(UTC)

    def now(self) -> datetime:
        return self._at

    def advance(self, delta: timedelta) -> None:
        self._at += delta

    def set(self, at: datetime) -> None:
        self._at = at.astimezone(UTC)


def iso(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``: the one timestamp format of the API."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """Parse an ISO-8601 date or date-time; naive values are taken as UTC.

    Accepts ``2026-05-12``, ``2026-05-12T14:32:00Z``, ``2026-05-12 14:32:00`` and offsets.
    Raises ``ValueError`` with the expected format when the text is not a date.
    """
    value = text.strip()
    try:
        if _DATE_ONLY.match(value):
            return datetime.fromisoformat(value).replace(tzinfo=UTC)
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO-8601 date; use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def slug(moment: datetime) -> str:
    """The file-name slug ``YYYY-MM-DD-HHhMM-<weekday>`` in UTC (reference §3.4)."""
    utc = moment.astimezone(UTC)
    return f"{utc:%Y-%m-%d-%Hh%M}-{_WEEKDAYS[utc.weekday()]}"


def iso_week_dir(day: date) -> str:
    """``YYYY-Www`` with the ISO week-year (Dec 29-31 may belong to week 1 of the next year)."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def format_duration(minutes: int) -> str:
    """``Xh Ym``, ``Xh`` or ``Ym``."""
    hours, rest = divmod(max(0, minutes), 60)
    if hours and rest:
        return f"{hours}h {rest}m"
    if hours:
        return f"{hours}h"
    return f"{rest}m"
