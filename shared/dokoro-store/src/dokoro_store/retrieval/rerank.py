"""The second stage of hybrid search: a small learned combination of generic features.

No cross-encoder's weights can be had offline from a package registry, so the best candidates of
the score fusion (:mod:`.hybrid`) are re-ordered by a linear model over features any document has:

- ``text``: full-text score relative to the best hit; ``vector``: the rescaled cosine;
- ``lift``: what the thread neighbours added; ``graph``: linked to an entity named in the query;
- ``static``: the cosine of a second, independent embedding (the bundled static model, computed
  here for the candidates only: a different view of meaning than the transformer's), rescaled
  over the candidates — only when vectors are in use (``DOKORO_EMBEDDER=none`` means none) and
  there are at least :data:`_MIN_FOR_SCALE` candidates to rescale over;
- ``coverage``: the share of the query's content terms the document contains.

The new score is the fused score plus a weighted sum of these features. The weights were chosen
once by ``bench/fit_reranker.py`` — a grid search maximising R@10 on LoCoMo conversations 0-3 only,
checked leaving one conversation out — and are fixed here; the figures reported for conversations
4-6 are unseen by the fit (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dokoro_store.retrieval.planner import PlannedQuery, is_cjk

if TYPE_CHECKING:
    from dokoro_store.retrieval.hybrid import Scored

__all__ = ["FEATURES", "RERANKER_LABEL", "RERANK_DEPTH", "WEIGHTS", "features", "rerank"]

RERANK_DEPTH = 30  # candidates re-ordered (at least the page asked for)
FEATURES = ("text", "vector", "lift", "graph", "static", "coverage")
# Added to the fused score, one per FEATURES entry (bench/fit_reranker.py, LoCoMo conversations 0-3).
WEIGHTS: tuple[float, ...] = (0.0, 0.0, 0.2, 0.0, 0.75, 0.0)
RERANKER_LABEL = "linear re-ranker over fused candidates (text, vector, neighbours, graph, static cosine, coverage)"

Texts = Callable[[Sequence[str]], dict[str, str]]
_MIN_FOR_SCALE = 5


def _present(term: str, text: str) -> bool:
    if is_cjk(term) or " " in term:
        return term in text
    stem = term[: max(3, len(term) - 2)] if len(term) > 4 else term
    return re.search(r"(?<!\w)" + re.escape(stem), text) is not None


def coverage(planned: PlannedQuery, text: str) -> float:
    """The share of the query's content terms found in ``text`` (0 when the query has none)."""
    terms = [*planned.terms, *planned.phrases, *planned.cjk]
    if not terms:
        return 0.0
    lowered = text.lower()
    return sum(1 for term in terms if _present(term, lowered)) / len(terms)


def _static_cosines(query: str, texts: list[str]) -> list[float] | None:
    from dokoro_store.errors import EmbedderUnavailableError
    from dokoro_store.retrieval.embedders import static_available

    if len(texts) < _MIN_FOR_SCALE or not static_available()[0]:
        return None
    from dokoro_store.retrieval.static import StaticEmbedder

    try:
        embedder = StaticEmbedder()
        vectors = embedder.embed([query, *texts])
    except EmbedderUnavailableError:
        return None
    scores = vectors[1:] @ vectors[0]
    low, high = float(scores.min()), float(scores.max())
    span = high - low
    return [float((s - low) / span) if span > 1e-9 else 1.0 for s in scores]


def features(
    planned: PlannedQuery, query: str, candidates: Sequence[Scored], texts: dict[str, str], *, vectors: bool = True
) -> list[list[float]]:
    """One row of :data:`FEATURES` per candidate (``vectors=False``: no embedding at all)."""
    bodies = [texts.get(c.doc_id, "") for c in candidates]
    static = (_static_cosines(query, bodies) if vectors else None) or [0.0] * len(candidates)
    rows = []
    for candidate, body, static_cosine in zip(candidates, bodies, static, strict=True):
        rows.append(
            [
                candidate.text,
                candidate.vector,
                candidate.lift,
                1.0 if candidate.graph else 0.0,
                static_cosine,
                coverage(planned, body),
            ]
        )
    return rows


def rerank(
    planned: PlannedQuery,
    query: str,
    candidates: list[Scored],
    texts: Texts,
    limit: int = 10,
    *,
    vectors: bool = True,
) -> list[Scored]:
    """The candidates with the best :data:`RERANK_DEPTH` (or ``limit``) re-ordered by the fitted model.

    The re-ordered block keeps scores above the rest, so scores still fall with rank.
    """
    depth = max(RERANK_DEPTH, limit)
    head, tail = candidates[:depth], candidates[depth:]
    if len(head) < 2:
        return candidates
    rows = features(planned, query, head, texts([c.doc_id for c in head]), vectors=vectors)
    values = [
        c.score + sum(w * x for w, x in zip(WEIGHTS, row, strict=True)) for c, row in zip(head, rows, strict=True)
    ]
    floor = min(values)
    tail_top = max((c.score for c in tail), default=0.0)
    for candidate, value in zip(head, values, strict=True):
        # Shifted above the tail: the block's order is the model's, its scores stay the highest.
        candidate.score = tail_top + 1e-6 + (value - floor)
    head.sort(key=lambda c: (-c.score, c.doc_id))
    return head + tail
