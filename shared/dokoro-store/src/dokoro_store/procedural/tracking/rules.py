"""The domain rules of tracking: statuses and the transitions between them, the enumerations of
the reference (§2.16), ids, and the validation of what agents pass in.

Transitions live here, in the store, so every way of changing an item (a tool, a hand edit of
its rendering, a restore) obeys the same rules.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from dokoro_store.clock import slug
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.walls.secrets import redact_all

__all__ = [
    "CATEGORIES",
    "COMPLEXITIES",
    "FEATURE_STATUSES",
    "ISSUE_STATUSES",
    "PRIORITIES",
    "PRIORITY_ICON",
    "PRIORITY_RANK",
    "STATUSES",
    "TRANSITIONS",
    "check_transition",
    "clean_text",
    "clean_texts",
    "feature_base_id",
    "iso_week",
    "issue_base_id",
    "one_of",
    "title_key",
    "title_slug",
    "week_bounds",
]

ISSUE_STATUSES = ("pending", "active", "resolved", "archived")
FEATURE_STATUSES = ("ideas", "planned", "active", "completed", "archived")
STATUSES = {"issue": ISSUE_STATUSES, "feature": FEATURE_STATUSES}
CATEGORIES = ("bug", "enhancement", "research", "question")
COMPLEXITIES = ("trivial", "simple", "moderate", "complex", "epic")
PRIORITIES = ("low", "medium", "high", "critical")
PRIORITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}
PRIORITY_ICON = {"critical": "🔴", "high": "🟠", "medium": "🟡", "low": "🟢"}

# status → the statuses it may move to, per kind. Archived items are read-only.
TRANSITIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "issue": {
        "pending": ("active", "resolved", "archived"),
        "active": ("pending", "resolved", "archived"),
        "resolved": ("active", "archived"),  # work on a resolved issue reopens it
        "archived": (),
    },
    "feature": {
        "ideas": ("planned", "active", "archived"),
        "planned": ("planned", "active", "archived"),  # planning again rewrites the plan
        "active": ("completed", "archived"),
        "completed": ("active", "archived"),
        "archived": (),
    },
}

# What the agent calls to reach a status, for error messages.
_HOW = {
    ("issue", "active"): "dokoro_issue_work",
    ("issue", "resolved"): "dokoro_issue_complete",
    ("feature", "planned"): "dokoro_feature_plan",
    ("feature", "active"): "dokoro_feature_start",
}

MAX_TITLE = 300
MAX_TEXT = 20_000
_ID_SLUG_WORDS = 5
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def check_transition(kind: str, item_id: str, current: str, target: str, *, verb: str) -> None:
    """Refuse a move the rules do not allow, saying where the item stands and what it can do."""
    allowed = TRANSITIONS[kind][current]
    if target in allowed:
        return
    if current == "archived":
        raise InvalidArgumentError(
            f"{kind} {item_id} is archived and read-only; {verb} is not possible. Add a new {kind} instead."
        )
    if current == target:
        raise InvalidArgumentError(f"{kind} {item_id} is already {current}; nothing to {verb}.")
    reachable = [f"{status} ({_HOW[(kind, status)]})" if (kind, status) in _HOW else status for status in allowed]
    raise InvalidArgumentError(
        f"{kind} {item_id} is {current}; it cannot go to {target} ({verb}). From {current} it can go to: "
        f"{', '.join(reachable)}."
    )


def one_of(value: str, allowed: tuple[str, ...], what: str) -> str:
    cleaned = (value or "").strip().lower()
    if cleaned not in allowed:
        raise InvalidArgumentError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return cleaned


def clean_text(value: str | None, what: str, *, required: bool = False, limit: int = MAX_TEXT) -> str | None:
    """Stripped text, or None when blank (refused when ``required``); refused when too long."""
    text = (value or "").strip()
    if not text:
        if required:
            raise InvalidArgumentError(f"{what} must not be empty")
        return None
    if len(text) > limit:
        raise InvalidArgumentError(f"{what} is {len(text)} characters; at most {limit}")
    return text


def clean_texts(*values: str | None) -> tuple[list[str | None], tuple[str, ...]]:
    """Every field an agent wrote, with secrets redacted (one write path: this function)."""
    return redact_all(values)


def title_slug(title: str, words: int = _ID_SLUG_WORDS) -> str:
    """The first ``words`` words of the title, slugged (the reference's file-name suffix)."""
    parts = [p for p in _NOT_SLUG.sub(" ", title.lower()).split() if p][:words]
    return "-".join(parts)[:60].strip("-")


def title_key(title: str) -> str:
    """A title folded for duplicate detection: lower case, punctuation and spacing ignored."""
    return " ".join(_NOT_SLUG.sub(" ", title.lower()).split())[:200]


def issue_base_id(now: datetime) -> str:
    """``YYYY-MM-DD-HHhMM-<weekday>`` (UTC), the reference's issue id."""
    return slug(now)


def feature_base_id(now: datetime) -> str:
    return f"feature-{now:%Y%m%d-%H%M%S}"


def iso_week(day: date) -> tuple[int, int]:
    """(ISO week-year, ISO week number): Dec 29-31 may be week 1 of the next year."""
    year, week, _ = day.isocalendar()
    return year, week


def week_bounds(year: int, week: int) -> tuple[date, date]:
    """Monday and Sunday of ISO week ``week`` of ISO week-year ``year``; refuses a week the year lacks."""
    if not 1 <= year <= 9999:
        raise InvalidArgumentError(f"year must be a four-digit ISO week-year; got {year}")
    try:
        monday = date.fromisocalendar(year, week, 1)
        sunday = date.fromisocalendar(year, week, 7)
    except ValueError:
        last = date(year, 12, 28).isocalendar()[1]
        raise InvalidArgumentError(
            f"week {week} does not exist in ISO week-year {year}: weeks run from 1 to {last}"
        ) from None
    return monday, sunday
