"""Pseudo-relevance feedback on the full-text leg (RM3-style query expansion).

The best few full-text hits are taken as relevant: the words they share that the query lacks (each
weighted by how much of the best hits it makes up and by how rare it is among all the leg's hits) form
a second query, and its hits are mixed into the leg: ``(1 - weight) × the query's score + weight ×
the expansion's score``, both relative to their best hit. A document only the expansion finds joins
the leg with its share alone.

It costs a second full-text query and a read of the hits' texts, so it is off by default
(``FusionSettings.text_feedback_weight``); ``bench/locomo_retrieval.py --rows +text-feedback``
measures it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from dokoro_store.retrieval.fulltext import TextHit
from dokoro_store.retrieval.planner import STOPWORDS, PlannedQuery

__all__ = ["FEEDBACK_DOCS", "FEEDBACK_TERMS", "expansion_terms", "mix"]

FEEDBACK_DOCS = 3  # the best hits read as relevant
FEEDBACK_TERMS = 5  # words added
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS]


def _known(term: str, planned: PlannedQuery) -> bool:
    """The term (or a word sharing its stem) is already in the query."""
    stem = term[: max(3, len(term) - 2)]
    return any(t.startswith(stem) or term.startswith(t[: max(3, len(t) - 2)]) for t in planned.terms)


def expansion_terms(
    planned: PlannedQuery,
    texts: Sequence[str],
    scores: Sequence[float],
    *,
    docs: int = FEEDBACK_DOCS,
    count: int = FEEDBACK_TERMS,
) -> tuple[str, ...]:
    """The ``count`` words that best describe the first ``docs`` of ``texts`` (best hit first) beyond the query.

    A word's weight: Σ over those hits of (its share of the hit's words × the hit's score), times its
    rarity among all ``texts`` (``log((n + 1) / (found + 0.5))``): a word every hit holds says nothing.
    Only words of letters (three or more), no stop words, none the query already has.
    """
    if not texts or planned.empty:
        return ()
    bags = [Counter(_words(text)) for text in texts]
    seen: Counter[str] = Counter()
    for bag in bags:
        seen.update(bag.keys())
    n = len(bags)
    weight: dict[str, float] = {}
    for bag, score in zip(bags[:docs], scores[:docs], strict=False):
        total = sum(bag.values())
        if not total:
            continue
        for word, tf in bag.items():
            weight[word] = weight.get(word, 0.0) + score * tf / total
    ranked = sorted(
        ((w * math.log((n + 1) / (seen[word] + 0.5)), word) for word, w in weight.items() if not _known(word, planned)),
        key=lambda item: (-item[0], item[1]),
    )
    return tuple(word for value, word in ranked[:count] if value > 0)


def mix(original: Sequence[TextHit], expanded: Sequence[TextHit], weight: float, limit: int) -> list[TextHit]:
    """The leg's hits with the expansion's mixed in, best first, scores relative to the best (1.0)."""
    if not expanded or weight <= 0:
        return list(original)
    scores: dict[str, float] = {}
    via: dict[str, str] = {}
    for hit in original:
        scores[hit.doc_id] = (1 - weight) * hit.score
        via[hit.doc_id] = hit.via
    for hit in expanded:
        scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + weight * hit.score
        via.setdefault(hit.doc_id, hit.via)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    top = ordered[0][1] if ordered and ordered[0][1] > 0 else 1.0
    return [TextHit(doc_id, score / top, via[doc_id]) for doc_id, score in ordered]
