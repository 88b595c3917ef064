"""Reciprocal Rank Fusion of ranked lists, keyed by document (reference §4.4, bug §7.16 fixed).

``rrf(d) = Σ_leg 1 / (k + rank_leg(d))`` with 0-based ranks and ``k = 60``; a leg that misses the
document adds nothing. A document reached through several chunks keeps its BEST chunk (the
reference overwrote the vector rank with the worse one): callers dedupe chunks to documents
with :func:`best_per_document` before fusing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "DEFAULT_FUSION",
    "RRF_K",
    "Fused",
    "FusionSettings",
    "best_per_document",
    "quantile_from_top",
    "reciprocal_rank_fusion",
    "rescale",
]

RRF_K = 60
T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Fused:
    key: str
    score: float
    ranks: tuple[int | None, ...]  # 0-based rank in each leg, None when the leg missed it


def best_per_document(items: Iterable[T], key: Callable[[T], K]) -> list[T]:
    """The first (best-ranked) item of each key, in order."""
    seen: set[K] = set()
    out: list[T] = []
    for item in items:
        k = key(item)
        if k in seen:
            continue
        seen.add(k)
        out.append(item)
    return out


def reciprocal_rank_fusion(legs: Sequence[Sequence[str]], k: int = RRF_K) -> list[Fused]:
    """Fuse ranked lists of document ids; best first (ties: better best rank, then id)."""
    ranks: dict[str, list[int | None]] = {}
    for leg_index, leg in enumerate(legs):
        for rank, doc_id in enumerate(leg):
            slot = ranks.setdefault(doc_id, [None] * len(legs))
            if slot[leg_index] is None:
                slot[leg_index] = rank
    fused = [
        Fused(doc_id, sum(1.0 / (k + r) for r in slot if r is not None), tuple(slot)) for doc_id, slot in ranks.items()
    ]
    fused.sort(key=lambda f: (-f.score, min(r for r in f.ranks if r is not None), f.key))
    return fused


@dataclass(frozen=True)
class FusionSettings:
    """The tuned constants of hybrid search's score fusion (:func:`.hybrid.fuse_scores`).

    Search has one path and fuses with :data:`DEFAULT_FUSION`; a bench that turns a part off builds
    its ranking from the public pieces (the legs, :func:`.hybrid.fuse_scores` with other settings,
    :func:`.rerank.features`) — ``bench/locomo_retrieval.py``.

    Tuned on LoCoMo conversations 0-3 only (docs/benchmarks.md reports 4-6 and the whole split apart).
    """

    depth: int = 50  # candidates per leg
    text_weight: float = 2.0  # × bm25 relative to the query's best full-text hit
    vector_weight: float = 1.0  # × cosine rescaled between the vector leg's floor (0) and best (1)
    vector_floor: float = 1.0  # the floor: the cosine at this quantile of the vector leg, from the top
    feedback_weight: float = 0.3  # pseudo-relevance feedback: the query vector moved toward the top hits
    neighbour_weight: float = 0.5  # an entry gains this × the best score of the entries beside it
    neighbour_decay: float = 1.0  # two places away: this × neighbour_weight
    graph_weight: float = 1.0  # documents the graph links to entities named in the query (half a top full-text match)


DEFAULT_FUSION = FusionSettings()


def rescale(values: dict[str, float], floor: float, best: float) -> dict[str, float]:
    """Each value mapped so ``floor`` is 0 and ``best`` is 1 (clamped to [0, 1])."""
    span = best - floor
    if span <= 1e-9:
        return {key: (1.0 if value >= best else 0.0) for key, value in values.items()}
    return {key: min(1.0, max(0.0, (value - floor) / span)) for key, value in values.items()}


def quantile_from_top(values: Sequence[float], q: float) -> float:
    """The value at share ``q`` of a list ranked best first (0 = the best, 1 = the last)."""
    if not values:
        return 0.0
    ordered = sorted(values, reverse=True)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]
