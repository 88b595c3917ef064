"""Filter-as-you-type for ``dokoro browse`` (reference §5, "fuzzy filter score").

An exact (case-insensitive) substring scores 1000, plus 100 at a word boundary, minus its position
(at most 99). Otherwise the query's characters must appear in order: +5 for each one right after
the previous match, +1 otherwise, +3 at a word boundary; a match scoring under twice the query's
length is hidden. Results sort by score, then by their original order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["fuzzy_filter", "fuzzy_score"]

T = TypeVar("T")


def _boundary(text: str, index: int) -> bool:
    return index == 0 or not text[index - 1].isalnum()


def fuzzy_score(query: str, text: str) -> int | None:
    """The score of ``text`` for ``query``, or None when it does not match."""
    needle, hay = query.lower(), text.lower()
    if not needle:
        return 0
    found = hay.find(needle)
    if found >= 0:
        return 1000 + (100 if _boundary(hay, found) else 0) - min(found, 99)
    score, position, previous = 0, 0, -2
    for char in needle:
        index = hay.find(char, position)
        if index < 0:
            return None
        score += 5 if index == previous + 1 else 1
        if _boundary(hay, index):
            score += 3
        previous, position = index, index + 1
    return score if score >= 2 * len(needle) else None


def fuzzy_filter(items: Sequence[T], query: str, text: Callable[[T], str]) -> list[T]:
    """The items matching ``query``, best first (all of them, in order, for an empty query)."""
    if not query:
        return list(items)
    scored = [(fuzzy_score(query, text(item)), order, item) for order, item in enumerate(items)]
    kept = [(score, order, item) for score, order, item in scored if score is not None]
    kept.sort(key=lambda entry: (-entry[0], entry[1]))
    return [item for _score, _order, item in kept]
