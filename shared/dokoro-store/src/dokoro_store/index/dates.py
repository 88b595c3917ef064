"""Calendar dates in text, and how far a text's dates lie from the period a query names.

A question that names a period ("in May 2023", "on 8 May, 2023", "in June", "2022-11-03") is best
answered by a text dated in or near it: a chat turn whose session date is that day, a note titled
with it. :func:`query_period` reads the period a query names, :func:`text_dates` the dates a text
holds (its title's included), and :func:`closeness` turns the gap between them into a feature of the
second stage (:mod:`.rerank`): 1 inside the period, falling with the days outside it.

English month names (full or three letters), ISO dates and ``2023年5月8日``; relative expressions ("last week",
"yesterday") need the moment the question is asked and the text was written, which a stored text
rarely says, so they are left to the ``temporal`` feature. A month name alone is read as a date in a
query only after a preposition ("in June", "since May"), and in a text only beside a day or a year,
so the verb *may* is never a month. Pure functions; never raise on any input.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

__all__ = ["Period", "closeness", "query_period", "text_dates"]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

# Most specific first; every pattern names the groups it has.
_ISO = re.compile(r"(?<!\d)" + _YEAR + r"-(?P<mm>[01]\d)-(?P<dd>[0-3]\d)(?!\d)")
# 2023年5月8日 (Chinese, Japanese): the day is optional.
_CJK_DATE = re.compile(r"(?<!\d)" + _YEAR + r"\s*年\s*(?P<mm>1[0-2]|0?[1-9])\s*月(?:\s*(?P<dd>[0-3]?\d)\s*日)?")
_DAY_MONTH_YEAR = re.compile(r"(?<!\w)" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s+" + _YEAR + r"(?!\d)", re.I)
_MONTH_DAY_YEAR = re.compile(r"(?<!\w)" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"(?!\d)", re.I)
_MONTH_YEAR = re.compile(r"(?<!\w)" + _MONTH + r",?\s+(?:of\s+)?" + _YEAR + r"(?!\d)", re.I)
_DAY_MONTH = re.compile(r"(?<!\w)" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?!\w)", re.I)
_MONTH_DAY = re.compile(r"(?<!\w)" + _MONTH + r"\s+" + _DAY + r"(?![\w:])", re.I)
_BARE_MONTH = re.compile(
    r"(?<!\w)(?:in|during|since|by|until|till|before|after|early|late|mid|of|this|last|next)[\s-]+"
    + _MONTH
    + r"(?!\w)",
    re.I,
)
_BARE_YEAR = re.compile(r"(?<![\w-])" + _YEAR + r"(?![\w-])")

# The closeness halves every this many days outside the period.
HALF_DAYS = 30.0


class Period:
    """The days a query names: ``start`` to ``end`` inclusive; ``year=None`` when it named no year."""

    __slots__ = ("day", "month", "year")

    def __init__(self, year: int | None, month: int | None = None, day: int | None = None) -> None:
        self.year, self.month, self.day = year, month, day

    def __repr__(self) -> str:
        return f"Period(year={self.year}, month={self.month}, day={self.day})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Period) and (self.year, self.month, self.day) == (other.year, other.month, other.day)

    def __hash__(self) -> int:
        return hash((self.year, self.month, self.day))

    def bounds(self, year: int) -> tuple[dt.date, dt.date] | None:
        """The first and last day of the period (a period without a year: in ``year``)."""
        y = self.year or year
        try:
            if self.month is None:
                return dt.date(y, 1, 1), dt.date(y, 12, 31)
            if self.day is None:
                return dt.date(y, self.month, 1), dt.date(y, self.month, calendar.monthrange(y, self.month)[1])
            day = dt.date(y, self.month, self.day)
        except ValueError:
            return None
        return day, day


def _date(year: str | None, month: str | None, day: str | None) -> dt.date | None:
    try:
        m = int(month) if month and month.isdigit() else _MONTHS[(month or "").lower().rstrip(".")]
        return dt.date(int(year or 0), m, int(day) if day else 1)
    except (KeyError, ValueError):
        return None


_ANY_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_FULL = (_ISO, _CJK_DATE, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _MONTH_YEAR)


def text_dates(text: str, limit: int = 8) -> list[dt.date]:
    """The full dates (day, month and year; or month and year, read as its first day) in ``text``.

    Every full date holds a year, so only the few characters around each year are read (the month
    patterns are slow to try at every place of a long text).
    """
    found: list[dt.date] = []
    for year in _ANY_YEAR.finditer(text):
        offset = max(0, year.start() - 24)
        window = text[offset : year.end() + 10]
        for pattern in _FULL:
            match = next((m for m in pattern.finditer(window) if m.start("year") + offset == year.start()), None)
            if match is None:
                continue
            groups = match.groupdict()
            date = _date(
                groups.get("year"), groups.get("mm") or groups.get("month"), groups.get("dd") or groups.get("day")
            )
            if date is not None:
                found.append(date)
                break
        if len(found) >= limit:
            break
    return found


def query_period(query: str) -> Period | None:
    """The most specific period ``query`` names (a day, a month, a year), or None."""
    for pattern in (_ISO, _CJK_DATE, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        match = pattern.search(query)
        if match:
            groups = match.groupdict()
            day = groups.get("dd") or groups.get("day")
            date = _date(groups.get("year"), groups.get("mm") or groups.get("month"), day)
            if date is not None:
                return Period(date.year, date.month, date.day if day else None)
    match = _MONTH_YEAR.search(query)
    if match:
        return Period(int(match.group("year")), _MONTHS[match.group("month").lower()])
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        match = pattern.search(query)
        if match and _date("2000", match.group("month"), match.group("day")) is not None:
            return Period(None, _MONTHS[match.group("month").lower()], int(match.group("day")))
    match = _BARE_MONTH.search(query)
    if match:
        return Period(None, _MONTHS[match.group("month").lower()])
    match = _BARE_YEAR.search(query)
    if match:
        return Period(int(match.group("year")))
    return None


def closeness(period: Period | None, dates: list[dt.date]) -> float:
    """1 when one of ``dates`` falls in ``period``, halving every :data:`HALF_DAYS` days outside it; 0 without both.

    A period without a year is placed in each date's own year.
    """
    if period is None or not dates:
        return 0.0
    best = 0.0
    for date in dates:
        bounds = period.bounds(date.year)
        if bounds is None:
            continue
        start, end = bounds
        gap = (start - date).days if date < start else (date - end).days if date > end else 0
        best = max(best, 0.5 ** (gap / HALF_DAYS))
    return best
